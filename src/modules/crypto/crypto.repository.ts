import {
  runDeferred,
  type SqlConnection,
  type SqlStatement,
} from '../../common/sql/sql-connection.js';
import { LAST_INSTANT } from '../../common/validation/instant.js';
import { latestBoundary, retentionCutoff } from '../../common/sampling/boundaries.js';
import {
  CANDLE_INTERVAL_NAMES,
  CANDLE_INTERVALS,
  CANDLE_RETENTION_DAYS,
  type CandleInterval,
} from './crypto-symbols.js';

/** A symbol's latest price as stored. */
export interface StoredPrice {
  symbol: string;
  price_cents: number;
  steps: number;
  as_of: string;
}

/** One price as it arrives (a walk step or a sandbox set), at `at` ms on the service clock. */
export interface PriceTick {
  symbol: string;
  cents: number;
  steps: number;
  at: number;
}

export interface CandleRow {
  bucket: string;
  open_cents: number;
  high_cents: number;
  low_cents: number;
  close_cents: number;
}

export interface CandleQuery {
  symbol: string;
  interval: CandleInterval;
  /** Exclusive lower bound (the cursor's bucket). */
  after?: string;
  /** Inclusive lower bound on the bucket start. */
  from?: string;
  /** Exclusive upper bound on the bucket start. */
  to?: string;
  limit: number;
}

/** One candle's upsert: its bucket's ticks of a record() merged. */
interface CandleUpsert {
  symbol: string;
  interval: CandleInterval;
  bucket: number;
  open: number;
  high: number;
  low: number;
  close: number;
}

/** A crypto market not resolved yet whose close time has come. */
export interface DueMarket {
  id: string;
  index_symbol: string;
  strike_cents: number;
  close_time: string;
}

/**
 * crypto_prices, crypto_candles and the self-resolving markets of one engine database, by
 * prepared statements on its connection (synchronous: a catch-up runs to its end before any other
 * request is served).
 */
export class CryptoRepository {
  private readonly upsertPrice: SqlStatement;
  private readonly upsertCandle: SqlStatement;
  private readonly prune: SqlStatement;
  private readonly prices: SqlStatement;
  private readonly page: SqlStatement;
  private readonly covering: SqlStatement;
  private readonly due: SqlStatement;
  private readonly clearCandles: SqlStatement;
  private readonly clearPrices: SqlStatement;
  /** The bucket each (symbol, interval) last wrote: a new one starting prunes that series. */
  private readonly lastBucket = new Map<string, number>();

  constructor(private readonly db: SqlConnection) {
    this.upsertPrice = db.prepare(
      `INSERT INTO crypto_prices (symbol, price_cents, steps, as_of) VALUES (?, ?, ?, ?)
        ON CONFLICT (symbol) DO UPDATE SET price_cents = excluded.price_cents,
          steps = excluded.steps, as_of = excluded.as_of`,
    );
    // CASE, not SQLite's two-argument MAX/MIN (PostgreSQL's are GREATEST/LEAST); the table name
    // qualifies the existing row's columns, which PostgreSQL requires in DO UPDATE.
    this.upsertCandle = db.prepare(
      `INSERT INTO crypto_candles (symbol, interval, bucket, open_cents, high_cents, low_cents, close_cents)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (symbol, interval, bucket) DO UPDATE SET
          high_cents = CASE WHEN excluded.high_cents > crypto_candles.high_cents
            THEN excluded.high_cents ELSE crypto_candles.high_cents END,
          low_cents = CASE WHEN excluded.low_cents < crypto_candles.low_cents
            THEN excluded.low_cents ELSE crypto_candles.low_cents END,
          close_cents = excluded.close_cents`,
    );
    this.prune = db.prepare(
      'DELETE FROM crypto_candles WHERE symbol = ? AND interval = ? AND bucket < ?',
    );
    this.prices = db.prepare('SELECT symbol, price_cents, steps, as_of FROM crypto_prices');
    // Absent bounds are bound as sentinels, as the index history does: '' sorts before every ISO
    // time, and none is at or after the last millisecond of year 9999.
    this.page = db.prepare(
      `SELECT bucket, open_cents, high_cents, low_cents, close_cents FROM crypto_candles
        WHERE symbol = ? AND interval = ? AND bucket > ? AND bucket >= ? AND bucket < ?
        ORDER BY bucket LIMIT ?`,
    );
    this.covering = db.prepare(
      `SELECT bucket, open_cents, high_cents, low_cents, close_cents FROM crypto_candles
        WHERE symbol = ? AND interval = '1m' AND bucket <= ? ORDER BY bucket DESC LIMIT 1`,
    );
    this.due = db.prepare(
      `SELECT id, index_symbol, strike_cents, close_time FROM markets
        WHERE index_symbol IS NOT NULL AND strike_cents IS NOT NULL AND status <> 'RESOLVED'
          AND close_time <= ? ORDER BY close_time, id`,
    );
    this.clearCandles = db.prepare('DELETE FROM crypto_candles');
    this.clearPrices = db.prepare('DELETE FROM crypto_prices');
  }

  /** Deletes every candle and stored price (a world's walk starts again); answers the candles deleted. */
  clear(): number {
    return this.db.transaction(() => {
      // Deferred: goes with the candles' delete (one round trip on PostgreSQL).
      runDeferred(this.clearPrices);
      this.lastBucket.clear();
      return this.clearCandles.run().changes;
    })();
  }

  /**
   * {@link clear} and {@link savePrices} of the seeded `ticks` inside the caller's transaction,
   * deferred (runDeferred: on PostgreSQL they go with its next round trip, a sandbox reset's
   * COMMIT). Answers what to run once it has committed (the bucket cache is dropped then), which
   * answers the candles deleted.
   */
  stageRestart(ticks: readonly PriceTick[]): () => number {
    runDeferred(this.clearPrices);
    const candles = runDeferred(this.clearCandles);
    for (const t of ticks) runDeferred(this.upsertPrice, t.symbol, t.cents, t.steps, iso(t.at));
    return () => {
      this.lastBucket.clear();
      return candles.changes;
    };
  }

  latestPrices(): StoredPrice[] {
    return this.prices.all() as StoredPrice[];
  }

  /** Stores prices without a candle (the walk's starting point on a fresh database). */
  savePrices(ticks: readonly PriceTick[]): void {
    this.db.transaction(() => {
      for (const t of ticks) runDeferred(this.upsertPrice, t.symbol, t.cents, t.steps, iso(t.at));
    })();
  }

  /**
   * Records ticks in one transaction, in order: each moves its symbol's latest price and the
   * open/high/low/close of the 1m, 1h and 1d buckets holding its time. When a tick starts a new
   * bucket of a series, that series' candles older than the interval's retention are deleted.
   *
   * A catch-up records up to a thousand steps per symbol, so the rows are merged first: one
   * price per symbol (its last tick) and one candle upsert per bucket (open of its first tick,
   * high and low over its ticks, close of its last), the same rows as a write per tick. The writes
   * are deferred (runDeferred): on PostgreSQL the transaction is one round trip, not one per row
   * (a world advanced a year blocked the event loop for seconds with about 15,000).
   */
  record(ticks: readonly PriceTick[]): void {
    if (ticks.length === 0) return;
    const prices = new Map<string, PriceTick>();
    const candles = new Map<string, CandleUpsert>();
    const prunes: [string, CandleInterval, string][] = [];
    const lastBuckets = new Map(this.lastBucket);
    for (const t of ticks) {
      prices.set(t.symbol, t);
      for (const interval of CANDLE_INTERVAL_NAMES) {
        const bucket = latestBoundary(t.at, CANDLE_INTERVALS[interval]);
        const key = `${t.symbol}|${interval}|${bucket}`;
        const c = candles.get(key);
        if (c === undefined) {
          candles.set(key, {
            symbol: t.symbol,
            interval,
            bucket,
            open: t.cents,
            high: t.cents,
            low: t.cents,
            close: t.cents,
          });
        } else {
          c.high = Math.max(c.high, t.cents);
          c.low = Math.min(c.low, t.cents);
          c.close = t.cents;
        }
        const series = `${t.symbol}|${interval}`;
        if (this.lastBucket.get(series) !== bucket) {
          this.lastBucket.set(series, bucket);
          const cutoff = retentionCutoff(bucket, CANDLE_RETENTION_DAYS[interval]);
          prunes.push([t.symbol, interval, iso(cutoff)]);
        }
      }
    }
    try {
      this.db.transaction(() => {
        for (const t of prices.values()) {
          runDeferred(this.upsertPrice, t.symbol, t.cents, t.steps, iso(t.at));
        }
        // The upserts before the prunes: ticks ascend, so a prune's cutoff never passes a bucket
        // written after it in tick order, and what it deletes is what it deleted then.
        for (const c of candles.values()) {
          runDeferred(
            this.upsertCandle,
            c.symbol,
            c.interval,
            iso(c.bucket),
            c.open,
            c.high,
            c.low,
            c.close,
          );
        }
        for (const [symbol, interval, cutoff] of prunes)
          runDeferred(this.prune, symbol, interval, cutoff);
      })();
    } catch (err) {
      // Not stored: the series' last buckets are as before, so the next write prunes again.
      this.lastBucket.clear();
      for (const [k, v] of lastBuckets) this.lastBucket.set(k, v);
      throw err;
    }
  }

  candles(q: CandleQuery): CandleRow[] {
    return this.page.all(
      q.symbol,
      q.interval,
      q.after ?? '',
      q.from ?? '',
      q.to ?? LAST_INSTANT,
      q.limit,
    ) as CandleRow[];
  }

  /** The 1m candle whose bucket holds `at` (the latest starting at or before it), if kept. */
  minuteCandleAt(symbol: string, at: number): CandleRow | undefined {
    const row = this.covering.get(symbol, iso(at)) as CandleRow | undefined;
    if (row === undefined || Date.parse(row.bucket) + CANDLE_INTERVALS['1m'] <= at)
      return undefined;
    return row;
  }

  /** Crypto markets with an index and a strike, not RESOLVED, whose close time is at or before `at`. */
  dueMarkets(at: number): DueMarket[] {
    return this.due.all(iso(at)) as DueMarket[];
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
