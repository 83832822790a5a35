import {
  queryDeferred,
  runDeferred,
  type SqlConnection,
  type SqlStatement,
} from '../../common/sql/sql-connection.js';
import type { Dataset, ExportFormat } from './datasets.js';

export const EXPORT_STATUSES = ['QUEUED', 'RUNNING', 'READY', 'FAILED', 'EXPIRED'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

export interface ExportRow {
  id: string;
  user_id: string;
  dataset: Dataset;
  format: ExportFormat;
  start: string;
  end: string;
  market_ids: string | null;
  status: ExportStatus;
  last_rowid: number;
  counted_rows: number;
  record_count: number | null;
  size_bytes: number | null;
  sha256: string | null;
  error: string | null;
  created_at: string;
  ready_at: string | null;
  expires_at: string | null;
}

const COLS =
  'id, user_id, dataset, format, start, "end", market_ids, status, last_rowid, counted_rows, record_count, size_bytes, sha256, error, created_at, ready_at, expires_at';

/** The export jobs of one world's engine database. */
export class DataExportsRepository {
  private readonly s: Record<string, SqlStatement>;

  constructor(private readonly db: SqlConnection) {
    const p = (sql: string) => db.prepare(sql);
    this.s = {
      insert: p(
        `INSERT INTO data_exports (${COLS}) VALUES (@id, @user_id, @dataset, @format, @start, @end, @market_ids, @status, @last_rowid, @counted_rows, @record_count, @size_bytes, @sha256, @error, @created_at, @ready_at, @expires_at)`,
      ),
      get: p(`SELECT ${COLS} FROM data_exports WHERE id = ?`),
      page: p(`SELECT ${COLS} FROM data_exports WHERE user_id = ? AND id > ? ORDER BY id LIMIT ?`),
      count: p('SELECT COUNT(*) AS n FROM data_exports WHERE user_id = ?'),
      oldestFinished: p(
        `SELECT ${COLS} FROM data_exports WHERE user_id = ? AND status IN ('READY', 'FAILED', 'EXPIRED') ORDER BY id LIMIT 1`,
      ),
      ofUser: p(`SELECT ${COLS} FROM data_exports WHERE user_id = ?`),
      deleteOfUser: p('DELETE FROM data_exports WHERE user_id = ?'),
      queued: p(`SELECT ${COLS} FROM data_exports WHERE status = 'QUEUED' ORDER BY id LIMIT ?`),
      running: p(`SELECT ${COLS} FROM data_exports WHERE status = 'RUNNING'`),
      start: p(`UPDATE data_exports SET status = 'RUNNING' WHERE id = ? AND status = 'QUEUED'`),
      requeue: p(`UPDATE data_exports SET status = 'QUEUED' WHERE status = 'RUNNING'`),
      requeueOne: p(
        `UPDATE data_exports SET status = 'QUEUED' WHERE id = ? AND status = 'RUNNING'`,
      ),
      ready: p(
        `UPDATE data_exports SET status = 'READY', record_count = @record_count, size_bytes = @size_bytes, sha256 = @sha256, ready_at = @ready_at, expires_at = @expires_at WHERE id = @id AND status = 'RUNNING'`,
      ),
      failed: p(
        `UPDATE data_exports SET status = 'FAILED', error = @error WHERE id = @id AND status = 'RUNNING'`,
      ),
      due: p(
        `SELECT ${COLS} FROM data_exports WHERE status = 'READY' AND expires_at <= ? ORDER BY id`,
      ),
      expire: p(`UPDATE data_exports SET status = 'EXPIRED' WHERE id = ? AND status = 'READY'`),
      delete: p('DELETE FROM data_exports WHERE id = ?'),
    };
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  insert(row: ExportRow): void {
    this.s.insert.run(row);
  }

  get(id: string): ExportRow | undefined {
    return this.s.get.get(id) as ExportRow | undefined;
  }

  page(userId: string, after: string, take: number): ExportRow[] {
    return this.s.page.all(userId, after, take) as ExportRow[];
  }

  count(userId: string): number {
    return (this.s.count.get(userId) as { n: number }).n;
  }

  oldestFinished(userId: string): ExportRow | undefined {
    return this.s.oldestFinished.get(userId) as ExportRow | undefined;
  }

  ofUser(userId: string): ExportRow[] {
    return this.s.ofUser.all(userId) as ExportRow[];
  }

  /**
   * Deletes the user's exports inside the caller's transaction, deferred (queryDeferred,
   * runDeferred): answers, once the transaction's next round trip has answered, the rows it
   * deleted (their jobs and files are the caller's to stop and remove after the commit).
   */
  stageDeleteOfUser(userId: string): () => ExportRow[] {
    const rows = queryDeferred(this.s.ofUser, userId);
    runDeferred(this.s.deleteOfUser, userId);
    return () => rows.rows as ExportRow[];
  }

  queued(limit: number): ExportRow[] {
    return this.s.queued.all(limit) as ExportRow[];
  }

  running(): ExportRow[] {
    return this.s.running.all() as ExportRow[];
  }

  /** QUEUED -> RUNNING; false when it is no longer queued (deleted meanwhile). */
  start(id: string): boolean {
    return this.s.start.run(id).changes === 1;
  }

  /** At boot: jobs a crash or shutdown cut short go back to the queue. */
  requeueRunning(): number {
    return this.s.requeue.run().changes;
  }

  /** One job a restart cut short (an ephemeral world's, when the world is next opened). */
  requeue(id: string): boolean {
    return this.s.requeueOne.run(id).changes === 1;
  }

  /**
   * RUNNING -> READY with its figures, in one update; false when the job was deleted meanwhile.
   * `fence` (cluster mode: the world's writer fence) runs first in the same transaction, so a
   * deposed writer never marks a job READY (it throws, and nothing is written).
   */
  ready(
    id: string,
    v: {
      record_count: number;
      size_bytes: number;
      sha256: string;
      ready_at: string;
      expires_at: string;
    },
    fence: ((db: SqlConnection) => void) | null = null,
  ): boolean {
    if (fence === null) return this.s.ready.run({ id, ...v }).changes === 1;
    return this.transaction(() => {
      fence(this.db);
      return this.s.ready.run({ id, ...v }).changes === 1;
    });
  }

  failed(id: string, error: string): boolean {
    return this.s.failed.run({ id, error: error.slice(0, 300) }).changes === 1;
  }

  /** READY exports whose expiry has come. */
  due(nowIso: string): ExportRow[] {
    return this.s.due.all(nowIso) as ExportRow[];
  }

  expire(id: string): boolean {
    return this.s.expire.run(id).changes === 1;
  }

  delete(id: string): boolean {
    return this.s.delete.run(id).changes === 1;
  }
}
