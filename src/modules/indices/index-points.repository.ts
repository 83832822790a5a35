import {
  runDeferred,
  type SqlConnection,
  type SqlStatement,
} from '../../common/sql/sql-connection.js';
import type { IndexValue } from './index-math.js';
import { LAST_INSTANT } from '../../common/validation/instant.js';

/** One stored history point, as the table holds it. */
export interface IndexPointRow {
  time: string;
  value_hundredths: number | null;
  market_count: number;
}

/** A market as the indices read it from the engine database. */
export interface MarketRow {
  id: string;
  category: string;
  status: string;
}

export interface PointQuery {
  slug: string;
  /** Exclusive lower bound (the cursor's time). */
  after?: string;
  /** Inclusive lower bound. */
  from?: string;
  /** Exclusive upper bound. */
  to?: string;
  limit: number;
}

/** Where a sampler keeps its points (one engine database). */
export interface IndexPointStore {
  latestTime(): string | null;
  /** Writes the points of one boundary (a point already there stays) and deletes those before `cutoff`. */
  record(time: string, values: readonly IndexValue[], cutoff: string): void;
}

/**
 * index_points and markets of one engine database, by prepared statements on its connection
 * (synchronous: a catch-up runs to its end before any other request is served).
 */
export class IndexPointsRepository implements IndexPointStore {
  private readonly insert: SqlStatement;
  private readonly prune: SqlStatement;
  private readonly latest: SqlStatement;
  private readonly page: SqlStatement;
  private readonly markets: SqlStatement;

  constructor(private readonly db: SqlConnection) {
    this.insert = db.prepare(
      `INSERT INTO index_points (slug, time, value_hundredths, market_count) VALUES (?, ?, ?, ?)
        ON CONFLICT (slug, time) DO NOTHING`,
    );
    this.prune = db.prepare('DELETE FROM index_points WHERE time < ?');
    this.latest = db.prepare('SELECT MAX(time) AS t FROM index_points');
    // Absent bounds are bound as sentinels: '' sorts before every ISO time, and no time is at or
    // after the last millisecond of year 9999 (query values are clamped to it), in any collation.
    this.page = db.prepare(
      `SELECT time, value_hundredths, market_count FROM index_points
        WHERE slug = ? AND time > ? AND time >= ? AND time < ? ORDER BY time LIMIT ?`,
    );
    this.markets = db.prepare('SELECT id, category, status FROM markets');
  }

  latestTime(): string | null {
    return (this.latest.get() as { t: string | null }).t;
  }

  record(time: string, values: readonly IndexValue[], cutoff: string): void {
    this.db.transaction(() => {
      // Deferred: on PostgreSQL the points and the prune are the COMMIT's one round trip.
      for (const v of values) {
        runDeferred(
          this.insert,
          v.slug,
          time,
          v.value === null ? null : Math.round(v.value * 100),
          v.market_count,
        );
      }
      runDeferred(this.prune, cutoff);
    })();
  }

  points(q: PointQuery): IndexPointRow[] {
    return this.page.all(
      q.slug,
      q.after ?? '',
      q.from ?? '',
      q.to ?? LAST_INSTANT,
      q.limit,
    ) as IndexPointRow[];
  }

  allMarkets(): MarketRow[] {
    return this.markets.all() as MarketRow[];
  }
}
