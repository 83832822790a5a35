import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { HouseMarketMaker } from './house-market-maker.js';
import { AccountState, LEVELS_THRESHOLD, PositionState } from './ledger.js';
import type { BookOrder } from './order.js';
import { ownRestingLevels, selfTradeAction } from './self-trade.js';
import { Rig, standardRig } from './testing.js';

let rig: Rig;
beforeEach(() => {
  rig = standardRig();
});
afterEach(() => {
  // Money conserved, reserves equal to a from-scratch recomputation, book not crossed, the event
  // mirror equal to the engine, and no trade with the same account on both sides.
  expect(rig.violations()).toEqual([]);
});

const START = 1_000_000;
const trades = () => Rig.only(rig.events, 'trade');
const order = (id: string) => rig.engine.getOrder(id)!;
const account = (id: string) => rig.engine.getAccount(id)!;
const stpCancels = () =>
  Rig.only(rig.events, 'order.cancelled').filter((e) => e.reason === 'SELF_TRADE_PREVENTION');

describe('selfTradeAction', () => {
  it('lets different accounts trade and applies the taker mode to the same account', () => {
    expect(selfTradeAction('a', 'b', 'CANCEL_BOTH')).toEqual({
      trade: true,
      cancelMaker: false,
      cancelTaker: false,
    });
    expect(selfTradeAction('a', 'a', 'CANCEL_TAKER')).toEqual({
      trade: false,
      cancelMaker: false,
      cancelTaker: true,
    });
    expect(selfTradeAction('a', 'a', 'CANCEL_MAKER')).toEqual({
      trade: false,
      cancelMaker: true,
      cancelTaker: false,
    });
    expect(selfTradeAction('a', 'a', 'CANCEL_BOTH')).toEqual({
      trade: false,
      cancelMaker: true,
      cancelTaker: true,
    });
  });
});

describe('CANCEL_TAKER (the default)', () => {
  it('cancels the incoming order and leaves the resting one', () => {
    const maker = rig.id(rig.limit('alice', 'm1', 'SELL', 'YES', 50, 10));
    const r = rig.limit('alice', 'm1', 'BUY', 'YES', 55, 5);
    expect(r.ok && r.order).toMatchObject({
      status: 'CANCELLED',
      cancelReason: 'SELF_TRADE_PREVENTION',
      selfTradePrevention: 'CANCEL_TAKER',
      filledQuantity: 0,
      remainingQuantity: 0,
    });
    expect(trades()).toEqual([]);
    expect(order(maker)).toMatchObject({ status: 'OPEN', remainingQuantity: 10 });
    // Only the resting ask is reserved: (100 - 50) x 10; the cancelled bid holds nothing.
    expect(account('alice')).toMatchObject({ balance: START, reserved: 500 });
    expect(stpCancels().map((e) => [e.orderId, e.cancelledQuantity])).toEqual([
      [r.ok && r.order.id, 5],
    ]);
  });

  it('keeps the fills made before the own order: better prices, then FIFO at its level', () => {
    rig.limit('bob', 'm1', 'SELL', 'YES', 48, 4);
    rig.limit('carol', 'm1', 'SELL', 'YES', 50, 3);
    const own = rig.id(rig.limit('alice', 'm1', 'SELL', 'YES', 50, 5));
    rig.limit('dave', 'm1', 'SELL', 'YES', 50, 7);
    const r = rig.limit('alice', 'm1', 'BUY', 'YES', 52, 20);
    expect(trades().map((t) => [t.makerAccountId, t.price, t.quantity])).toEqual([
      ['bob', 48, 4],
      ['carol', 50, 3],
    ]);
    expect(r.ok && r.order).toMatchObject({
      status: 'CANCELLED',
      cancelReason: 'SELF_TRADE_PREVENTION',
      filledQuantity: 7,
      fillCost: 48 * 4 + 50 * 3,
    });
    // dave, behind alice's own ask, is not reached.
    expect(order(own)).toMatchObject({ status: 'OPEN', remainingQuantity: 5 });
    expect(rig.engine.depth('m1', 5)!.asks).toEqual([{ price: 50, quantity: 12 }]);
    expect(rig.engine.position('alice', 'm1')!).toMatchObject({ yes: 7, no: 0 });
    expect(account('alice')).toMatchObject({ balance: START - 342 });
  });

  it('ends a market order at its own order and a re-queued amend as well', () => {
    rig.limit('bob', 'm1', 'BUY', 'YES', 45, 2);
    rig.limit('alice', 'm1', 'BUY', 'YES', 44, 5);
    const m = rig.marketOrder('alice', 'm1', 'SELL', 'YES', 10);
    expect(m.ok && m.order).toMatchObject({
      status: 'CANCELLED',
      cancelReason: 'SELF_TRADE_PREVENTION',
      filledQuantity: 2,
    });
    const ask = rig.id(rig.limit('alice', 'm1', 'SELL', 'YES', 60, 3));
    const a = rig.engine.amendOrder(ask, { price: 40 });
    rig.record(a);
    expect(a.ok && a.order).toMatchObject({
      status: 'CANCELLED',
      cancelReason: 'SELF_TRADE_PREVENTION',
      filledQuantity: 0,
    });
    expect(trades()).toHaveLength(1);
    expect(rig.engine.depth('m1', 5)).toMatchObject({ bids: [{ price: 44, quantity: 5 }] });
  });
});

describe('CANCEL_MAKER', () => {
  it('cancels each own resting order met, at several levels, and keeps matching', () => {
    const own50 = rig.id(rig.limit('alice', 'm1', 'SELL', 'YES', 50, 2));
    const own51 = rig.id(rig.limit('alice', 'm1', 'SELL', 'YES', 51, 2));
    rig.limit('bob', 'm1', 'SELL', 'YES', 51, 3);
    const own51b = rig.id(rig.limit('alice', 'm1', 'SELL', 'YES', 51, 4));
    rig.limit('carol', 'm1', 'SELL', 'YES', 52, 5);
    const far = rig.id(rig.limit('alice', 'm1', 'SELL', 'YES', 60, 1));
    const r = rig.limit('alice', 'm1', 'BUY', 'YES', 52, 8, {
      selfTradePrevention: 'CANCEL_MAKER',
    });
    expect(r.ok && r.order).toMatchObject({ status: 'FILLED', cancelReason: null });
    expect(trades().map((t) => [t.makerAccountId, t.price, t.quantity])).toEqual([
      ['bob', 51, 3],
      ['carol', 52, 5],
    ]);
    for (const id of [own50, own51, own51b]) {
      expect(order(id)).toMatchObject({
        status: 'CANCELLED',
        cancelReason: 'SELF_TRADE_PREVENTION',
      });
    }
    expect(stpCancels().map((e) => [e.orderId, e.cancelledQuantity])).toEqual([
      [own50, 2],
      [own51, 2],
      [own51b, 4],
    ]);
    // The ask out of reach still rests; its reserve is all that is held: 40 x 1 less the 8 YES
    // now held cover it, so nothing.
    expect(order(far)).toMatchObject({ status: 'OPEN' });
    expect(account('alice')).toMatchObject({ balance: START - 51 * 3 - 52 * 5, reserved: 0 });
  });

  it('lets a market order and a FOK walk past own orders to other accounts', () => {
    const own = rig.id(rig.limit('alice', 'm1', 'SELL', 'YES', 40, 5));
    rig.limit('bob', 'm1', 'SELL', 'YES', 45, 5);
    rig.limit('bob', 'm1', 'SELL', 'YES', 90, 5);
    const q = rig.engine.quote({
      accountId: 'alice',
      marketId: 'm1',
      action: 'BUY',
      side: 'YES',
      type: 'MARKET',
      quantity: 10,
      selfTradePrevention: 'CANCEL_MAKER',
    });
    expect(q.ok && q.quote).toMatchObject({ filledQuantity: 10, cost: 45 * 5 + 90 * 5 });
    const f = rig.limit('alice', 'm1', 'BUY', 'YES', 90, 10, {
      timeInForce: 'FOK',
      selfTradePrevention: 'CANCEL_MAKER',
    });
    expect(f.ok && f.order).toMatchObject({ status: 'FILLED', fillCost: 675 });
    expect(order(own)).toMatchObject({ status: 'CANCELLED' });
    expect(account('alice')).toMatchObject({ balance: START - 675, reserved: 0 });
  });

  it('prices a market order by its walk past own orders, to the cent', () => {
    // Each needs 5 of its available cash: 95 for bob's ask, less the 90 of its own ask's reserve
    // that 1 YES held covers. Its own ask at 10 would have looked like a profit of 80.
    for (const [who, balance, ok] of [
      ['erin', 904, false],
      ['fred', 905, true],
    ] as const) {
      rig.addAccount(who, balance);
      const own = rig.id(rig.limit(who, 'm2', 'SELL', 'YES', 10, 10));
      expect(rig.engine.available(who)).toBe(balance - 900);
      rig.limit('bob', 'm2', 'SELL', 'YES', 95, 1);
      const r = rig.marketOrder(who, 'm2', 'BUY', 'YES', 1, {
        selfTradePrevention: 'CANCEL_MAKER',
      });
      if (!ok) {
        expect(r).toMatchObject({ ok: false, code: 'INSUFFICIENT_FUNDS' });
        expect(order(own)).toMatchObject({ status: 'OPEN' });
        rig.ok(rig.engine.cancelOrder(own));
        continue;
      }
      expect(r.ok && r.order).toMatchObject({ status: 'FILLED', fillCost: 95 });
      expect(order(own)).toMatchObject({
        status: 'CANCELLED',
        cancelReason: 'SELF_TRADE_PREVENTION',
      });
      expect(account(who)).toMatchObject({ balance: balance - 95, reserved: 0 });
    }
  });
});

describe('CANCEL_BOTH', () => {
  it('cancels the first own resting order met and the incoming remainder', () => {
    rig.limit('bob', 'm1', 'SELL', 'YES', 49, 2);
    const own50 = rig.id(rig.limit('alice', 'm1', 'SELL', 'YES', 50, 5));
    const own51 = rig.id(rig.limit('alice', 'm1', 'SELL', 'YES', 51, 5));
    const r = rig.limit('alice', 'm1', 'BUY', 'YES', 51, 10, {
      selfTradePrevention: 'CANCEL_BOTH',
    });
    expect(trades().map((t) => [t.makerAccountId, t.quantity])).toEqual([['bob', 2]]);
    expect(r.ok && r.order).toMatchObject({
      status: 'CANCELLED',
      cancelReason: 'SELF_TRADE_PREVENTION',
      selfTradePrevention: 'CANCEL_BOTH',
      filledQuantity: 2,
    });
    expect(order(own50)).toMatchObject({
      status: 'CANCELLED',
      cancelReason: 'SELF_TRADE_PREVENTION',
    });
    expect(order(own51)).toMatchObject({ status: 'OPEN', remainingQuantity: 5 });
    // Left: alice holds 2 YES (paid 98) and rests 5 asks at 51, 2 of them covered by the YES.
    expect(account('alice')).toMatchObject({ balance: START - 98, reserved: 3 * 49 });
  });

  it('makes a FOK that would meet its own order fill nothing and change nothing', () => {
    rig.limit('bob', 'm1', 'SELL', 'YES', 49, 2);
    const own = rig.id(rig.limit('alice', 'm1', 'SELL', 'YES', 50, 5));
    rig.limit('carol', 'm1', 'SELL', 'YES', 50, 10);
    for (const mode of ['CANCEL_BOTH', 'CANCEL_TAKER'] as const) {
      const r = rig.limit('alice', 'm1', 'BUY', 'YES', 50, 6, {
        timeInForce: 'FOK',
        selfTradePrevention: mode,
      });
      expect(r.ok && r.order).toMatchObject({ status: 'EXPIRED', cancelReason: 'FOK_UNFILLABLE' });
    }
    expect(trades()).toEqual([]);
    expect(order(own)).toMatchObject({ status: 'OPEN', remainingQuantity: 5 });
  });
});

describe('the field', () => {
  it('refuses an unknown mode and keeps the mode across a restore', () => {
    const bad = rig.engine.placeOrder({
      accountId: 'alice',
      marketId: 'm1',
      action: 'BUY',
      side: 'YES',
      type: 'LIMIT',
      price: 50,
      quantity: 1,
      selfTradePrevention: 'NONE' as never,
    });
    expect(bad).toMatchObject({ ok: false, code: 'INVALID_ORDER' });
    const o = rig.limit('alice', 'm1', 'BUY', 'YES', 40, 3, {
      selfTradePrevention: 'CANCEL_MAKER',
    });
    expect(o.ok && o.order.selfTradePrevention).toBe('CANCEL_MAKER');
    const b = standardRig().engine;
    const snap = rig.engine.getOrder(rig.id(o))!;
    const input = { ...snap, price: snap.price! };
    expect(b.restoreOrder(input)).toMatchObject({ ok: true });
    expect(b.getOrder(snap.id)?.selfTradePrevention).toBe('CANCEL_MAKER');
    const other = { ...input, id: 'ord_x', selfTradePrevention: 'X' as never };
    expect(b.restoreOrder(other)).toMatchObject({ ok: false, code: 'INVALID_ORDER' });
  });
});

describe('the house', () => {
  it('never trades with itself, even with a ladder whose sides meet', () => {
    rig.addAccount('house', 1_000_000_000);
    const mm = new HouseMarketMaker(rig.engine, { accountId: 'house', levels: 2, spread: 0 });
    const r = mm.requote('m1', 50);
    rig.recordEvents(r.events);
    expect(r.rejected).toEqual([]);
    expect(trades()).toEqual([]);
    expect(stpCancels()).toHaveLength(1);
    rig.recordEvents(mm.requote('m1', 51).events);
    expect(trades()).toEqual([]);
  });
});

describe('ownRestingLevels (the walk exclusion of a market order)', () => {
  /** A position holding resting orders (only the fields the walk reads), levels not built. */
  function positionWith(
    orders: { side: 'BID' | 'ASK'; price: number; qty: number; filled: number }[],
  ) {
    const ps = new PositionState(new AccountState('acct'), 'm');
    for (const o of orders) {
      const order = {
        bookSide: o.side,
        bookPrice: o.price,
        quantity: o.qty,
        filledQuantity: o.filled,
        ownerNext: null,
        ownerPrev: null,
      } as unknown as BookOrder;
      ps.linkOrder(order);
      ps.addResting(o.side, o.price, o.qty - o.filled);
    }
    return ps;
  }
  const expected = (
    orders: { side: string; price: number; qty: number; filled: number }[],
    side: string,
  ) => {
    const levels = new Array<number>(101).fill(0);
    for (const o of orders) if (o.side === side) levels[o.price] += o.qty - o.filled;
    return levels;
  };
  const orders = Array.from({ length: LEVELS_THRESHOLD + 8 }, (_, i) => ({
    side: i % 3 === 0 ? ('ASK' as const) : ('BID' as const),
    price: 1 + ((i * 37) % 99),
    qty: 5 + (i % 4),
    filled: i % 5 === 0 ? 2 : 0,
  }));

  it('walks the order list while the position keeps no per-price levels', () => {
    const ps = positionWith(orders);
    expect(ps.bidLevels).toBeNull();
    for (const side of ['BID', 'ASK'] as const) {
      expect(Array.from(ownRestingLevels(ps, side)!)).toEqual(expected(orders, side));
    }
  });

  it("reads the position's own per-price levels once it keeps them (no walk, no new array)", () => {
    const ps = positionWith(orders);
    ps.buildLevels();
    expect(ownRestingLevels(ps, 'BID')).toBe(ps.bidLevels);
    expect(ownRestingLevels(ps, 'ASK')).toBe(ps.askLevels);
    expect(Array.from(ownRestingLevels(ps, 'BID')!)).toEqual(expected(orders, 'BID'));
    expect(Array.from(ownRestingLevels(ps, 'ASK')!)).toEqual(expected(orders, 'ASK'));
  });

  it('is null for a side with nothing resting, levels kept or not, and for no position', () => {
    const bidsOnly = orders.filter((o) => o.side === 'BID');
    const ps = positionWith(bidsOnly);
    expect(ownRestingLevels(ps, 'ASK')).toBeNull();
    ps.buildLevels();
    expect(ps.askLevels).not.toBeNull();
    expect(ownRestingLevels(ps, 'ASK')).toBeNull();
    expect(ownRestingLevels(undefined, 'BID')).toBeNull();
    expect(ownRestingLevels(positionWith([]), 'BID')).toBeNull();
  });
});
