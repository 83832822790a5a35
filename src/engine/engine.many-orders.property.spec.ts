import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { checkInvariants } from './invariants.js';
import { LEVELS_THRESHOLD } from './ledger.js';
import { Rig } from './testing.js';

/**
 * Positions with many resting orders keep per-price arrays for the reserve walk. These runs push
 * one account past that threshold in one market, holding the closing side (the case that walks),
 * and check after every command that the reserve equals a from-scratch recomputation.
 */
describe('reserve with many resting orders in one market (per-price arrays)', () => {
  type Cmd =
    | { k: 'rest'; bid: boolean; price: number; qty: number }
    | { k: 'amend'; pick: number; price: number | undefined; qty: number | undefined }
    | { k: 'cancel'; pick: number }
    | { k: 'hit'; bid: boolean; price: number; qty: number }
    | { k: 'flip'; yes: boolean; qty: number };

  const cmd: fc.Arbitrary<Cmd> = fc.oneof(
    // Bids below 46 and asks above 54, so the account's own orders do not cross each other.
    {
      weight: 5,
      arbitrary: fc.record({
        k: fc.constant('rest' as const),
        bid: fc.constant(true),
        price: fc.integer({ min: 2, max: 45 }),
        qty: fc.integer({ min: 1, max: 9 }),
      }),
    },
    {
      weight: 5,
      arbitrary: fc.record({
        k: fc.constant('rest' as const),
        bid: fc.constant(false),
        price: fc.integer({ min: 55, max: 98 }),
        qty: fc.integer({ min: 1, max: 9 }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        k: fc.constant('amend' as const),
        pick: fc.nat(),
        price: fc.option(fc.integer({ min: 2, max: 98 }), { nil: undefined }),
        qty: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('cancel' as const), pick: fc.nat() }) },
    {
      weight: 1,
      arbitrary: fc.record({
        k: fc.constant('hit' as const),
        bid: fc.boolean(),
        price: fc.integer({ min: 1, max: 99 }),
        qty: fc.integer({ min: 1, max: 20 }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        k: fc.constant('flip' as const),
        yes: fc.boolean(),
        qty: fc.integer({ min: 1, max: 80 }),
      }),
    },
  );

  it('keeps every invariant, including reserve = recomputed reserve', () => {
    let maxPeak = 0;
    let heldNo = false;
    let heldYes = false;
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(cmd, { minLength: 80, maxLength: 200 }),
        (startYes, cmds) => {
          const rig = new Rig();
          rig.addAccount('whale', 100_000_000);
          rig.addAccount('other', 100_000_000);
          rig.addMarket('m');
          // A holding on both sides over time, so the walk (not the O(1) totals) is taken.
          rig.ok(
            rig.engine.placeOrder({
              accountId: 'other',
              marketId: 'm',
              // The counterparty the opening order crosses: it sells YES, or buys YES (= sells NO).
              action: startYes ? 'SELL' : 'BUY',
              side: 'YES',
              type: 'LIMIT',
              price: 50,
              quantity: 40,
            }),
          );
          rig.ok(
            rig.engine.placeOrder({
              accountId: 'whale',
              marketId: 'm',
              action: 'BUY',
              side: startYes ? 'YES' : 'NO',
              type: 'LIMIT',
              price: 50,
              quantity: 40,
            }),
          );
          const mine: string[] = [];
          let peak = 0;
          for (const c of cmds) {
            const e = rig.engine;
            switch (c.k) {
              case 'rest': {
                const r = rig.record(
                  e.placeOrder({
                    accountId: 'whale',
                    marketId: 'm',
                    action: c.bid ? 'BUY' : 'SELL',
                    side: 'YES',
                    type: 'LIMIT',
                    price: c.price,
                    quantity: c.qty,
                  }),
                );
                if (r.ok) mine.push(r.order.id);
                break;
              }
              case 'amend':
                if (mine.length > 0)
                  rig.record(
                    e.amendOrder(
                      mine[c.pick % mine.length],
                      { price: c.price, quantity: c.qty },
                      'whale',
                    ),
                  );
                break;
              case 'cancel':
                if (mine.length > 0) rig.record(e.cancelOrder(mine[c.pick % mine.length], 'whale'));
                break;
              case 'hit':
                rig.record(
                  e.placeOrder({
                    accountId: 'other',
                    marketId: 'm',
                    action: c.bid ? 'BUY' : 'SELL',
                    side: 'YES',
                    type: 'LIMIT',
                    price: c.price,
                    quantity: c.qty,
                    timeInForce: 'IOC',
                  }),
                );
                break;
              case 'flip':
                rig.record(
                  e.placeOrder({
                    accountId: 'whale',
                    marketId: 'm',
                    action: 'BUY',
                    side: c.yes ? 'YES' : 'NO',
                    type: 'MARKET',
                    quantity: c.qty,
                  }),
                );
                break;
            }
            peak = Math.max(peak, e.position('whale', 'm')?.openOrders ?? 0);
            const problems = checkInvariants(e);
            if (problems.length > 0) throw new Error(`${c.k}: ${problems.join('; ')}`);
          }
          maxPeak = Math.max(maxPeak, peak);
          const p = rig.engine.position('whale', 'm');
          if (p !== undefined && p.no > 0) heldNo = true;
          if (p !== undefined && p.yes > 0) heldYes = true;
          return true;
        },
      ),
      { numRuns: 60 },
    );
    expect(maxPeak).toBeGreaterThan(LEVELS_THRESHOLD);
    expect([heldYes, heldNo]).toEqual([true, true]);
  });

  it('the generator really crosses the threshold', () => {
    const rig = new Rig();
    rig.addAccount('whale', 100_000_000);
    rig.addMarket('m');
    for (let i = 0; i < LEVELS_THRESHOLD + 10; i++) {
      rig.ok(
        rig.engine.placeOrder({
          accountId: 'whale',
          marketId: 'm',
          action: 'BUY',
          side: 'YES',
          type: 'LIMIT',
          price: 2 + (i % 40),
          quantity: 1,
        }),
      );
    }
    expect(rig.engine.position('whale', 'm')!.openOrders).toBeGreaterThan(LEVELS_THRESHOLD);
    expect(checkInvariants(rig.engine)).toEqual([]);
  });
});
