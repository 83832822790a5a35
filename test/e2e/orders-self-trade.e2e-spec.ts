import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Running } from '../support/harness.js';
import {
  as,
  getOrder,
  limit,
  paperQuery,
  place,
  placeRaw,
  STARTING_BALANCE,
  TRADABLE,
  wallet,
  expectValidation,
  type Order,
  type Trader,
} from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import { createEndpoint, HOOK_SCOPES, hookUser, startWebhookApp } from '../support/webhooks.js';
import { WsClient, type WsMessage } from '../support/ws.js';

const STP = 'SELF_TRADE_PREVENTION';

/**
 * Self-trade prevention (issue 23): an order never trades with a resting order of its own
 * account; `self_trade_prevention` says which one ends. The feed is stopped, so each market's book
 * is the house ladder (bids R-1..R-5, asks R+1..R+5) and R is free for users' orders; each test
 * trades in its own market.
 */
describe('orders: self-trade prevention', () => {
  let svc: Running;
  let rx: Receiver;
  let a: Trader;
  let b: Trader;
  let ws: WsClient;

  beforeAll(async () => {
    rx = await Receiver.start();
    svc = await startWebhookApp();
    a = await hookUser(svc, { scopes: [...HOOK_SCOPES, 'websocket'] });
    b = await hookUser(svc);
    await createEndpoint(svc, a, rx.url('/a'), ['order.cancelled']);
    ws = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    expect((await ws.subscribe(['orders'])).type).toBe('subscribed');
  });
  afterAll(async () => {
    await ws.close();
    await svc.close();
    await rx.close();
  });

  /** The `orders` channel messages about one order. */
  const streamed = async (orderId: string, event: string): Promise<WsMessage> => {
    const m = await ws.waitFor(
      (x) =>
        x.type === 'event' &&
        x.channel === 'orders' &&
        x.data.order_id === orderId &&
        x.data.event === event,
    );
    return m.data as WsMessage;
  };
  const balances = async (t: Trader) => (await wallet(svc, t)).api!;

  it('CANCEL_TAKER is the default: fills ahead of the own order stand (FIFO), the rest is cancelled', async () => {
    const m = TRADABLE[0];
    const R = m.reference;
    const before = await balances(a);
    const other = await place(svc, b, limit(m, 'SELL', 'YES', R, 3));
    const own = await place(svc, a, limit(m, 'SELL', 'YES', R, 5));
    const taker = await place(svc, a, limit(m, 'BUY', 'YES', R, 10));
    expect(taker).toMatchObject({
      status: 'CANCELLED',
      cancel_reason: STP,
      self_trade_prevention: 'CANCEL_TAKER',
      filled_quantity: 3,
      remaining_quantity: 0,
      filled_cost_cents: 3 * R,
      fills: [expect.objectContaining({ price: R, quantity: 3, liquidity: 'TAKER' })],
    });
    expect(await getOrder(svc, a, taker.id)).toMatchObject({
      status: 'CANCELLED',
      cancel_reason: STP,
    });
    expect(await getOrder(svc, b, other.id)).toMatchObject({ status: 'FILLED' });
    expect(await getOrder(svc, a, own.id)).toMatchObject({
      status: 'OPEN',
      remaining_quantity: 5,
      cancel_reason: null,
    });
    // a holds 3 YES bought at R; its 5 asks at R are covered by them up to 3: (100 - R) x 2.
    expect(await balances(a)).toMatchObject({
      balance_cents: Number(before.balance_cents) - 3 * R,
      reserved_cents: 2 * (100 - R),
    });
    const pos = await as(a, `${svc.api}/wallet/positions`);
    expect(pos.body.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ market_id: m.id, side: 'YES', quantity: 3 }),
      ]),
    );
    expect(await streamed(taker.id, 'order.accepted')).toMatchObject({
      self_trade_prevention: 'CANCEL_TAKER',
    });
    expect(await streamed(taker.id, 'order.cancelled')).toMatchObject({
      status: 'CANCELLED',
      cancel_reason: STP,
      filled_quantity: 3,
    });
  });

  it('CANCEL_MAKER cancels the resting order (reservation released, webhook and stream) and keeps matching', async () => {
    const m = TRADABLE[1];
    const R = m.reference;
    const before = await balances(a);
    const own = await place(svc, a, limit(m, 'SELL', 'YES', R, 4));
    expect((await balances(a)).reserved_cents).toBe(Number(before.reserved_cents) + 4 * (100 - R));
    const taker = await place(
      svc,
      a,
      limit(m, 'BUY', 'YES', R + 1, 6, { self_trade_prevention: 'CANCEL_MAKER' }),
    );
    // Past its own ask at R, it bought the house's at R + 1.
    expect(taker).toMatchObject({
      status: 'FILLED',
      cancel_reason: null,
      self_trade_prevention: 'CANCEL_MAKER',
      filled_cost_cents: 6 * (R + 1),
    });
    expect(await getOrder(svc, a, own.id)).toMatchObject({
      status: 'CANCELLED',
      cancel_reason: STP,
      filled_quantity: 0,
      fills: [],
    });
    expect(await balances(a)).toMatchObject({
      balance_cents: Number(before.balance_cents) - 6 * (R + 1),
      reserved_cents: Number(before.reserved_cents),
    });
    expect(await streamed(own.id, 'order.cancelled')).toMatchObject({ cancel_reason: STP });
    // The first test's cancelled taker came first; the maker cancelled here is the second.
    const hooks = await rx.waitFor('/a', 2);
    expect(hooks.map((h) => h.json.data.order_id)).toContain(own.id);
    const hook = hooks.find((h) => h.json.data.order_id === own.id)!;
    expect(hook.json).toMatchObject({
      type: 'order.cancelled',
      data: { order_id: own.id, status: 'CANCELLED', cancel_reason: STP, filled_quantity: 0 },
    });
    // Stored with its mode, so a restart restores it as placed.
    const rows = paperQuery<{ self_trade_prevention: string }>(
      svc,
      'SELECT self_trade_prevention FROM orders WHERE id IN (?, ?) ORDER BY sequence',
      own.id,
      taker.id,
    );
    expect(rows.map((r) => r.self_trade_prevention)).toEqual(['CANCEL_TAKER', 'CANCEL_MAKER']);
  });

  it('CANCEL_BOTH in a batch: the leg that rested and the leg that met it both end', async () => {
    const m = TRADABLE[2];
    const R = m.reference;
    const before = await balances(a);
    const res = await as(a, `${svc.api}/orders/batch`, {
      method: 'POST',
      json: {
        orders: [
          limit(m, 'SELL', 'YES', R, 2),
          limit(m, 'BUY', 'YES', R, 2, { self_trade_prevention: 'CANCEL_BOTH' }),
        ],
      },
    });
    expect(res.status).toBe(200);
    const [rest, cross] = res.body.results as { status: number; order: Order }[];
    expect(rest).toMatchObject({
      status: 201,
      order: { status: 'OPEN', self_trade_prevention: 'CANCEL_TAKER' },
    });
    expect(cross).toMatchObject({
      status: 201,
      order: {
        status: 'CANCELLED',
        cancel_reason: STP,
        self_trade_prevention: 'CANCEL_BOTH',
        filled_quantity: 0,
      },
    });
    expect(await getOrder(svc, a, rest.order.id)).toMatchObject({
      status: 'CANCELLED',
      cancel_reason: STP,
    });
    expect(await balances(a)).toMatchObject({
      balance_cents: Number(before.balance_cents),
      reserved_cents: Number(before.reserved_cents),
    });
    const list = await as(a, `${svc.api}/orders?market_id=${m.id}`);
    expect(list.body.data.map((o: Order) => [o.self_trade_prevention, o.cancel_reason])).toEqual(
      expect.arrayContaining([
        ['CANCEL_TAKER', STP],
        ['CANCEL_BOTH', STP],
      ]),
    );
  });

  it('an unknown mode is refused naming self_trade_prevention, alone or in its own batch leg, placing nothing for it', async () => {
    const m = TRADABLE[3];
    for (const bad of ['NONE', 'cancel_taker', 1]) {
      expectValidation(
        await placeRaw(svc, a, {
          ...limit(m, 'BUY', 'YES', m.reference, 1),
          self_trade_prevention: bad,
        }),
        'self_trade_prevention',
      );
    }
    const batch = await as(a, `${svc.api}/orders/batch`, {
      method: 'POST',
      json: {
        orders: [
          limit(m, 'BUY', 'YES', m.reference, 1),
          { ...limit(m, 'SELL', 'YES', m.reference, 1), self_trade_prevention: 'DECREMENT' },
        ],
      },
    });
    // The bad leg answers its own 400 (as POST /orders would); the good leg runs.
    expect(batch.status).toBe(200);
    const results = batch.body.results as {
      index: number;
      status: number;
      order?: { id: string };
      error?: { code: string; details: { fields: { field: string }[] } };
    }[];
    expect(results.map((r) => r.status)).toEqual([201, 400]);
    expect(results[1].error!.code).toBe('VALIDATION_FAILED');
    expect(results[1].error!.details.fields.map((f) => f.field)).toEqual(['self_trade_prevention']);
    const list = await as(a, `${svc.api}/orders?market_id=${m.id}`);
    expect((list.body.data as { id: string }[]).map((o) => o.id)).toEqual([results[0].order!.id]);
    expect(Number((await balances(a)).balance_cents)).toBeLessThanOrEqual(STARTING_BALANCE);
  });

  it('the CSV export lists each order with its mode', async () => {
    const res = await fetch(`${svc.api}/orders/export`, {
      headers: { 'x-api-key': a.key },
    });
    expect(res.status).toBe(200);
    const [header, ...rows] = (await res.text()).trim().split('\n');
    const col = header.split(',').indexOf('self_trade_prevention');
    expect(col).toBeGreaterThan(0);
    const modes = new Set(rows.map((r) => r.split(',')[col]));
    expect(modes).toEqual(new Set(['CANCEL_TAKER', 'CANCEL_MAKER', 'CANCEL_BOTH']));
  });
});
