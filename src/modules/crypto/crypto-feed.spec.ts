import { describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { CryptoWalk } from '../../engine/index.js';
import { CryptoFeed, MAX_STEPS_PER_CATCH_UP, type IndexPrice } from './crypto-feed.js';
import { cryptoDatabase } from '../../../test/support/crypto-tables.js';
import { CryptoRepository, type DueMarket } from './crypto.repository.js';

const SYMBOLS = [{ symbol: 'BTC-USD', startCents: 10_000_000, sigma: 0.01 }];
const T0 = Date.parse('2026-11-22T12:00:00.000Z');

const database = cryptoDatabase;

function feed(
  db: Database.Database,
  clock: { now: number },
  intervalMs = 60_000,
  stepsOnClock = true,
) {
  const settled: { id: string; cents: number }[] = [];
  const published: IndexPrice[][] = [];
  const f = new CryptoFeed({
    seed: 7,
    symbols: SYMBOLS,
    intervalMs,
    stepsOnClock,
    repo: new CryptoRepository(db),
    now: () => clock.now,
    publish: (p) => published.push([...p]),
    resolve: (m: DueMarket, cents: number) => {
      settled.push({ id: m.id, cents });
      db.prepare(`UPDATE markets SET status = 'RESOLVED' WHERE id = ?`).run(m.id);
    },
  });
  return { f, settled, published };
}

/** The prices a walk with the same seed takes, step by step. */
function path(steps: number): number[] {
  const w = new CryptoWalk({ seed: 7, symbols: SYMBOLS });
  return Array.from({ length: steps }, () => w.step().get('BTC-USD')!);
}

describe('CryptoFeed', () => {
  it('steps once per boundary passed, each at its boundary time, and publishes the last', () => {
    const clock = { now: T0 + 5_000 };
    const { f, published } = feed(database(), clock);
    clock.now = T0 + 3 * 60_000 + 1;
    f.catchUp();
    const p = path(3);
    expect(f.prices()).toEqual([{ symbol: 'BTC-USD', cents: p[2], at: T0 + 3 * 60_000 }]);
    expect(published).toEqual([[{ symbol: 'BTC-USD', cents: p[2], at: T0 + 3 * 60_000 }]]);
    f.catchUp(); // nothing new
    expect(published).toHaveLength(1);
  });

  it('settles a market on the price before the first step after its close_time', () => {
    const db = database();
    const clock = { now: T0 };
    db.prepare(`INSERT INTO markets VALUES ('m1', 'CLOSED', ?, 'BTC-USD', 1)`).run(
      new Date(T0 + 90_000).toISOString(), // between the steps at +60 s and +120 s
    );
    db.prepare(`INSERT INTO markets VALUES ('m2', 'OPEN', ?, 'BTC-USD', 1)`).run(
      new Date(T0 + 120_000).toISOString(), // exactly at a step: that step counts
    );
    const { f, settled } = feed(db, clock);
    clock.now = T0 + 5 * 60_000;
    f.catchUp();
    const p = path(5);
    expect(settled).toEqual([
      { id: 'm1', cents: p[0] },
      { id: 'm2', cents: p[1] },
    ]);
    f.catchUp();
    expect(settled).toHaveLength(2);
  });

  it('looks for due markets again only once the clock has moved, when none was due', () => {
    const db = database();
    const clock = { now: T0 };
    const repo = new CryptoRepository(db);
    let looks = 0;
    const due = repo.dueMarkets.bind(repo);
    repo.dueMarkets = (at: number) => {
      looks++;
      return due(at);
    };
    const settled: string[] = [];
    const f = new CryptoFeed({
      seed: 7,
      symbols: SYMBOLS,
      intervalMs: 60_000,
      stepsOnClock: true,
      repo,
      now: () => clock.now,
      publish: () => {},
      resolve: (m: DueMarket) => {
        settled.push(m.id);
        db.prepare(`UPDATE markets SET status = 'RESOLVED' WHERE id = ?`).run(m.id);
      },
    });
    f.catchUp();
    f.catchUp();
    f.prices();
    expect(looks).toBe(1);
    // A market closing in the future cannot be due before the clock moves past its close.
    db.prepare(`INSERT INTO markets VALUES ('m1', 'OPEN', ?, 'BTC-USD', 1)`).run(
      new Date(T0 + 30_000).toISOString(),
    );
    f.catchUp();
    expect([looks, settled]).toEqual([1, []]);
    clock.now = T0 + 60_000;
    f.catchUp();
    expect([looks, settled]).toEqual([2, ['m1']]);
    // A look that settled something is not taken for a quiet one: the next looks once more.
    f.catchUp();
    f.catchUp();
    expect([looks, settled]).toEqual([3, ['m1']]);
  });

  it('restarts from the stored price and step count, continuing the same path', () => {
    const db = database();
    const clock = { now: T0 };
    feed(db, clock).f.catchUp();
    clock.now = T0 + 2 * 60_000;
    feed(db, clock).f.catchUp(); // a first run: 2 steps
    clock.now = T0 + 4 * 60_000;
    const { f } = feed(db, clock); // a restart: 2 more
    f.catchUp();
    expect(f.prices()[0].cents).toBe(path(4)[3]);
  });

  it('takes at most MAX_STEPS_PER_CATCH_UP steps after a long gap', () => {
    const clock = { now: T0 };
    const db = database();
    const { f } = feed(db, clock, 1000);
    clock.now = T0 + 10 * MAX_STEPS_PER_CATCH_UP * 1000;
    f.catchUp();
    const steps = db.prepare('SELECT steps FROM crypto_prices').get() as { steps: number };
    expect(steps.steps).toBe(MAX_STEPS_PER_CATCH_UP);
    expect(f.prices()[0].at).toBe(clock.now);
  });

  it('with interval 0 never steps, but a set moves the price and records a candle', () => {
    const db = database();
    const clock = { now: T0 };
    const { f, published } = feed(db, clock, 0);
    clock.now = T0 + 3_600_000;
    f.catchUp();
    expect(f.prices()[0]).toEqual({ symbol: 'BTC-USD', cents: 10_000_000, at: T0 });
    expect(f.set('BTC-USD', 12_345)).toEqual({ symbol: 'BTC-USD', cents: 12_345, at: clock.now });
    expect(f.set('BTC-USD', 0)).toBeNull();
    expect(f.set('DOGE-USD', 100)).toBeNull();
    expect(published).toHaveLength(1);
    expect(db.prepare('SELECT COUNT(*) AS n FROM crypto_candles').get()).toEqual({ n: 3 });
  });

  it('without steps on the clock (an ephemeral world) moves only by advance, the steps spread back from now', () => {
    const db = database();
    const clock = { now: T0 };
    db.prepare(`INSERT INTO markets VALUES ('m1', 'OPEN', ?, 'BTC-USD', 1)`).run(
      new Date(T0 + 3_600_000 - 90_000).toISOString(), // between the 1st and 2nd of 3 steps
    );
    const { f, settled, published } = feed(db, clock, 60_000, false);
    clock.now = T0 + 3_600_000;
    f.catchUp(); // an hour passed: no step, but the due market settles on the price it had
    expect(f.prices()[0]).toEqual({ symbol: 'BTC-USD', cents: 10_000_000, at: T0 });
    expect(settled).toEqual([{ id: 'm1', cents: 10_000_000 }]);
    db.prepare(`UPDATE markets SET status = 'OPEN'`).run();
    settled.length = 0;
    f.advance(3);
    const p = path(3);
    expect(f.prices()).toEqual([{ symbol: 'BTC-USD', cents: p[2], at: clock.now }]);
    expect(published).toEqual([[{ symbol: 'BTC-USD', cents: p[2], at: clock.now }]]);
    // Settled before the step after its close: on the first step's price.
    expect(settled).toEqual([{ id: 'm1', cents: p[0] }]);
    const minutes = db
      .prepare(
        `SELECT bucket, close_cents FROM crypto_candles WHERE interval = '1m' ORDER BY bucket`,
      )
      .all();
    expect(minutes).toEqual(
      [2, 1, 0].map((k, i) => ({
        bucket: new Date(clock.now - k * 60_000).toISOString(),
        close_cents: p[i],
      })),
    );
    f.advance(0); // settles only
    f.advance(10 * MAX_STEPS_PER_CATCH_UP);
    const steps = db.prepare('SELECT steps FROM crypto_prices').get() as { steps: number };
    expect(steps.steps).toBe(3 + MAX_STEPS_PER_CATCH_UP);
  });

  /** Every write of a price fails while it is on (a full disk, as far as the feed can tell). */
  function failingStores(db: Database.Database, on: boolean): void {
    if (on) {
      db.exec(`CREATE TRIGGER full_disk BEFORE INSERT ON crypto_candles
        BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`);
    } else db.exec('DROP TRIGGER full_disk');
  }

  it('a world advance whose store fails takes no step, and the next advance takes them all', () => {
    const db = database();
    const clock = { now: T0 };
    const { f, published } = feed(db, clock, 60_000, false);
    const stored = () => db.prepare('SELECT price_cents, steps FROM crypto_prices').get();
    clock.now = T0 + 180_000;
    failingStores(db, true);
    expect(() => f.advance(3)).toThrow('database or disk is full');
    // Nothing moved: neither the walk, nor what is stored, nor what was published.
    expect(f.prices()).toEqual([{ symbol: 'BTC-USD', cents: 10_000_000, at: T0 }]);
    expect(stored()).toEqual({ price_cents: 10_000_000, steps: 0 });
    expect(published).toEqual([]);
    // A read in between retries the owed steps; it fails again, still all or nothing.
    expect(() => f.catchUp()).toThrow('database or disk is full');
    expect(f.prices()[0].cents).toBe(10_000_000);
    failingStores(db, false);
    clock.now = T0 + 240_000;
    f.advance(1);
    // The 3 owed steps and the new one: the very path a walk of 4 steps takes.
    const p = path(4);
    expect(f.prices()).toEqual([{ symbol: 'BTC-USD', cents: p[3], at: clock.now }]);
    expect(stored()).toEqual({ price_cents: p[3], steps: 4 });
    f.advance(1);
    expect(f.prices()[0].cents).toBe(path(5)[4]);
  });

  it('a catch-up on the clock whose store fails takes its boundaries at the next catch-up', () => {
    const db = database();
    const clock = { now: T0 + 5_000 };
    const { f } = feed(db, clock);
    clock.now = T0 + 2 * 60_000 + 1;
    failingStores(db, true);
    expect(() => f.catchUp()).toThrow('database or disk is full');
    expect(f.prices()[0].cents).toBe(10_000_000);
    failingStores(db, false);
    f.catchUp();
    const p = path(2);
    expect(f.prices()).toEqual([{ symbol: 'BTC-USD', cents: p[1], at: T0 + 2 * 60_000 }]);
  });

  it('keeps 1m candles 7 days, 1h 90 days, 1d 5 years: older ones go as a new bucket starts', () => {
    const db = database();
    const repo = new CryptoRepository(db);
    const day = 86_400_000;
    const tick = (at: number) => repo.record([{ symbol: 'BTC-USD', cents: 100, steps: 0, at }]);
    const count = (interval: string) =>
      (
        db.prepare('SELECT COUNT(*) AS n FROM crypto_candles WHERE interval = ?').get(interval) as {
          n: number;
        }
      ).n;
    tick(T0);
    tick(T0 + 7 * day); // exactly 7 days later: the first 1m candle is still inside
    expect([count('1m'), count('1h'), count('1d')]).toEqual([2, 2, 2]);
    tick(T0 + 7 * day + 60_000);
    expect([count('1m'), count('1h'), count('1d')]).toEqual([2, 2, 2]);
    tick(T0 + 91 * day);
    // 1m: only the new one; 1h: the one of day 7 is within 90 days, day 0's is gone.
    expect([count('1m'), count('1h'), count('1d')]).toEqual([1, 2, 3]);
  });
});
