import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { Rig, standardRig } from './testing.js';

let rig: Rig;
beforeEach(() => {
  rig = standardRig();
  rig.limit('bob', 'm1', 'SELL', 'YES', 50, 10);
  rig.limit('carol', 'm1', 'SELL', 'YES', 52, 10);
});
afterEach(() => {
  // No crossed book, money conserved, and the state rebuilt from the events matches.
  expect(rig.violations()).toEqual([]);
});

describe('forced partial fill (fillLimit)', () => {
  it('takes at most fillLimit contracts, then cancels the rest with SCENARIO instead of resting', () => {
    const r = rig.ok(
      rig.engine.placeOrder({
        accountId: 'alice',
        marketId: 'm1',
        action: 'BUY',
        side: 'YES',
        type: 'LIMIT',
        price: 60,
        quantity: 15,
        fillLimit: 12,
      }),
    );
    expect(r.order).toMatchObject({
      quantity: 15,
      filledQuantity: 12,
      status: 'CANCELLED',
      cancelReason: 'SCENARIO',
    });
    expect(Rig.only(r.events, 'trade').map((t) => [t.price, t.quantity])).toEqual([
      [50, 10],
      [52, 2],
    ]);
    expect(Rig.only(r.events, 'order.cancelled')).toMatchObject([
      { reason: 'SCENARIO', filledQuantity: 12, cancelledQuantity: 3 },
    ]);
    expect(Rig.only(r.events, 'order.rested')).toEqual([]);
    expect(rig.engine.openOrders('alice')).toEqual([]);
    // Nothing stays reserved for the cancelled remainder.
    expect(rig.engine.getAccount('alice')!.reserved).toBe(0);
  });

  it('fills only what the book holds within the limit; the rest is cancelled', () => {
    const r = rig.ok(
      rig.engine.placeOrder({
        accountId: 'alice',
        marketId: 'm1',
        action: 'BUY',
        side: 'YES',
        type: 'LIMIT',
        price: 50,
        quantity: 30,
        fillLimit: 25,
        timeInForce: 'GTC',
      }),
    );
    expect(r.order).toMatchObject({
      filledQuantity: 10,
      status: 'CANCELLED',
      cancelReason: 'SCENARIO',
    });
  });

  it('a limit at or above the quantity fills the whole order when the book can', () => {
    const r = rig.ok(
      rig.engine.placeOrder({
        accountId: 'alice',
        marketId: 'm1',
        action: 'BUY',
        side: 'YES',
        type: 'MARKET',
        quantity: 5,
        fillLimit: 50,
      }),
    );
    expect(r.order).toMatchObject({ filledQuantity: 5, status: 'FILLED', cancelReason: null });
  });

  it('refuses a fillLimit that is not a positive integer, changing nothing', () => {
    const r = rig.engine.placeOrder({
      accountId: 'alice',
      marketId: 'm1',
      action: 'BUY',
      side: 'YES',
      type: 'LIMIT',
      price: 60,
      quantity: 5,
      fillLimit: 0,
    });
    expect(r).toMatchObject({ ok: false, code: 'INVALID_ORDER' });
    expect(rig.engine.depth('m1')!.asks).toEqual([
      { price: 50, quantity: 10 },
      { price: 52, quantity: 10 },
    ]);
  });
});
