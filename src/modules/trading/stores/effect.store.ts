import {
  queryDeferred,
  runDeferred,
  type SqlConnection,
  type SqlStatement,
} from '../../../common/sql/sql-connection.js';
import { iso } from '../../../common/clock/iso.js';
import type { StoredEffect } from '../applied-keys.js';

/** An Idempotency-Key's effect on an engine: the orders it placed, the ledger references it wrote. */
export interface EffectRecord {
  ownerId: string;
  key: string;
  orderIds: string[];
  referenceIds: string[];
}

/**
 * The engine's `idempotency_effects`: what a request under an Idempotency-Key changed, recorded
 * by the engine runtime inside the transaction of the effect itself ({@link record}); read and
 * cleaned by the Idempotency-Key service, which needs them at boot and after a 5xx but runs no
 * engine.
 */
export class EffectStore {
  private readonly insert: SqlStatement<[string, string, string, string, string]>;
  private readonly byKey: SqlStatement<
    [string, string, string],
    { order_ids: string; reference_ids: string }
  >;
  private readonly ofOwner: SqlStatement<[string, string], { idem_key: string }>;
  private readonly olderThan: SqlStatement<[string]>;
  private readonly ofKey: SqlStatement<[string, string]>;
  private readonly since: SqlStatement<
    [string],
    { owner_id: string; idem_key: string; created_at: string }
  >;

  constructor(db: SqlConnection) {
    this.insert = db.prepare(`INSERT INTO idempotency_effects (owner_id, idem_key, order_ids,
      reference_ids, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (owner_id, idem_key) DO UPDATE
      SET order_ids = excluded.order_ids, reference_ids = excluded.reference_ids,
      created_at = excluded.created_at`);
    this.byKey = db.prepare(
      'SELECT order_ids, reference_ids FROM idempotency_effects WHERE owner_id = ? AND idem_key = ? AND created_at >= ?',
    );
    this.ofOwner = db.prepare(
      'SELECT DISTINCT idem_key FROM idempotency_effects WHERE owner_id = ? AND created_at >= ?',
    );
    this.olderThan = db.prepare('DELETE FROM idempotency_effects WHERE created_at < ?');
    this.ofKey = db.prepare('DELETE FROM idempotency_effects WHERE owner_id = ? AND idem_key = ?');
    this.since = db.prepare(
      'SELECT owner_id, idem_key, created_at FROM idempotency_effects WHERE created_at >= ? ORDER BY created_at',
    );
  }

  /** The keys of every effect recorded since `since` (ISO time), oldest first: what the writer fences. */
  recordedSince(since: string): StoredEffect[] {
    return this.since.all(since).map((r) => ({
      ownerId: r.owner_id,
      key: r.idem_key,
      at: Date.parse(r.created_at),
    }));
  }

  /**
   * Records that the request with this Idempotency-Key changed the engine (replacing the record
   * of an expired earlier use of the key). Call inside the transaction of the effect.
   */
  record(e: EffectRecord, now: number): void {
    runDeferred(
      this.insert,
      e.ownerId,
      e.key,
      JSON.stringify(e.orderIds),
      JSON.stringify(e.referenceIds),
      iso(now),
    );
  }

  /** Forgets what the key's request did (its answer was forgotten: the key is free again). */
  forgetKey(ownerId: string, key: string): void {
    this.ofKey.run(ownerId, key);
  }

  /** The keys whose requests changed this engine for `ownerId` since `since` (ISO time). */
  keysOf(ownerId: string, since: string): string[] {
    return this.ofOwner.all(ownerId, since).map((r) => r.idem_key);
  }

  /**
   * {@link keysOf} read inside the caller's transaction, deferred (queryDeferred): on PostgreSQL
   * it goes with the transaction's next round trip; the keys can be read once that has answered.
   */
  stageKeysOf(ownerId: string, since: string): () => string[] {
    const rows = queryDeferred(this.ofOwner, ownerId, since);
    return () => (rows.rows as { idem_key: string }[]).map((r) => r.idem_key);
  }

  /**
   * What the key's request did since `since` (ISO time, the key's current use: an older effect
   * belongs to an expired earlier use), or null if it changed nothing in this engine.
   */
  effectOf(
    ownerId: string,
    key: string,
    since: string,
  ): { orderIds: string[]; referenceIds: string[] } | null {
    const row = this.byKey.get(ownerId, key, since);
    if (row === undefined) return null;
    return {
      orderIds: JSON.parse(row.order_ids) as string[],
      referenceIds: JSON.parse(row.reference_ids) as string[],
    };
  }

  /** Forgets the effects recorded before `cutoff` (ISO time). */
  forgetBefore(cutoff: string): void {
    this.olderThan.run(cutoff);
  }
}
