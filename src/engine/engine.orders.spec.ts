import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { Rig, standardRig } from './testing.js';

let rig: Rig;
beforeEach(() => {
  rig = standardRig();
});
afterEach(() => {
  expect(rig.violations()).toEqual([]);
});

const trades = () => Rig.only(rig.events, 'trade');
const makers = () => trades().map((t) => [t.makerAccountId, t.price, t.quantity]);

describe('amend', () => {
  let bobAsk: string;
  beforeEach(() => {
    bobAsk = rig.id(rig.limit('bob', 'm1', 'SELL', 'YES', 50, 10));
    rig.limit('carol', 'm1', 'SELL', 'YES', 50, 10);
  });

  it('lowering the quantity keeps time priority', () => {
    const r = rig.ok(rig.engine.amendOrder(bobAsk, { quantity: 6 }));
    expect(r.order).toMatchObject({ quantity: 6, remainingQuantity: 6 });
    expect(Rig.only(r.events, 'order.amended')).toMatchObject([{ requeued: false, quantity: 6 }]);
    rig.limit('alice', 'm1', 'BUY', 'YES', 50, 5);
    expect(makers()).toEqual([['bob', 50, 5]]);
    expect(rig.engine.depth('m1')!.asks).toEqual([{ price: 50, quantity: 11 }]);
  });

  it('raising the quantity re-queues at the back', () => {
    const seq = rig.engine.getOrder(bobAsk)!.sequence;
    const r = rig.ok(rig.engine.amendOrder(bobAsk, { quantity: 20 }));
    expect(r.order.sequence).toBeGreaterThan(seq);
    rig.limit('alice', 'm1', 'BUY', 'YES', 50, 15);
    expect(makers()).toEqual([
      ['carol', 50, 10],
      ['bob', 50, 5],
    ]);
  });

  it('a new price re-queues and trades as a taker at the resting price when it crosses', () => {
    const bid = rig.id(rig.limit('dave', 'm1', 'BUY', 'YES', 40, 10));
    rig.ok(rig.engine.amendOrder(bobAsk, { price: 51 }));
    const r = rig.ok(rig.engine.amendOrder(bid, { price: 51 }));
    expect(r.events.map((e) => e.type).slice(0, 3)).toEqual([
      'book.level',
      'order.amended',
      'trade',
    ]);
    expect(makers()).toEqual([['carol', 50, 10]]);
    expect(r.order).toMatchObject({ status: 'FILLED', price: 51, filledQuantity: 10 });
    expect(rig.engine.getOrder(bid)).toMatchObject({ status: 'FILLED' });
  });

  it('keeps the filled quantity and needs a total above it', () => {
    rig.limit('alice', 'm1', 'BUY', 'YES', 50, 4);
    expect(rig.engine.amendOrder(bobAsk, { quantity: 4 })).toMatchObject({ code: 'INVALID_ORDER' });
    const r = rig.ok(rig.engine.amendOrder(bobAsk, { quantity: 5 }));
    expect(r.order).toMatchObject({
      filledQuantity: 4,
      remainingQuantity: 1,
      status: 'PARTIALLY_FILLED',
    });
  });

  it('rejects no-change, closed, unknown and foreign orders', () => {
    expect(rig.engine.amendOrder(bobAsk, {})).toMatchObject({ code: 'AMEND_NO_CHANGE' });
    expect(rig.engine.amendOrder(bobAsk, { price: 50, quantity: 10 })).toMatchObject({
      code: 'AMEND_NO_CHANGE',
    });
    expect(rig.engine.amendOrder('nope', { price: 40 })).toMatchObject({ code: 'UNKNOWN_ORDER' });
    expect(rig.engine.amendOrder(bobAsk, { price: 40 }, 'alice')).toMatchObject({
      code: 'UNKNOWN_ORDER',
    });
    expect(rig.engine.amendOrder(bobAsk, { price: 0 })).toMatchObject({ code: 'INVALID_ORDER' });
    rig.limit('alice', 'm1', 'BUY', 'YES', 50, 10);
    expect(rig.engine.amendOrder(bobAsk, { price: 45 })).toMatchObject({ code: 'ORDER_NOT_OPEN' });
  });

  it('post-only amends may not cross', () => {
    const po = rig.id(rig.limit('dave', 'm1', 'BUY', 'YES', 45, 5, { postOnly: true }));
    expect(rig.engine.amendOrder(po, { price: 50 })).toMatchObject({
      code: 'POST_ONLY_WOULD_CROSS',
    });
    expect(rig.engine.getOrder(po)).toMatchObject({ price: 45, status: 'OPEN' });
  });

  it('checks funds for the amended order and changes nothing on failure', () => {
    rig.addAccount('eve', 1_000);
    const o = rig.id(rig.limit('eve', 'm1', 'BUY', 'YES', 40, 20));
    expect(rig.engine.available('eve')).toBe(200);
    // 20 @ 51 = 1,020 reserved instead of 800: 220 more, of the 200 available.
    expect(rig.engine.amendOrder(o, { price: 51 })).toMatchObject({
      code: 'INSUFFICIENT_FUNDS',
      funds: { required: 220, available: 200 },
    });
    expect(rig.engine.getOrder(o)).toMatchObject({ price: 40, quantity: 20 });
    expect(rig.engine.reserved('eve')).toBe(800);
    rig.ok(rig.engine.amendOrder(o, { price: 45, quantity: 22 }));
    expect(rig.engine.reserved('eve')).toBe(990);
  });
});

describe('cancel', () => {
  it('removes the order, releases the reserve and cannot be repeated', () => {
    const o = rig.id(rig.limit('alice', 'm1', 'BUY', 'NO', 30, 10));
    expect(rig.engine.reserved('alice')).toBe(300);
    expect(rig.engine.cancelOrder(o, 'bob')).toMatchObject({ code: 'UNKNOWN_ORDER' });
    const r = rig.ok(rig.engine.cancelOrder(o, 'alice'));
    expect(r.order).toMatchObject({
      status: 'CANCELLED',
      cancelReason: 'USER',
      remainingQuantity: 0,
    });
    expect(r.events).toEqual([
      expect.objectContaining({ type: 'order.cancelled', reason: 'USER', cancelledQuantity: 10 }),
      { type: 'book.level', marketId: 'm1', side: 'ASK', price: 70, quantity: 0 },
    ]);
    expect(rig.engine.reserved('alice')).toBe(0);
    expect(rig.engine.cancelOrder(o)).toMatchObject({ code: 'ORDER_NOT_OPEN' });
    expect(rig.engine.cancelOrder('ord_404')).toMatchObject({ code: 'UNKNOWN_ORDER' });
  });

  it('keeps the rest of the level in order', () => {
    const a = rig.id(rig.limit('alice', 'm1', 'SELL', 'YES', 60, 1));
    rig.limit('bob', 'm1', 'SELL', 'YES', 60, 2);
    rig.limit('carol', 'm1', 'SELL', 'YES', 60, 3);
    rig.ok(rig.engine.cancelOrder(a));
    rig.limit('dave', 'm1', 'BUY', 'YES', 60, 5);
    expect(makers()).toEqual([
      ['bob', 60, 2],
      ['carol', 60, 3],
    ]);
  });
});

describe('cancel all', () => {
  beforeEach(() => {
    rig.limit('alice', 'm1', 'BUY', 'YES', 40, 1);
    rig.limit('alice', 'm1', 'SELL', 'YES', 60, 1);
    rig.limit('alice', 'm2', 'BUY', 'YES', 40, 1);
    rig.limit('bob', 'm1', 'BUY', 'YES', 41, 1);
  });

  it('cancels every order of the account only', () => {
    const r = rig.ok(rig.engine.cancelAll('alice'));
    expect(r.cancelled).toBe(3);
    expect(Rig.only(r.events, 'order.cancelled').every((e) => e.reason === 'CANCEL_ALL')).toBe(
      true,
    );
    expect(rig.engine.openOrders('alice')).toEqual([]);
    expect(rig.engine.openOrders('bob')).toHaveLength(1);
    expect(rig.engine.reserved('alice')).toBe(0);
  });

  it('can be limited to one market', () => {
    const r = rig.ok(rig.engine.cancelAll('alice', 'm1'));
    expect(r.cancelled).toBe(2);
    expect(rig.engine.openOrders('alice').map((o) => o.marketId)).toEqual(['m2']);
    expect(rig.engine.cancelAll('alice', 'nope')).toMatchObject({ code: 'UNKNOWN_MARKET' });
    expect(rig.engine.cancelAll('nobody')).toMatchObject({ code: 'UNKNOWN_ACCOUNT' });
  });
});

describe('cancel by tag', () => {
  beforeEach(() => {
    rig.limit('alice', 'm1', 'BUY', 'YES', 40, 1, { tag: 'key1' });
    rig.limit('alice', 'm1', 'BUY', 'YES', 41, 1, { tag: 'key2' });
    rig.limit('alice', 'm2', 'BUY', 'YES', 42, 1, { tag: 'key1' });
    rig.limit('alice', 'm2', 'BUY', 'YES', 43, 1);
  });

  it('cancels the orders carrying the tag (cancel-on-disconnect)', () => {
    const r = rig.ok(rig.engine.cancelByTag('alice', 'key1'));
    expect(r.cancelled).toBe(2);
    expect(Rig.only(r.events, 'order.cancelled').map((e) => e.reason)).toEqual([
      'CANCEL_BY_TAG',
      'CANCEL_BY_TAG',
    ]);
    expect(
      rig.engine
        .openOrders('alice')
        .map((o) => o.tag)
        .sort(),
    ).toEqual(['key2', null]);
  });

  it('accepts a predicate and a market filter', () => {
    const r = rig.ok(rig.engine.cancelByTag('alice', (t) => t === null || t === 'key1', 'm2'));
    expect(r.cancelled).toBe(2);
    expect(
      rig.engine
        .openOrders('alice')
        .map((o) => o.tag)
        .sort(),
    ).toEqual(['key1', 'key2']);
  });
});

describe('market not open', () => {
  it('rejects orders and amends but lets cancels through', () => {
    const o = rig.id(rig.limit('alice', 'm1', 'BUY', 'YES', 40, 5));
    for (const status of ['HALTED', 'CLOSED'] as const) {
      rig.ok(rig.engine.setMarketStatus('m1', status));
      expect(rig.limit('bob', 'm1', 'SELL', 'YES', 40, 5)).toMatchObject({
        code: 'MARKET_NOT_OPEN',
      });
      expect(rig.marketOrder('bob', 'm1', 'SELL', 'YES', 5)).toMatchObject({
        code: 'MARKET_NOT_OPEN',
      });
      expect(rig.engine.amendOrder(o, { price: 41 })).toMatchObject({ code: 'MARKET_NOT_OPEN' });
    }
    rig.ok(rig.engine.cancelOrder(o));
    rig.ok(rig.engine.setMarketStatus('m1', 'OPEN'));
    expect(rig.limit('bob', 'm1', 'SELL', 'YES', 40, 5)).toMatchObject({ ok: true });
  });

  it('rejects unknown markets and accounts', () => {
    expect(rig.limit('alice', 'zz', 'BUY', 'YES', 40, 5)).toMatchObject({ code: 'UNKNOWN_MARKET' });
    expect(rig.limit('zed', 'm1', 'BUY', 'YES', 40, 5)).toMatchObject({ code: 'UNKNOWN_ACCOUNT' });
    expect(rig.engine.setMarketStatus('zz', 'OPEN')).toMatchObject({ code: 'UNKNOWN_MARKET' });
    expect(rig.engine.addMarket('m1')).toMatchObject({ code: 'DUPLICATE_MARKET' });
  });
});

describe('quote', () => {
  it('predicts a MARKET order exactly without changing anything', () => {
    rig.limit('bob', 'm1', 'BUY', 'YES', 45, 10);
    rig.limit('bob', 'm1', 'BUY', 'YES', 43, 10);
    const before = rig.engine.depth('m1');
    const q = rig.ok(
      rig.engine.quote({
        accountId: 'alice',
        marketId: 'm1',
        action: 'BUY',
        side: 'NO',
        type: 'MARKET',
        quantity: 15,
      }),
    ).quote;
    expect(q).toEqual({
      filledQuantity: 15,
      averagePrice: (550 + 5 * 57) / 15,
      cost: 550 + 5 * 57,
      levels: [
        { price: 55, quantity: 10 },
        { price: 57, quantity: 5 },
      ],
      levelsWalked: 2,
      fullyFilled: true,
      cashDelta: -(550 + 5 * 57),
    });
    expect(rig.engine.depth('m1')).toEqual(before);
    const r = rig.marketOrder('alice', 'm1', 'BUY', 'NO', 15);
    expect(r.ok && r.order.fillCost).toBe(q.cost);
    expect(rig.engine.balance('alice')).toBe(1_000_000 + q.cashDelta!);
  });

  it('quotes zero for an unfillable FOK and respects limits', () => {
    rig.limit('bob', 'm1', 'SELL', 'YES', 60, 10);
    const base = { marketId: 'm1', action: 'BUY', side: 'YES', type: 'LIMIT', price: 59 } as const;
    expect(rig.ok(rig.engine.quote({ ...base, quantity: 5 })).quote.filledQuantity).toBe(0);
    const fok = rig.ok(rig.engine.quote({ ...base, price: 60, quantity: 11, timeInForce: 'FOK' }));
    expect(fok.quote).toMatchObject({ filledQuantity: 0, fullyFilled: false, cashDelta: null });
  });
});

describe('closed-order retention', () => {
  it('forgets the oldest final orders and recycles them safely', () => {
    const small = new Rig(2);
    small.addAccount('a', 100_000);
    small.addMarket('m');
    const ids = [1, 2, 3].map((i) => small.id(small.limit('a', 'm', 'BUY', 'YES', 10 + i, 1)));
    const cancelled = ids.map((id) => small.ok(small.engine.cancelOrder(id)).order);
    expect(cancelled.map((o) => [o.id, o.status, o.bookPrice])).toEqual([
      [ids[0], 'CANCELLED', 11],
      [ids[1], 'CANCELLED', 12],
      [ids[2], 'CANCELLED', 13],
    ]);
    expect(small.engine.getOrder(ids[0])).toBeUndefined();
    expect(small.engine.cancelOrder(ids[0])).toMatchObject({ code: 'UNKNOWN_ORDER' });
    expect(small.engine.cancelOrder(ids[2])).toMatchObject({ code: 'ORDER_NOT_OPEN' });
    const next = small.ok(small.limit('a', 'm', 'BUY', 'YES', 20, 1)).order;
    expect(next).toMatchObject({ status: 'OPEN', filledQuantity: 0, price: 20 });
    expect(small.engine.getOrder(ids[1])).toMatchObject({ status: 'CANCELLED', bookPrice: 12 });
    expect(small.violations()).toEqual([]);
  });

  it('returns correct results with no retention at all', () => {
    const none = new Rig(0);
    none.addAccount('a', 100_000);
    none.addAccount('b', 100_000);
    none.addMarket('m');
    const maker = none.id(none.limit('a', 'm', 'SELL', 'YES', 40, 5));
    const taker = none.ok(none.limit('b', 'm', 'BUY', 'YES', 45, 5, { timeInForce: 'IOC' })).order;
    expect(taker).toMatchObject({ status: 'FILLED', fillCost: 200 });
    expect(none.engine.getOrder(maker)).toBeUndefined();
    expect(none.engine.cancelOrder(maker)).toMatchObject({ code: 'UNKNOWN_ORDER' });
    expect(none.violations()).toEqual([]);
  });
});
