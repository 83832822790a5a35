import { runDeferred, type SqlConnection } from '../../../common/sql/sql-connection.js';
import { iso } from '../../../common/clock/iso.js';

/**
 * The webhook spool of one engine database: committed batches' webhook events, written in the
 * batch's own transaction (so they commit or roll back with the orders they tell of), then moved
 * to the webhook outbox and removed.
 */
export class WebhookSpoolStore {
  private readonly insert;
  private readonly oldest;
  private readonly removeThrough;

  constructor(db: SqlConnection) {
    this.insert = db.prepare<[string, string]>(
      'INSERT INTO webhook_spool (payload, created_at) VALUES (?, ?)',
    );
    this.oldest = db.prepare<[number], { id: number; payload: string }>(
      'SELECT id, payload FROM webhook_spool ORDER BY id LIMIT ?',
    );
    this.removeThrough = db.prepare<[number]>('DELETE FROM webhook_spool WHERE id <= ?');
  }

  /**
   * Stores a batch's serialised webhook events; call inside the batch's transaction (deferred:
   * on PostgreSQL it goes with the COMMIT).
   */
  spool(payload: string, now: number): void {
    runDeferred(this.insert, payload, iso(now));
  }

  /** The oldest spooled batches not yet moved to the outbox, oldest first. */
  spooled(limit: number): { id: number; payload: string }[] {
    return this.oldest.all(limit);
  }

  /** Removes the batches moved to the outbox, through `id`. */
  unspool(id: number): void {
    this.removeThrough.run(id);
  }
}
