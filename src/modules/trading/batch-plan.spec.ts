import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { SqlConnection } from '../../common/sql/sql-connection.js';
import { insertMarkets, TempEngineDbs } from '../../../test/support/engine-dbs.js';
import type { EngineEvent, Result } from '../../engine/index.js';
import { Rig } from '../../engine/testing.js';
import { planBatch, WRITE } from './stores/batch-plan.js';
import { TradingRepository } from './trading.repository.js';
import { iso } from '../../common/clock/iso.js';

/**
 * A batch (the commands of one group commit) leaves superseded writes out (stores/batch-plan.ts).
 * This checks that it stores exactly the rows its events would, written one event at a time:
 * two engine databases, the same command streams, one fed whole batches, the other one event
 * per transaction (the plan is not used for a single event), then every table compared.
 */
describe('a batch stores the same rows as its events one at a time', () => {
  const HOUSE = 'house';
  const ACCOUNTS = ['a', 'b', 'c', HOUSE];
  const MARKETS = ['m1', 'm2'];
  const dbs = new TempEngineDbs('svc-batch-plan-');
  let batched: { db: SqlConnection; repo: () => TradingRepository };
  let single: { db: SqlConnection; repo: () => TradingRepository };

  async function open(): Promise<{ db: SqlConnection; repo: () => TradingRepository }> {
    const { db } = await dbs.open();
    insertMarkets(db, MARKETS, '2026-11-30T00:00:00.000Z');
    // A repository per run: its ledger ids count from 1 again, the same in both databases.
    const repo = (): TradingRepository => {
      let n = 0;
      return new TradingRepository(db, 'test', HOUSE, () => `led_${++n}`);
    };
    return { db, repo };
  }

  beforeAll(async () => {
    batched = await open();
    single = await open();
  });
  afterAll(() => dbs.close());

  const TABLES = {
    orders: 'SELECT * FROM orders ORDER BY id',
    trades: 'SELECT * FROM trades ORDER BY id',
    positions: 'SELECT * FROM positions ORDER BY user_id, market_id',
    accounts: 'SELECT * FROM accounts ORDER BY user_id',
    ledger: 'SELECT * FROM ledger ORDER BY id',
    markets: 'SELECT id, last_price, volume, updated_at FROM markets ORDER BY id',
  };
  const dump = (db: SqlConnection) =>
    Object.fromEntries(Object.entries(TABLES).map(([t, sql]) => [t, db.prepare(sql).all()]));
  const clear = (db: SqlConnection) =>
    db.exec(`DELETE FROM orders; DELETE FROM trades; DELETE FROM positions; DELETE FROM accounts;
      DELETE FROM ledger; UPDATE markets SET last_price = NULL, volume = 0, updated_at = 'x';`);

  type Cmd =
    | {
        k: 'limit';
        who: number;
        buy: boolean;
        yes: boolean;
        price: number;
        qty: number;
        ioc: boolean;
        m: number;
      }
    | { k: 'market'; who: number; buy: boolean; yes: boolean; qty: number; m: number }
    | { k: 'cancel'; pick: number }
    | { k: 'amend'; pick: number; price: number; qty: number };
  const who = fc.integer({ min: 0, max: ACCOUNTS.length - 1 });
  const m = fc.integer({ min: 0, max: MARKETS.length - 1 });
  const cmd: fc.Arbitrary<Cmd> = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        k: fc.constant('limit' as const),
        who,
        buy: fc.boolean(),
        yes: fc.boolean(),
        price: fc.integer({ min: 30, max: 70 }),
        qty: fc.integer({ min: 1, max: 12 }),
        ioc: fc.boolean(),
        m,
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        k: fc.constant('market' as const),
        who,
        buy: fc.boolean(),
        yes: fc.boolean(),
        qty: fc.integer({ min: 1, max: 25 }),
        m,
      }),
    },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('cancel' as const), pick: fc.nat() }) },
    {
      weight: 1,
      arbitrary: fc.record({
        k: fc.constant('amend' as const),
        pick: fc.nat(),
        price: fc.integer({ min: 30, max: 70 }),
        qty: fc.integer({ min: 1, max: 15 }),
      }),
    },
  );

  it('for random command streams cut into random batches, every table is the same', () => {
    let batchesOfSeveral = 0;
    let leftOut = 0;
    let folded = 0;
    fc.assert(
      fc.property(
        fc.array(cmd, { minLength: 5, maxLength: 60 }),
        fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 30 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 30 }),
        (cmds, sizes, gaps) => {
          clear(batched.db);
          clear(single.db);
          const repoA = batched.repo();
          const repoB = single.repo();
          const rig = new Rig();
          const perCommand: EngineEvent[][] = [];
          const take = (r: Result<object>) => {
            if (r.ok && r.events.length > 0) perCommand.push([...r.events]);
          };
          for (const a of ACCOUNTS) take(rig.engine.createAccount(a, 1_000_000));
          for (const id of MARKETS) take(rig.engine.addMarket(id));
          const open: string[] = [];
          cmds.forEach((c, i) => {
            rig.clock.advance(gaps[i % gaps.length]);
            let r: Result<{ order?: { id: string; status: string } }>;
            if (c.k === 'limit' || c.k === 'market') {
              r = rig.engine.placeOrder({
                accountId: ACCOUNTS[c.who],
                marketId: MARKETS[c.m],
                action: c.buy ? 'BUY' : 'SELL',
                side: c.yes ? 'YES' : 'NO',
                type: c.k === 'limit' ? 'LIMIT' : 'MARKET',
                ...(c.k === 'limit'
                  ? { price: c.price, ...(c.ioc ? { timeInForce: 'IOC' as const } : {}) }
                  : {}),
                quantity: c.qty,
              });
              if (r.ok && r.order?.status === 'OPEN') open.push(r.order.id);
            } else if (open.length === 0) {
              return;
            } else if (c.k === 'cancel') {
              r = rig.engine.cancelOrder(open.splice(c.pick % open.length, 1)[0]);
            } else {
              r = rig.engine.amendOrder(open[c.pick % open.length], {
                price: c.price,
                quantity: c.qty,
              });
            }
            take(r);
          });
          const now = rig.clock.now();
          let at = 0;
          for (let s = 0; at < perCommand.length; s++) {
            const group = perCommand.slice(at, at + sizes[s % sizes.length]);
            at += group.length;
            const events = group.flat();
            if (group.length > 1) {
              batchesOfSeveral++;
              const plan = planBatch(events, HOUSE, iso);
              leftOut += plan.action.filter((x) => x !== WRITE).length;
              folded += plan.finalOrders.size;
            }
            repoA.transaction(() => repoA.apply(events, now));
            for (const e of events) repoB.transaction(() => repoB.apply([e], now));
          }
          const [a, b] = [dump(batched.db), dump(single.db)];
          expect(a).toEqual(b);
        },
      ),
      { numRuns: 60 },
    );
    // The runs did batch commands together (the plan had something to leave out).
    expect(batchesOfSeveral).toBeGreaterThan(50);
    expect(leftOut).toBeGreaterThan(100);
    expect(folded).toBeGreaterThan(20);
  });
  it("an account's row first written by a coalesced balance keeps the batch's first change time", () => {
    clear(batched.db);
    clear(single.db);
    const [repoA, repoB] = [batched.repo(), single.repo()];
    const t0 = Date.parse('2026-11-30T10:00:00.000Z');
    const change = (ms: number, delta: number, balance: number): EngineEvent => ({
      type: 'balance.changed',
      accountId: 'late',
      delta,
      balance,
      reason: 'DEPOSIT',
      referenceId: null,
      timestamp: t0 + ms,
    });
    const events = [change(0, 500, 500), change(7, 250, 750), change(9, -100, 650)];
    expect(Array.from(planBatch(events, HOUSE, iso).action)).toEqual([2, 2, 0]);
    repoA.transaction(() => repoA.apply(events, t0 + 9));
    for (const e of events) repoB.transaction(() => repoB.apply([e], t0 + 9));
    expect(dump(batched.db)).toEqual(dump(single.db));
    expect(batched.db.prepare('SELECT * FROM accounts').all()).toEqual([
      {
        user_id: 'late',
        balance_cents: 650,
        created_at: '2026-11-30T10:00:00.000Z',
        updated_at: '2026-11-30T10:00:00.009Z',
      },
    ]);
    expect(batched.db.prepare('SELECT COUNT(*) AS n FROM ledger').get()).toEqual({ n: 3 });
  });
});
