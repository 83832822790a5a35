import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Logger } from '@nestjs/common';
import type { Database } from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { ManualClock } from '../../common/clock/clock.js';
import {
  sqliteDatabaseOf,
  ENGINE_DB,
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  sqliteOptions,
} from '../../database/databases.js';
import type { Action, CrossQuoteRequest, Side } from '../../engine/index.js';
import { EngineRuntime } from './engine-runtime.js';
import { InProcessEventBus, type CommittedEvents } from './event-bus.js';
import { EffectStore } from './stores/effect.store.js';
import { TradingRepository } from './trading.repository.js';

/**
 * The RFQ commands of the runtime on a real engine database: what they store, in one transaction
 * with the caller's rows, and what a restart (a new runtime on the same file, as after kill -9)
 * rebuilds from it.
 */
const log = { log: () => undefined, warn: () => undefined, error: () => undefined };
const START = 10_000;
const NOON = Date.parse('2026-11-22T12:00:00.000Z');

let dir: string;
let ds: DataSource;
let db: Database;
let seq = 0;
const ids = { next: (p: string) => `${p}${String(++seq).padStart(6, '0')}` };
const clock = new ManualClock(NOON);
const published: CommittedEvents[] = [];

function boot(): EngineRuntime {
  const bus = new InProcessEventBus();
  bus.stream.subscribe((b) => published.push(b));
  const repo = new TradingRepository(db, 'test', 'house', () => ids.next('txn_'));
  return new EngineRuntime('test', repo, clock, ids, bus, log as unknown as Logger, null, START);
}

function addMarket(id: string): void {
  const at = new Date(NOON).toISOString();
  db.prepare(
    `INSERT INTO markets (id, slug, title, category, status, close_time, reference_price, created_at, updated_at)
     VALUES (?, ?, ?, 'POLITICS', 'OPEN', '2030-01-01T00:00:00.000Z', 50, ?, ?)`,
  ).run(id, id, id, at, at);
}

const row = (sql: string, ...args: unknown[]) =>
  db.prepare(sql).get(...args) as Record<string, unknown>;
const rows = (sql: string, ...args: unknown[]) =>
  db.prepare(sql).all(...args) as Record<string, unknown>[];
const balance = (u: string) =>
  (row('SELECT balance_cents FROM accounts WHERE user_id = ?', u) ?? {}).balance_cents;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-rfq-runtime-'));
  ds = new DataSource(sqliteOptions(ENGINE_DB.test, dir, ENGINE_ENTITIES, ENGINE_MIGRATIONS));
  await ds.initialize();
  db = sqliteDatabaseOf(ds);
  db.exec('CREATE TABLE rfq_rows (id TEXT PRIMARY KEY, status TEXT)');
});
afterAll(async () => {
  await ds.destroy();
  rmSync(dir, { recursive: true, force: true });
});

function accept(
  market: string,
  taker: string,
  maker: string,
  action: Action,
  side: Side,
  price: number,
  quantity: number,
  more: Partial<CrossQuoteRequest> = {},
): CrossQuoteRequest {
  return {
    marketId: market,
    quantity,
    taker: { accountId: taker, action, side, price },
    maker: { accountId: maker },
    rfqId: `rfq_${market}`,
    ...more,
  };
}

describe('EngineRuntime RFQ commands on a real engine database', () => {
  it('holds a quote with the caller rows in one transaction; a restart still reserves it', () => {
    addMarket('mkt_h');
    let rt = boot();
    rt.ensureAccount('usr_r');
    const held = rt.holdQuote(
      { holdId: 'qte_1', accountId: 'usr_r', marketId: 'mkt_h', amountCents: 4_000 },
      (d) => d.prepare(`INSERT INTO rfq_rows VALUES ('qte_1', 'OPEN')`).run(),
    );
    expect(held).toMatchObject({ ok: true, hold: { holdId: 'qte_1', amountCents: 4_000 } });
    expect(row('SELECT * FROM quote_holds WHERE id = ?', 'qte_1')).toEqual({
      id: 'qte_1',
      user_id: 'usr_r',
      market_id: 'mkt_h',
      amount_cents: 4_000,
      created_at: new Date(NOON).toISOString(),
    });
    expect(row(`SELECT status FROM rfq_rows WHERE id = 'qte_1'`)).toEqual({ status: 'OPEN' });
    expect(published.at(-1)!.events.map((e) => e.type)).toEqual(['hold.placed']);
    // Replacement: one command, the old hold's row gone and the new one stored.
    expect(
      rt.holdQuote({
        holdId: 'qte_2',
        accountId: 'usr_r',
        marketId: 'mkt_h',
        amountCents: 9_000,
        replacesHoldId: 'qte_1',
      }).ok,
    ).toBe(true);
    expect(rows('SELECT id FROM quote_holds')).toEqual([{ id: 'qte_2' }]);
    // A restart (kill -9: nothing but the file survives) restores the reservation.
    rt.stop();
    rt = boot();
    expect(rt.reads.getAccount('usr_r')).toEqual({
      accountId: 'usr_r',
      balance: START,
      reserved: 9_000,
      available: 1_000,
    });
    expect(rt.heldQuotes('usr_r')).toEqual([
      {
        holdId: 'qte_2',
        accountId: 'usr_r',
        marketId: 'mkt_h',
        amountCents: 9_000,
        createdAt: NOON,
      },
    ]);
    expect(rt.run((e) => e.withdraw('usr_r', 1_001))).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    expect(rt.releaseQuote('qte_2').ok).toBe(true);
    expect(rows('SELECT id FROM quote_holds')).toEqual([]);
    expect(rt.releaseQuote('qte_2')).toMatchObject({ ok: false, code: 'UNKNOWN_HOLD' });
    rt.stop();
    expect(boot().reads.getAccount('usr_r')).toMatchObject({ reserved: 0, available: START });
  });

  // bid 40 / ask 45 for 10: [action, side, taker's own price, YES price, taker pays, maker pays]
  const forms: [Action, Side, number, number, number, number][] = [
    ['BUY', 'YES', 45, 45, 450, 550],
    ['SELL', 'NO', 55, 45, 450, 550],
    ['SELL', 'YES', 40, 40, 600, 400],
    ['BUY', 'NO', 60, 40, 600, 400],
  ];
  it.each(forms)(
    '%s %s at %i: stored orders, trade, positions and ledger to the cent, and restored',
    (action, side, price, yes, takerPays, makerPays) => {
      const m = `mkt_${action}_${side}`.toLowerCase();
      addMarket(m);
      let rt = boot();
      const [taker, maker] = [`usr_t_${m}`, `usr_m_${m}`];
      rt.ensureAccount(taker);
      rt.ensureAccount(maker);
      expect(
        rt.holdQuote({ holdId: `qte_${m}`, accountId: maker, marketId: m, amountCents: 600 }).ok,
      ).toBe(true);
      const r = rt.crossQuote(
        accept(m, taker, maker, action, side, price, 10, { releaseHoldId: `qte_${m}` }),
        (d) => d.prepare(`INSERT INTO rfq_rows VALUES (?, 'FILLED')`).run(`rfq_${m}`),
      );
      if (!r.ok) throw new Error(r.code);
      expect(r.trade.price).toBe(yes);
      expect(balance(taker)).toBe(START - takerPays);
      expect(balance(maker)).toBe(START - makerPays);
      const stored = rows('SELECT * FROM orders WHERE rfq_id = ? ORDER BY user_id', `rfq_${m}`);
      expect(stored).toEqual([
        expect.objectContaining({
          id: r.makerOrder.id,
          user_id: maker,
          action: yes === 45 ? 'SELL' : 'BUY',
          side: 'YES',
          type: 'RFQ',
          price: yes,
          status: 'FILLED',
          filled_quantity: 10,
          fill_cost: yes * 10,
          time_in_force: 'FOK',
        }),
        expect.objectContaining({
          id: r.takerOrder.id,
          user_id: taker,
          action,
          side,
          type: 'RFQ',
          price,
          status: 'FILLED',
          filled_quantity: 10,
          fill_cost: price * 10,
        }),
      ]);
      expect(row('SELECT * FROM trades WHERE id = ?', r.trade.id)).toMatchObject({
        source: 'RFQ',
        price: yes,
        quantity: 10,
        maker_user_id: maker,
        taker_user_id: taker,
      });
      expect(
        rows(
          'SELECT user_id, type, amount_cents FROM ledger WHERE reference_id = ? ORDER BY user_id',
          r.trade.id,
        ),
      ).toEqual([
        { user_id: maker, type: 'TRADE', amount_cents: -makerPays },
        { user_id: taker, type: 'TRADE', amount_cents: -takerPays },
      ]);
      expect(rows('SELECT id FROM quote_holds WHERE id = ?', `qte_${m}`)).toEqual([]);
      expect(row('SELECT last_price, volume FROM markets WHERE id = ?', m)).toEqual({
        last_price: yes,
        volume: 10,
      });
      // After a restart: the same money, positions, no hold, and the orders are history.
      const before = [taker, maker].map((u) => [rt.reads.getAccount(u), rt.reads.positions(u)]);
      rt.stop();
      rt = boot();
      expect([taker, maker].map((u) => [rt.reads.getAccount(u), rt.reads.positions(u)])).toEqual(
        before,
      );
      expect(rt.reads.openOrders(taker)).toEqual([]);
      expect(rt.storedOrders(taker, { limit: 10 })).toEqual([
        expect.objectContaining({ type: 'RFQ', rfq_id: `rfq_${m}` }),
      ]);
    },
  );

  it('rolls everything back when the caller rows fail, and keeps working', () => {
    addMarket('mkt_rb');
    const rt = boot();
    rt.ensureAccount('usr_a');
    rt.ensureAccount('usr_b');
    rt.holdQuote({ holdId: 'qte_rb', accountId: 'usr_b', marketId: 'mkt_rb', amountCents: 500 });
    const counts = () =>
      rows(
        `SELECT (SELECT COUNT(*) FROM orders) o, (SELECT COUNT(*) FROM trades) t,
         (SELECT COUNT(*) FROM ledger) l, (SELECT COUNT(*) FROM quote_holds) h,
         (SELECT COUNT(*) FROM rfq_rows) r`,
      )[0];
    const before = counts();
    const state = () =>
      ['usr_a', 'usr_b'].map((u) => [rt.reads.getAccount(u), rt.reads.positions(u)]);
    const engineBefore = JSON.stringify([state(), rt.heldQuotes()]);
    const req = accept('mkt_rb', 'usr_a', 'usr_b', 'BUY', 'YES', 45, 10, {
      releaseHoldId: 'qte_rb',
    });
    expect(() =>
      rt.crossQuote(req, (d) => {
        d.prepare(`INSERT INTO rfq_rows VALUES ('rfq_rb', 'FILLED')`).run();
        throw new Error('RFQ_NOT_OPEN');
      }),
    ).toThrow('RFQ_NOT_OPEN');
    expect(counts()).toEqual(before);
    // The engine was rebuilt from the database: nothing of the cross, the hold still held.
    expect(JSON.stringify([state(), rt.heldQuotes()])).toBe(engineBefore);
    expect(rt.healthy).toBe(true);
    const again = rt.crossQuote(req);
    expect(again.ok).toBe(true);
    expect(balance('usr_a')).toBe(START - 450);
  });

  it('refuses a party short of funds or a market not open, storing nothing', () => {
    addMarket('mkt_no');
    const rt = boot();
    rt.ensureAccount('usr_x');
    rt.ensureAccount('usr_y');
    let called = 0;
    const inCommit = () => void called++;
    const before = rows('SELECT COUNT(*) n FROM orders')[0];
    expect(
      rt.crossQuote(accept('mkt_no', 'usr_x', 'usr_y', 'BUY', 'YES', 50, 201), inCommit),
    ).toMatchObject({
      ok: false,
      code: 'INSUFFICIENT_FUNDS',
      party: 'TAKER',
      funds: { required: 10_050, available: START },
    });
    expect(
      rt.crossQuote(accept('mkt_no', 'usr_x', 'usr_y', 'BUY', 'YES', 20, 126), inCommit),
    ).toMatchObject({
      code: 'INSUFFICIENT_FUNDS',
      party: 'MAKER', // the maker opens NO at 80: 126 x 80 = 10,080
    });
    expect(
      rt.crossQuote(accept('mkt_no', 'usr_x', 'usr_x', 'BUY', 'YES', 50, 1), inCommit),
    ).toMatchObject({
      code: 'SELF_TRADE',
    });
    expect(rt.setTradingStatus('mkt_no', 'HALTED', 50).ok).toBe(true);
    expect(
      rt.crossQuote(accept('mkt_no', 'usr_x', 'usr_y', 'BUY', 'YES', 50, 1), inCommit),
    ).toMatchObject({
      code: 'MARKET_NOT_OPEN',
    });
    expect(
      rt.holdQuote(
        { holdId: 'qte_no', accountId: 'usr_y', marketId: 'mkt_no', amountCents: 1 },
        inCommit,
      ),
    ).toMatchObject({
      code: 'MARKET_NOT_OPEN',
    });
    expect(called).toBe(0);
    expect(rows('SELECT COUNT(*) n FROM orders')[0]).toEqual(before);
    expect([balance('usr_x'), balance('usr_y')]).toEqual([START, START]);
  });

  it('records only the taker order as the Idempotency-Key effect of an accept', () => {
    addMarket('mkt_idem');
    const rt = boot();
    rt.ensureAccount('usr_i');
    rt.ensureAccount('usr_j');
    const r = rt.crossQuote(accept('mkt_idem', 'usr_i', 'usr_j', 'SELL', 'YES', 50, 2), undefined, {
      ownerId: 'test:usr_i',
      key: 'accept-1',
    });
    if (!r.ok) throw new Error(r.code);
    expect(new EffectStore(db).effectOf('test:usr_i', 'accept-1', '2000-01-01')).toEqual({
      orderIds: [r.takerOrder.id],
      referenceIds: [],
    });
  });

  it('commits a waiting order batch first, then publishes the cross as one committed batch', async () => {
    addMarket('mkt_gc');
    const rt = boot();
    rt.ensureAccount('usr_g');
    rt.ensureAccount('usr_h');
    // An order of the group-commit hot path, still waiting for its batch's commit...
    const placed = rt.runBatched((e) =>
      e.placeOrder({
        accountId: 'usr_g',
        marketId: 'mkt_gc',
        action: 'BUY',
        side: 'YES',
        type: 'LIMIT',
        price: 30,
        quantity: 5,
      }),
    );
    const from = published.length;
    const r = rt.crossQuote(accept('mkt_gc', 'usr_g', 'usr_h', 'BUY', 'NO', 55, 3));
    if (!r.ok) throw new Error(r.code);
    // ...is committed (and published) before the cross runs, in its own transaction.
    const order = await placed;
    if (!order.ok) throw new Error(order.code);
    expect(row('SELECT status FROM orders WHERE id = ?', order.order.id)).toEqual({
      status: 'OPEN',
    });
    const batches = published.slice(from).map((b) => b.events.map((e) => e.type));
    expect(batches).toEqual([
      ['order.accepted', 'order.rested', 'book.level'],
      [
        'order.accepted',
        'order.accepted',
        'trade',
        'order.updated',
        'position.changed',
        'balance.changed',
        'order.updated',
        'position.changed',
        'balance.changed',
      ],
    ]);
    const trade = published.at(-1)!.events.find((e) => e.type === 'trade');
    expect(trade).toMatchObject({ source: 'RFQ', price: 45, takerSide: 'NO', quantity: 3 });
    // The resting order is still there, untouched by the cross (45 is above its 30 bid).
    expect(rt.reads.openOrders('usr_g')).toEqual([
      expect.objectContaining({ id: order.order.id, filledQuantity: 0 }),
    ]);
  });

  it('drops an account reset holds from the database too, so a restart does not bring them back', () => {
    addMarket('mkt_rs');
    let rt = boot();
    rt.ensureAccount('usr_s');
    rt.ensureAccount('usr_keep');
    rt.holdQuote({ holdId: 'qte_s1', accountId: 'usr_s', marketId: 'mkt_rs', amountCents: 300 });
    rt.holdQuote({ holdId: 'qte_k', accountId: 'usr_keep', marketId: 'mkt_rs', amountCents: 200 });
    expect(rt.run((e) => e.resetAccount('usr_s', START)).ok).toBe(true);
    expect(rows(`SELECT id FROM quote_holds WHERE id IN ('qte_s1', 'qte_k')`)).toEqual([
      { id: 'qte_k' },
    ]);
    rt.stop();
    rt = boot();
    expect(rt.reads.getAccount('usr_s')).toMatchObject({ reserved: 0, available: START });
    expect(rt.reads.getAccount('usr_keep')).toMatchObject({ reserved: 200 });
    expect(rt.releaseQuote('qte_s1')).toMatchObject({ ok: false, code: 'UNKNOWN_HOLD' });
  });
});
