import { describe, expect, it } from '@jest/globals';
import { ManualClock, MatchingEngine, SequentialIdGenerator } from '../../engine/index.js';
import { toWebhookEvents } from '../webhooks/webhook-outbox.service.js';
import { route } from './channels.js';

/**
 * Events name their order's owner and side themselves: a consumer reading them after the engine
 * has forgotten the order (it keeps only the latest final orders) still routes every one.
 */
describe('events of orders the engine no longer remembers', () => {
  function engineWithForgetfulness() {
    const engine = new MatchingEngine({
      clock: new ManualClock(1_700_000_000_000),
      ids: new SequentialIdGenerator(),
      closedOrderRetention: 2,
    });
    engine.addMarket('m1');
    engine.createAccount('alice', 1_000_000);
    engine.createAccount('bob', 1_000_000);
    return engine;
  }

  it('a cancel-all of more orders than retained: every cancel reaches its owner (stream and webhooks)', () => {
    const engine = engineWithForgetfulness();
    for (let i = 0; i < 5; i++) {
      const r = engine.placeOrder({
        accountId: 'alice',
        marketId: 'm1',
        action: 'BUY',
        side: 'YES',
        type: 'LIMIT',
        price: 10 + i,
        quantity: 1,
      });
      expect(r.ok).toBe(true);
    }
    const r = engine.cancelAll('alice');
    if (!r.ok) throw new Error(r.code);
    // Published after the command: by now the engine remembers only 2 of the 5.
    const ids = ['ord_1', 'ord_2', 'ord_3', 'ord_4', 'ord_5'];
    expect(ids.filter((id) => engine.getOrder(id) === undefined)).toHaveLength(3);
    const stream = route(r.events, engine, 'test').filter((o) => o.scope === 'private');
    // Then one wallet message: the reservation of all five is gone (RESERVATION, reserved 0).
    expect(stream.map((o) => [o.scope === 'private' && o.userId, o.channel])).toEqual([
      ...Array.from({ length: 5 }, () => ['alice', 'orders']),
      ['alice', 'wallet'],
    ]);
    expect(stream[5].data).toMatchObject({
      reason: 'RESERVATION',
      delta_cents: 0,
      reserved_cents: 0,
    });
    const hooks = toWebhookEvents(r.events);
    expect(hooks.map((h) => [h.type, h.userId])).toEqual(
      Array.from({ length: 5 }, () => ['order.cancelled', 'alice']),
    );
  });

  it("fills carry each order's own side and price even when both orders are forgotten", () => {
    const engine = engineWithForgetfulness();
    engine.placeOrder({
      accountId: 'bob',
      marketId: 'm1',
      action: 'BUY',
      side: 'NO',
      type: 'LIMIT',
      price: 60,
      quantity: 2,
    });
    const taker = engine.placeOrder({
      accountId: 'alice',
      marketId: 'm1',
      action: 'BUY',
      side: 'YES',
      type: 'LIMIT',
      price: 40,
      quantity: 2,
    });
    if (!taker.ok) throw new Error(taker.code);
    // Push both out of the engine's memory of final orders.
    for (let i = 0; i < 3; i++) {
      engine.placeOrder({
        accountId: 'bob',
        marketId: 'm1',
        action: 'BUY',
        side: 'YES',
        type: 'LIMIT',
        price: 5,
        quantity: 1,
        timeInForce: 'IOC',
      });
    }
    expect(engine.getOrder(taker.order.id)).toBeUndefined();
    const fills = route(taker.events, engine, 'test').filter((o) => o.channel === 'fills');
    expect(fills.map((o) => o.data)).toEqual([
      expect.objectContaining({ side: 'NO', price: 60, yes_price: 40, liquidity: 'MAKER' }),
      expect.objectContaining({ side: 'YES', price: 40, yes_price: 40, liquidity: 'TAKER' }),
    ]);
    expect(toWebhookEvents(taker.events).map((h) => [h.type, h.userId])).toEqual([
      ['order.created', 'alice'],
      ['order.filled', 'bob'],
      ['order.filled', 'alice'],
    ]);
  });
});

/**
 * The wallet channel's reserved and available amounts exist only once a command's events are all
 * applied (reservations settle at its end): they go on each account's last wallet message of the
 * batch, earlier ones carry null, and a change of the reservation alone is a RESERVATION message.
 */
describe('wallet messages of a batch', () => {
  function engine() {
    const e = new MatchingEngine({
      clock: new ManualClock(1_700_000_000_000),
      ids: new SequentialIdGenerator(),
    });
    e.addMarket('m1');
    e.createAccount('alice', 1_000_000);
    e.createAccount('bob', 1_000_000);
    return e;
  }
  const wallet = (outs: ReturnType<typeof route>, user: string) =>
    outs
      .filter((o) => o.scope === 'private' && o.userId === user && o.channel === 'wallet')
      .map((o) => o.data as Record<string, unknown>);

  it('a taker walking three of one maker’s bids: three TRADE rows each, the figures on the last', () => {
    const e = engine();
    for (const price of [40, 35, 30]) {
      const r = e.placeOrder({
        accountId: 'alice',
        marketId: 'm1',
        action: 'BUY',
        side: 'YES',
        type: 'LIMIT',
        price,
        quantity: 10,
      });
      if (!r.ok) throw new Error(r.code);
      expect(wallet(route(r.events, e, 'test'), 'alice')).toEqual([
        expect.objectContaining({ reason: 'RESERVATION', delta_cents: 0 }),
      ]);
    }
    expect(e.getAccount('alice')!.reserved).toBe(1050);
    const sell = e.placeOrder({
      accountId: 'bob',
      marketId: 'm1',
      action: 'SELL',
      side: 'YES',
      type: 'MARKET',
      quantity: 30,
    });
    if (!sell.ok) throw new Error(sell.code);
    const outs = route(sell.events, e, 'test');
    const a = wallet(outs, 'alice');
    expect(a.map((m) => [m.reason, m.delta_cents, m.reserved_cents, m.available_cents])).toEqual([
      ['TRADE', -400, null, null],
      ['TRADE', -350, null, null],
      ['TRADE', -300, 0, 1_000_000 - 1050],
    ]);
    expect(a[2].balance_cents).toBe(e.getAccount('alice')!.balance);
    const b = wallet(outs, 'bob');
    expect(b).toHaveLength(3);
    expect(b.slice(0, 2).every((m) => m.reserved_cents === null)).toBe(true);
    expect(b[2]).toMatchObject({
      reserved_cents: e.getAccount('bob')!.reserved,
      available_cents: e.getAccount('bob')!.available,
    });
  });
});
