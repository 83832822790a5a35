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
const balance = (id: string) => rig.engine.balance(id)!;

describe('price-time priority', () => {
  it('fills the earlier order at a level first', () => {
    const b = rig.id(rig.limit('bob', 'm1', 'SELL', 'YES', 50, 10));
    const c = rig.id(rig.limit('carol', 'm1', 'SELL', 'YES', 50, 10));
    const a = rig.id(rig.limit('alice', 'm1', 'BUY', 'YES', 50, 15));
    expect(trades().map((t) => [t.makerOrderId, t.takerOrderId, t.quantity])).toEqual([
      [b, a, 10],
      [c, a, 5],
    ]);
    expect(rig.engine.getOrder(c)).toMatchObject({
      status: 'PARTIALLY_FILLED',
      remainingQuantity: 5,
    });
    expect(rig.engine.getOrder(a)).toMatchObject({ status: 'FILLED', remainingQuantity: 0 });
  });

  it('fills the better price first on both sides', () => {
    rig.limit('bob', 'm1', 'SELL', 'YES', 52, 10);
    rig.limit('carol', 'm1', 'SELL', 'YES', 51, 10);
    rig.limit('alice', 'm1', 'BUY', 'YES', 52, 15);
    rig.limit('bob', 'm1', 'BUY', 'YES', 40, 10);
    rig.limit('carol', 'm1', 'BUY', 'YES', 41, 10);
    rig.limit('dave', 'm1', 'SELL', 'YES', 40, 15);
    expect(trades().map((t) => [t.makerAccountId, t.price, t.quantity])).toEqual([
      ['carol', 51, 10],
      ['bob', 52, 5],
      ['carol', 41, 10],
      ['bob', 40, 5],
    ]);
  });
});

describe('trades print at the resting price', () => {
  it('a bid taker pays the resting ask price', () => {
    rig.limit('bob', 'm1', 'SELL', 'YES', 40, 10);
    rig.limit('alice', 'm1', 'BUY', 'YES', 60, 10);
    expect(trades().map((t) => t.price)).toEqual([40]);
    expect(balance('alice')).toBe(1_000_000 - 400);
    expect(rig.engine.marketSummary('m1')).toMatchObject({ lastPrice: 40, volume: 10 });
  });

  it('an ask taker receives the resting bid price', () => {
    rig.limit('bob', 'm1', 'BUY', 'YES', 60, 10);
    rig.limit('alice', 'm1', 'SELL', 'YES', 40, 10);
    expect(trades().map((t) => [t.price, t.takerBookSide])).toEqual([[60, 'ASK']]);
    // alice opens NO at 100 - 60 = 40 per contract.
    expect(balance('alice')).toBe(1_000_000 - 400);
    expect(rig.engine.position('alice', 'm1')).toMatchObject({ yes: 0, no: 10, noCost: 400 });
  });
});

describe('book side mapping', () => {
  it.each([
    ['BUY', 'YES', 30, 'BID', 30],
    ['SELL', 'NO', 30, 'BID', 70],
    ['SELL', 'YES', 30, 'ASK', 30],
    ['BUY', 'NO', 30, 'ASK', 70],
  ] as const)('%s %s %i rests as %s at YES %i', (action, side, price, bookSide, bookPrice) => {
    const r = rig.limit('alice', 'm1', action, side, price, 5);
    expect(r.ok && r.order).toMatchObject({ bookSide, bookPrice, price, status: 'OPEN' });
    const depth = rig.engine.depth('m1', 5)!;
    expect(bookSide === 'BID' ? depth.bids : depth.asks).toEqual([
      { price: bookPrice, quantity: 5 },
    ]);
  });

  it('BUY YES 60 meets BUY NO 40 at YES 60: each pays its own price', () => {
    rig.limit('alice', 'm1', 'BUY', 'YES', 60, 10);
    const r = rig.limit('bob', 'm1', 'BUY', 'NO', 40, 10);
    expect(trades().map((t) => t.price)).toEqual([60]);
    expect(r.ok && r.order).toMatchObject({
      status: 'FILLED',
      averageFillPrice: 40,
      fillCost: 400,
    });
    expect(balance('alice')).toBe(1_000_000 - 600);
    expect(balance('bob')).toBe(1_000_000 - 400);
    expect(rig.engine.position('alice', 'm1')).toMatchObject({ yes: 10, no: 0 });
    expect(rig.engine.position('bob', 'm1')).toMatchObject({ yes: 0, no: 10, noAveragePrice: 40 });
  });

  it('SELL NO without holding opens YES; SELL YES without holding opens NO', () => {
    rig.limit('alice', 'm1', 'SELL', 'NO', 35, 10); // bid at YES 65
    rig.limit('bob', 'm1', 'SELL', 'YES', 65, 10);
    expect(trades().map((t) => t.price)).toEqual([65]);
    expect(rig.engine.position('alice', 'm1')).toMatchObject({ yes: 10, yesCost: 650 });
    expect(rig.engine.position('bob', 'm1')).toMatchObject({ no: 10, noCost: 350 });
    expect(balance('alice')).toBe(1_000_000 - 650);
    expect(balance('bob')).toBe(1_000_000 - 350);
  });
});

describe('partial fills', () => {
  it('leaves the maker partially filled at the front of its level', () => {
    const a = rig.id(rig.limit('alice', 'm1', 'BUY', 'YES', 50, 100));
    rig.limit('bob', 'm1', 'SELL', 'YES', 50, 30);
    expect(rig.engine.getOrder(a)).toMatchObject({
      status: 'PARTIALLY_FILLED',
      filledQuantity: 30,
      remainingQuantity: 70,
      averageFillPrice: 50,
    });
    expect(rig.engine.depth('m1')!.bids).toEqual([{ price: 50, quantity: 70 }]);
    const updates = Rig.only(rig.events, 'order.updated').filter((e) => e.orderId === a);
    expect(updates.at(-1)).toMatchObject({ filledQuantity: 30, remainingQuantity: 70 });
  });

  it('rests the taker remainder after a partial fill', () => {
    rig.limit('bob', 'm1', 'SELL', 'YES', 50, 30);
    const r = rig.limit('alice', 'm1', 'BUY', 'YES', 55, 100);
    expect(r.ok && r.order).toMatchObject({ status: 'PARTIALLY_FILLED', remainingQuantity: 70 });
    expect(rig.engine.depth('m1')!.bids).toEqual([{ price: 55, quantity: 70 }]);
  });
});

describe('time in force and post-only', () => {
  beforeEach(() => {
    rig.limit('bob', 'm1', 'SELL', 'YES', 50, 10);
    rig.limit('bob', 'm1', 'SELL', 'YES', 52, 10);
  });

  it('IOC fills what it can and expires the rest', () => {
    const r = rig.limit('alice', 'm1', 'BUY', 'YES', 51, 15, { timeInForce: 'IOC' });
    expect(r.ok && r.order).toMatchObject({ status: 'EXPIRED', filledQuantity: 10 });
    const exp = Rig.only(rig.events, 'order.expired');
    expect(exp).toMatchObject([{ filledQuantity: 10, expiredQuantity: 5 }]);
    expect(rig.engine.depth('m1')!.bids).toEqual([]);
  });

  it('FOK that cannot fill completely fills nothing and expires', () => {
    const r = rig.limit('alice', 'm1', 'BUY', 'YES', 51, 15, { timeInForce: 'FOK' });
    expect(r.ok && r.order).toMatchObject({ status: 'EXPIRED', filledQuantity: 0 });
    expect(trades()).toEqual([]);
    expect(rig.engine.depth('m1')!.asks).toEqual([
      { price: 50, quantity: 10 },
      { price: 52, quantity: 10 },
    ]);
  });

  it('FOK that can fill completely fills across levels', () => {
    const r = rig.limit('alice', 'm1', 'BUY', 'YES', 52, 15, { timeInForce: 'FOK' });
    expect(r.ok && r.order).toMatchObject({ status: 'FILLED', fillCost: 500 + 260 });
  });

  it('post-only that would cross is rejected with no effect', () => {
    const before = rig.events.length;
    const r = rig.limit('alice', 'm1', 'BUY', 'YES', 50, 5, { postOnly: true });
    expect(r).toMatchObject({ ok: false, code: 'POST_ONLY_WOULD_CROSS' });
    expect(rig.events.length).toBe(before);
    expect(rig.engine.depth('m1')!.bids).toEqual([]);
    const ok = rig.limit('alice', 'm1', 'BUY', 'YES', 49, 5, { postOnly: true });
    expect(ok.ok && ok.order).toMatchObject({ status: 'OPEN', postOnly: true });
  });

  it('rejects post-only with IOC/FOK or MARKET', () => {
    expect(
      rig.limit('alice', 'm1', 'BUY', 'YES', 40, 5, { postOnly: true, timeInForce: 'IOC' }),
    ).toMatchObject({ ok: false, code: 'INVALID_ORDER' });
    expect(rig.marketOrder('alice', 'm1', 'BUY', 'YES', 5, { postOnly: true })).toMatchObject({
      ok: false,
      code: 'INVALID_ORDER',
    });
  });
});

describe('MARKET orders walk the book', () => {
  beforeEach(() => {
    rig.limit('bob', 'm1', 'SELL', 'YES', 50, 10);
    rig.limit('bob', 'm1', 'SELL', 'YES', 52, 10);
    rig.limit('carol', 'm1', 'SELL', 'YES', 55, 10);
  });

  it('walks multiple levels with slippage', () => {
    const r = rig.marketOrder('alice', 'm1', 'BUY', 'YES', 25);
    expect(r.ok && r.order).toMatchObject({
      status: 'FILLED',
      price: null,
      bookPrice: null,
      timeInForce: 'IOC',
      fillCost: 500 + 520 + 275,
      averageFillPrice: 1295 / 25,
    });
    expect(trades().map((t) => [t.price, t.quantity])).toEqual([
      [50, 10],
      [52, 10],
      [55, 5],
    ]);
  });

  it('expires what the book cannot fill', () => {
    const r = rig.marketOrder('alice', 'm1', 'BUY', 'YES', 40);
    expect(r.ok && r.order).toMatchObject({ status: 'EXPIRED', filledQuantity: 30 });
    expect(rig.engine.depth('m1')!.asks).toEqual([]);
  });

  it('MARKET FOK fills nothing if the book is short', () => {
    const r = rig.marketOrder('alice', 'm1', 'BUY', 'YES', 40, { timeInForce: 'FOK' });
    expect(r.ok && r.order).toMatchObject({ status: 'EXPIRED', filledQuantity: 0 });
  });

  it('BUY NO walks the bids from the best', () => {
    rig.limit('carol', 'm1', 'BUY', 'YES', 45, 10);
    rig.limit('carol', 'm1', 'BUY', 'YES', 44, 10);
    const r = rig.marketOrder('alice', 'm1', 'BUY', 'NO', 15);
    expect(trades().map((t) => [t.price, t.quantity])).toEqual([
      [45, 10],
      [44, 5],
    ]);
    expect(r.ok && r.order).toMatchObject({ fillCost: 550 + 280, status: 'FILLED' });
  });

  it('is rejected when the account cannot pay for the whole walk', () => {
    rig.addAccount('poor', 1_000);
    const r = rig.marketOrder('poor', 'm1', 'BUY', 'YES', 25);
    expect(r).toMatchObject({ ok: false, code: 'INSUFFICIENT_FUNDS' });
    expect(trades()).toEqual([]);
    // 10 @ 50 + 9 @ 52 = 968 fits in 1,000; one more contract would not.
    // 10 @ 50 + 10 @ 52 = 1,020 of the 1,000 available.
    expect(rig.marketOrder('poor', 'm1', 'BUY', 'YES', 20)).toEqual({
      ok: false,
      code: 'INSUFFICIENT_FUNDS',
      message: 'market order walk exceeds available balance',
      funds: { required: 1_020, available: 1_000 },
    });
    expect(rig.marketOrder('poor', 'm1', 'BUY', 'YES', 19)).toMatchObject({ ok: true });
    expect(balance('poor')).toBe(32);
  });

  it('expires at once on an empty book and rejects malformed orders', () => {
    const r = rig.marketOrder('alice', 'm2', 'SELL', 'YES', 5);
    expect(r.ok && r.order).toMatchObject({ status: 'EXPIRED', filledQuantity: 0 });
    expect(rig.marketOrder('alice', 'm1', 'BUY', 'YES', 5, { timeInForce: 'GTC' })).toMatchObject({
      code: 'INVALID_ORDER',
    });
    const withPrice = rig.engine.placeOrder({
      accountId: 'alice',
      marketId: 'm1',
      action: 'BUY',
      side: 'YES',
      type: 'MARKET',
      price: 50,
      quantity: 1,
    });
    expect(withPrice).toMatchObject({ ok: false, code: 'INVALID_ORDER' });
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(rig.limit('alice', 'm1', 'BUY', 'YES', 50, bad)).toMatchObject({
        code: 'INVALID_ORDER',
      });
      expect(rig.limit('alice', 'm1', 'BUY', 'YES', bad, 1)).toMatchObject({
        code: 'INVALID_ORDER',
      });
    }
    expect(rig.limit('alice', 'm1', 'BUY', 'YES', 100, 1)).toMatchObject({ code: 'INVALID_ORDER' });
  });
});
