import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { HouseMarketMaker } from './house-market-maker.js';
import { Rig } from './testing.js';

let rig: Rig;
let mm: HouseMarketMaker;
beforeEach(() => {
  rig = new Rig();
  rig.addAccount('house', 1_000_000_000_000);
  rig.addAccount('alice', 1_000_000);
  rig.addAccount('bob', 1_000_000);
  rig.addMarket('m');
  mm = new HouseMarketMaker(rig.engine, {
    accountId: 'house',
    levels: 5,
    spread: 1,
    size: 100,
    refill: 25,
  });
});
afterEach(() => {
  expect(rig.violations()).toEqual([]);
});

const requote = (ref: number) => {
  const r = mm.requote('m', ref);
  rig.recordEvents(r.events);
  expect(r.rejected).toEqual([]);
  return r;
};
const ladder = (prices: number[], q = 100) => prices.map((price) => ({ price, quantity: q }));

describe('HouseMarketMaker', () => {
  it('quotes a ladder around the reference', () => {
    requote(50);
    expect(rig.engine.depth('m', 10)).toEqual({
      marketId: 'm',
      bids: ladder([49, 48, 47, 46, 45]),
      asks: ladder([51, 52, 53, 54, 55]),
    });
    expect(rig.engine.openOrders('house').every((o) => o.tag === 'house')).toBe(true);
  });

  it('leaves unchanged quotes alone', () => {
    requote(50);
    expect(requote(50).events).toEqual([]);
    const moved = requote(51).events;
    expect(Rig.only(moved, 'order.cancelled').every((e) => e.reason === 'REQUOTE')).toBe(true);
  });

  it("takes a user's resting order at the user's price, in time priority, when the reference moves through it", () => {
    requote(50);
    const a = rig.id(rig.limit('alice', 'm', 'SELL', 'YES', 56, 10));
    const b = rig.id(rig.limit('bob', 'm', 'SELL', 'YES', 56, 10));
    const r = requote(60);
    expect(
      Rig.only(r.events, 'trade').map((t) => [
        t.makerOrderId,
        t.price,
        t.quantity,
        t.takerAccountId,
      ]),
    ).toEqual([
      [a, 56, 10, 'house'],
      [b, 56, 10, 'house'],
    ]);
    expect(rig.engine.position('alice', 'm')).toMatchObject({ no: 10, noCost: 440 });
    expect(rig.engine.depth('m', 1)!.bids).toEqual([{ price: 59, quantity: 80 }]);
  });

  it('has finite size per level that refills per tick', () => {
    requote(50);
    const r = rig.marketOrder('alice', 'm', 'BUY', 'YES', 250);
    expect(Rig.only(r.ok ? r.events : [], 'trade').map((t) => [t.price, t.quantity])).toEqual([
      [51, 100],
      [52, 100],
      [53, 50],
    ]);
    expect(r.ok && r.order.averageFillPrice).toBe((5100 + 5200 + 2650) / 250);
    requote(50);
    expect(mm.capacity('m')!.asks).toEqual([25, 25, 75, 100, 100]);
    expect(rig.engine.depth('m', 3)!.asks).toEqual([
      { price: 51, quantity: 25 },
      { price: 52, quantity: 25 },
      { price: 53, quantity: 75 },
    ]);
    requote(50);
    requote(50);
    requote(50);
    expect(mm.capacity('m')!.asks).toEqual([100, 100, 100, 100, 100]);
    expect(rig.engine.depth('m', 1)!.asks).toEqual([{ price: 51, quantity: 100 }]);
  });

  it('withdraws its quotes when the market is not open, and clips the ladder at 1..99', () => {
    requote(50);
    rig.ok(rig.engine.setMarketStatus('m', 'HALTED'));
    requote(50);
    expect(rig.engine.openOrders('house')).toEqual([]);
    rig.ok(rig.engine.setMarketStatus('m', 'OPEN'));
    requote(97);
    expect(rig.engine.depth('m', 10)!.asks).toEqual(ladder([98, 99]));
    const withdrawn = mm.withdraw('m');
    rig.recordEvents(withdrawn);
    expect(withdrawn.length).toBeGreaterThan(0);
    expect(rig.engine.openOrders('house')).toEqual([]);
  });
});
