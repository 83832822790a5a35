import {
  runDeferred,
  type SqlConnection,
  type SqlStatement,
} from '../../common/sql/sql-connection.js';
import { StatementCache } from '../../common/sql/statement-cache.js';
import type { AccountPnl, Standing } from './rank-math.js';
import type { RankStore } from './rank-sampler.js';

/** A stored rank point. */
export interface RankPointRow {
  time: string;
  rank: number;
  participants: number;
  realized_pnl_cents: number;
}

export interface RankPageFilter {
  /** Keyset: only points after this time (the previous page's last). */
  after?: string;
  /** Inclusive. */
  from?: string;
  /** Exclusive. */
  to?: string;
  limit: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Rank history in one engine database (plain SQL on its connection; the schema is the migration
 * RankHistory1763769600013's). Times are ISO 8601 UTC text, which sorts as time does.
 */
export class RankRepository implements RankStore {
  private readonly latest: SqlStatement;
  private readonly insertSample: SqlStatement;
  private readonly insertPoint: SqlStatement;
  private readonly prunePoints: SqlStatement;
  private readonly pruneSamples: SqlStatement;
  private readonly pages: StatementCache;
  private readonly sums: SqlStatement;
  private readonly sampleAtOrBefore: SqlStatement;
  private readonly pointsAt: SqlStatement;
  private readonly resetsSince: SqlStatement;

  constructor(private readonly db: SqlConnection) {
    this.pages = new StatementCache(db);
    this.latest = db.prepare('SELECT MAX(time) AS time FROM rank_samples');
    this.insertSample = db.prepare(
      'INSERT INTO rank_samples (time, participants, sampled_at) VALUES (?, ?, ?) ON CONFLICT (time) DO NOTHING',
    );
    this.insertPoint = db.prepare(
      'INSERT INTO rank_points (account_id, time, rank, participants, realized_pnl_cents) VALUES (?, ?, ?, ?, ?) ON CONFLICT (account_id, time) DO NOTHING',
    );
    this.prunePoints = db.prepare('DELETE FROM rank_points WHERE time < ?');
    this.pruneSamples = db.prepare('DELETE FROM rank_samples WHERE time < ?');
    // SUM of a bigint is numeric on PostgreSQL (a string to pg): cast back to bigint.
    this.sums = db.prepare(
      'SELECT user_id AS "accountId", CAST(SUM(realized_pnl) AS BIGINT) AS "realizedPnl", COUNT(*) AS positions FROM positions GROUP BY user_id',
    );
    this.sampleAtOrBefore = db.prepare(
      'SELECT time, sampled_at AS "sampledAt" FROM rank_samples WHERE time <= ? ORDER BY time DESC LIMIT 1',
    );
    this.pointsAt = db.prepare(
      'SELECT account_id AS "accountId", realized_pnl_cents AS "realizedPnl" FROM rank_points WHERE time = ?',
    );
    // idx_ledger_resets (partial, type = 'RESET') answers this without scanning the ledger.
    this.resetsSince = db.prepare(
      `SELECT DISTINCT user_id AS "accountId" FROM ledger WHERE type = 'RESET' AND created_at >= ?`,
    );
  }

  /**
   * Every account's realized P&L over its stored positions, flat ones included. Read from the
   * database rather than the engine: the engine rebuilt at a restart loads open positions only,
   * and a closed position is where realized P&L comes from.
   */
  totals(): AccountPnl[] {
    return this.sums.all() as AccountPnl[];
  }

  /**
   * The baseline of a period starting at `timeMs`: each account's realized P&L as recorded at the
   * latest sample at or before it (the participants of then), or null when no sample is that old.
   * An account reset since that sample (paper world) is left out: the reset deleted its positions
   * and the P&L they held, so it counts from 0 again.
   */
  baselineAt(timeMs: number): Map<string, number> | null {
    const sample = this.sampleAtOrBefore.get(iso(timeMs)) as
      { time: string; sampledAt: string } | undefined;
    if (sample === undefined) return null;
    const rows = this.pointsAt.all(sample.time) as { accountId: string; realizedPnl: number }[];
    const reset = this.resetSince(sample.sampledAt);
    const out = new Map<string, number>();
    for (const r of rows) if (!reset.has(r.accountId)) out.set(r.accountId, r.realizedPnl);
    return out;
  }

  /**
   * The accounts reset at or after `at` (ISO), in one query: a reset deletes the account's
   * ledger and writes one RESET row, so an account has at most one, that of its latest reset.
   * At the same millisecond as the sample the order is unknown; either way the account counts
   * from 0 (had the reset come first, the sample would hold nothing of it).
   */
  private resetSince(at: string): Set<string> {
    const rows = this.resetsSince.all(at) as { accountId: string }[];
    return new Set(rows.map((r) => r.accountId));
  }

  latestSampleMs(): number | null {
    const row = this.latest.get() as { time: string | null } | undefined;
    return row?.time == null ? null : Date.parse(row.time);
  }

  record(timeMs: number, points: readonly Standing[], cutoffMs: number, nowMs: number): boolean {
    const time = iso(timeMs);
    return this.db.transaction(() => {
      const claimed = this.insertSample.run(time, points.length, iso(nowMs)).changes === 1;
      if (!claimed) return false;
      // Deferred: on PostgreSQL the points and the prunes go with the COMMIT (one round trip).
      for (const p of points) {
        runDeferred(this.insertPoint, p.accountId, time, p.rank, p.participants, p.realizedPnl);
      }
      const cutoff = iso(cutoffMs);
      runDeferred(this.prunePoints, cutoff);
      runDeferred(this.pruneSamples, cutoff);
      return true;
    })();
  }

  /** One account's points, oldest first. */
  page(accountId: string, f: RankPageFilter): RankPointRow[] {
    const key = `${f.after !== undefined}${f.from !== undefined}${f.to !== undefined}`;
    const stmt = this.pages.get(key, () => {
      const where = ['account_id = @accountId'];
      if (f.after !== undefined) where.push('time > @after');
      if (f.from !== undefined) where.push('time >= @from');
      if (f.to !== undefined) where.push('time < @to');
      return `SELECT time, rank, participants, realized_pnl_cents FROM rank_points WHERE ${where.join(' AND ')} ORDER BY time LIMIT @limit`;
    });
    return stmt.all({
      accountId,
      after: f.after,
      from: f.from,
      to: f.to,
      limit: f.limit,
    }) as RankPointRow[];
  }
}
