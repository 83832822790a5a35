/**
 * The two engines the engine bench compares, behind the anchor's adapter interface
 * (../shared/anchors/engine/run.mjs): `create` resets all state, then limit / ioc / cancel /
 * reduce per operation. Ids are the workload's integers; unknown or already-final ids are
 * ignored (fills may differ slightly from the reference book's, so a few ops name gone orders).
 */
import { OrderBook, Side, type LimitOrderOptions } from 'nodejs-order-book';
import {
  MatchingEngine,
  SequentialIdGenerator,
  type Clock,
  type Result,
} from '../../src/engine/index.js';

export interface EngineAdapter {
  readonly name: string;
  create(markets: number): void;
  limit(market: number, id: number, buy: boolean, price: number, qty: number): void;
  ioc(market: number, id: number, buy: boolean, price: number, qty: number): void;
  cancel(market: number, id: number): void;
  reduce(market: number, id: number, newQty: number): void;
  /** Untimed, after a pass. */
  liveOrders(): number;
}

/**
 * The engine classes an adapter drives: this checkout's, or another built checkout's
 * (`BENCH_BASELINE`, loaded from its dist/engine/index.js) to compare two versions in one run.
 */
export interface EngineModule {
  MatchingEngine: typeof MatchingEngine;
  SequentialIdGenerator: typeof SequentialIdGenerator;
}

/** Accounts the product spreads orders over (funded without limit), as the anchor's adapter. */
const ACCOUNTS = 3_000;
const clock: Clock = { now: () => Date.now() };

/**
 * This engine through its public commands: harness "buy" is BUY YES at p (bid), "sell" is SELL YES
 * at p (ask), account `id % 3000`. Harness ids map to engine order ids in an array, filled
 * with '' up front (a packed array: growing it per order would be timed as the engine's cost).
 *
 * Every result is read as EngineRuntime reads it: the order's id, and each of its events, walked
 * and switched on by type (the runtime's open-order index does that before it keeps them for the
 * commit). So whatever the engine defers until events are read is timed here too.
 */
export function productAdapter(
  maxId: number,
  engines: EngineModule = { MatchingEngine, SequentialIdGenerator },
  name = 'product',
): EngineAdapter {
  const fresh = () =>
    new engines.MatchingEngine({ clock, ids: new engines.SequentialIdGenerator() });
  let engine = fresh();
  let markets: string[] = [];
  let accounts: string[] = [];
  let ids: string[] = [];
  /** Events read (kept, so the reads cannot be optimised away). */
  let seen = 0;
  const consume = (r: Result): void => {
    if (!r.ok) return;
    for (const e of r.events) if (e.type === 'order.accepted' || e.type === 'trade') seen++;
  };
  const place = (
    market: number,
    id: number,
    buy: boolean,
    price: number,
    qty: number,
    ioc: boolean,
  ): void => {
    const r = engine.placeOrder({
      accountId: accounts[id % ACCOUNTS],
      marketId: markets[market],
      action: buy ? 'BUY' : 'SELL',
      side: 'YES',
      type: 'LIMIT',
      price,
      quantity: qty,
      timeInForce: ioc ? 'IOC' : 'GTC',
    });
    consume(r);
    if (r.ok) ids[id] = r.order.id;
  };
  return {
    name,
    create(marketCount) {
      engine = fresh();
      markets = Array.from({ length: marketCount }, (_, i) => `mkt_${i}`);
      for (const m of markets) engine.addMarket(m);
      accounts = Array.from({ length: ACCOUNTS }, (_, i) => `acc_${i}`);
      for (const a of accounts) engine.createAccount(a, 1e12);
      ids = Array.from({ length: maxId + 1 }, () => '');
    },
    limit: (m, id, buy, p, q) => place(m, id, buy, p, q, false),
    ioc: (m, id, buy, p, q) => place(m, id, buy, p, q, true),
    cancel(_m, id) {
      const o = ids[id];
      if (o !== '') consume(engine.cancelOrder(o));
    },
    reduce(_m, id, newQty) {
      const o = ids[id];
      if (o !== '') consume(engine.amendOrder(o, { quantity: newQty }));
    },
    liveOrders: () => (seen >= 0 ? engine.openOrderCount() : 0),
  };
}

/**
 * The npm package nodejs-order-book 10.1.1: one OrderBook per market, string ids (pre-built, so
 * no conversion is timed). Its modify() cancels and re-adds, so its fills drift a little from the
 * reference book's.
 */
const IOC = 'IOC' as LimitOrderOptions['timeInForce'];

export function peerAdapter(maxId: number): EngineAdapter {
  const str: string[] = Array.from({ length: maxId + 1 }, (_, i) => String(i));
  let books: OrderBook[] = [];
  return {
    name: 'nodejs-order-book',
    create(marketCount) {
      books = Array.from({ length: marketCount }, () => new OrderBook());
    },
    limit(m, id, buy, price, size) {
      books[m].limit({ id: str[id], side: buy ? Side.BUY : Side.SELL, size, price });
    },
    ioc(m, id, buy, price, size) {
      books[m].limit({
        id: str[id],
        side: buy ? Side.BUY : Side.SELL,
        size,
        price,
        timeInForce: IOC,
      });
    },
    cancel(m, id) {
      books[m].cancel(str[id]);
    },
    reduce(m, id, newQty) {
      books[m].modify(str[id], { size: newQty });
    },
    liveOrders() {
      let live = 0;
      for (const b of books) {
        live += Object.keys((b as unknown as { orders: object }).orders ?? {}).length;
      }
      return live;
    },
  };
}
