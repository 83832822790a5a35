import { describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { latestBoundary, retentionCutoff } from '../../common/sampling/boundaries.js';
import {
  CANDLE_INTERVAL_NAMES,
  CANDLE_INTERVALS,
  CANDLE_RETENTION_DAYS,
} from './crypto-symbols.js';
import { cryptoDatabase } from '../../../test/support/crypto-tables.js';
import { CryptoRepository, type PriceTick } from './crypto.repository.js';

const T0 = Date.parse('2026-11-22T12:00:00.000Z');

const database = cryptoDatabase;

/** The rule record() keeps, written as a write per tick (what it did before it merged rows). */
function recordPerTick(db: Database.Database, last: Map<string, number>, ticks: PriceTick[]) {
  const iso = (ms: number) => new Date(ms).toISOString();
  for (const t of ticks) {
    db.prepare(
      `INSERT INTO crypto_prices VALUES (?, ?, ?, ?) ON CONFLICT (symbol) DO UPDATE SET
        price_cents = excluded.price_cents, steps = excluded.steps, as_of = excluded.as_of`,
    ).run(t.symbol, t.cents, t.steps, iso(t.at));
    for (const interval of CANDLE_INTERVAL_NAMES) {
      const bucket = latestBoundary(t.at, CANDLE_INTERVALS[interval]);
      db.prepare(
        `INSERT INTO crypto_candles VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET
          high_cents = MAX(high_cents, excluded.high_cents),
          low_cents = MIN(low_cents, excluded.low_cents), close_cents = excluded.close_cents`,
      ).run(t.symbol, interval, iso(bucket), t.cents, t.cents, t.cents, t.cents);
      const series = `${t.symbol}|${interval}`;
      if (last.get(series) !== bucket) {
        last.set(series, bucket);
        db.prepare(
          'DELETE FROM crypto_candles WHERE symbol = ? AND interval = ? AND bucket < ?',
        ).run(t.symbol, interval, iso(retentionCutoff(bucket, CANDLE_RETENTION_DAYS[interval])));
      }
    }
  }
}

function rows(db: Database.Database): unknown[] {
  return [
    db.prepare('SELECT * FROM crypto_prices ORDER BY symbol').all(),
    db.prepare('SELECT * FROM crypto_candles ORDER BY symbol, interval, bucket').all(),
  ];
}

/** Ticks of `symbols` every `spacingMs` from `from`, prices wandering up and down. */
function ticks(symbols: string[], from: number, n: number, spacingMs: number): PriceTick[] {
  const out: PriceTick[] = [];
  for (let i = 0; i < n; i++) {
    symbols.forEach((symbol, s) =>
      out.push({
        symbol,
        cents: 10_000 + s * 7 + ((i * 37) % 101) - 50,
        steps: i + 1,
        at: from + i * spacingMs,
      }),
    );
  }
  return out;
}

describe('CryptoRepository.record', () => {
  it('stores what a write per tick stores: latest prices, merged candles, pruned series', () => {
    const merged = database();
    const perTick = database();
    const repo = new CryptoRepository(merged);
    const last = new Map<string, number>();
    // A catch-up of a thousand steps, then a second one across a day boundary, then one spaced
    // an hour apart over 41 days (past the 1m retention of 7 days: the early 1m candles go).
    const batches = [
      ticks(['BTC-USD', 'ETH-USD', 'SOL-USD'], T0, 1000, 1000),
      ticks(['BTC-USD', 'ETH-USD', 'SOL-USD'], T0 + 12 * 3_600_000 - 30_000, 200, 1000),
      ticks(['BTC-USD', 'ETH-USD'], T0 + 2 * 86_400_000, 1000, 3_600_000),
    ];
    for (const batch of batches) {
      repo.record(batch);
      recordPerTick(perTick, last, batch);
      expect(rows(merged)).toEqual(rows(perTick));
    }
    expect((rows(merged)[1] as unknown[]).length).toBeGreaterThan(100);
  });

  it('writes one price per symbol and one upsert per candle, not a row per tick', () => {
    const db = database();
    let statements = 0;
    const counting = new Proxy(db, {
      get(target, prop, receiver) {
        if (prop !== 'prepare') return Reflect.get(target, prop, receiver) as unknown;
        return (sql: string) => {
          const stmt = target.prepare(sql);
          return new Proxy(stmt, {
            get(s, p, r) {
              if (p !== 'run') return Reflect.get(s, p, r) as unknown;
              return (...args: unknown[]) => {
                statements++;
                return s.run(...args);
              };
            },
          });
        };
      },
    });
    const counted = new CryptoRepository(counting);
    // 1000 one-second steps of 3 symbols: 3 prices; per symbol 17 1m candles, one 1h, one 1d,
    // and a prune for each of those buckets started (the first of each series, then each minute).
    counted.record(ticks(['BTC-USD', 'ETH-USD', 'SOL-USD'], T0, 1000, 1000));
    expect(statements).toBeLessThanOrEqual(3 + 3 * (17 + 1 + 1) * 2);
  });
});
