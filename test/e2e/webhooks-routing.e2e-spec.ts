import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Running } from '../support/harness.js';
import { as, keyFor, limit, market, place, TRADABLE, type Trader } from '../support/orders.js';
import { Receiver, type Received } from '../support/receiver.js';
import {
  createEndpoint,
  deliveries,
  HOOK_SCOPES,
  hookUser,
  post,
  sleep,
  startWebhookApp,
  until,
  type Json,
} from '../support/webhooks.js';

const types = (rs: Received[]) => rs.map((r) => r.json.type as string);

/**
 * Which endpoints an event goes to (issue 7: an endpoint belongs to the creating key's environment
 * and receives only its events; user events only for their user; market-wide events to every
 * subscribed endpoint of the environment). Events come from the engine's committed stream.
 */
describe('webhooks: environment and user isolation, subscriptions, market.resolved', () => {
  let svc: Running;
  let rx: Receiver;
  let aTest: Trader;
  let aLive: Trader;
  let bTest: Trader;
  let c: Trader;
  const ep: Record<string, Json> = {};

  beforeAll(async () => {
    rx = await Receiver.start();
    svc = await startWebhookApp();
    aTest = await hookUser(svc);
    aLive = await keyFor(svc, aTest.email, aTest.token, {
      environment: 'live',
      scopes: [...HOOK_SCOPES, 'wallet:write'],
    });
    bTest = await hookUser(svc);
    c = await hookUser(svc);
    ep.aTest = await createEndpoint(svc, aTest, rx.url('/r/a-test'));
    ep.aLive = await createEndpoint(svc, aLive, rx.url('/r/a-live'));
    ep.bTest = await createEndpoint(svc, bTest, rx.url('/r/b-test'));
    ep.cResolved = await createEndpoint(svc, c, rx.url('/r/c-resolved'), ['market.resolved']);
    ep.cFilled = await createEndpoint(svc, c, rx.url('/r/c-filled'), ['order.filled']);
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });

  it('endpoints take their environment from the creating key', () => {
    expect(ep.aTest.environment).toBe('test');
    expect(ep.aLive.environment).toBe('live');
    expect(ep.bTest.environment).toBe('test');
  });

  it("a test key's orders go only to its user's test endpoints; a live key's only to the live endpoint", async () => {
    const m = TRADABLE[3];
    const paper = await place(svc, aTest, limit(m, 'BUY', 'YES', m.reference - 10, 4));
    const [r] = await rx.waitFor('/r/a-test', 1);
    expect(r.json).toMatchObject({
      type: 'order.created',
      environment: 'test',
      data: { order: { id: paper.id } },
    });

    const dep = await as(aLive, `${svc.api}/wallet/deposits`, {
      method: 'POST',
      json: { amount_cents: 100_000 },
    });
    expect(dep.status).toBe(201);
    const live = await place(svc, aLive, limit(m, 'BUY', 'YES', 30, 5));
    expect(live.environment).toBe('live');
    const [l] = await rx.waitFor('/r/a-live', 1);
    expect(l.json).toMatchObject({
      type: 'order.created',
      environment: 'live',
      data: { order: { id: live.id } },
    });

    // And nothing crossed over: a-test saw only the paper order, a-live only the live one, and
    // the other users' endpoints nothing.
    await sleep(200);
    expect(rx.at('/r/a-test').map((x) => x.json.data.order?.id)).toEqual([paper.id]);
    expect(rx.at('/r/a-live').map((x) => x.json.data.order?.id)).toEqual([live.id]);
    expect(rx.at('/r/b-test')).toHaveLength(0);
    expect(rx.at('/r/c-resolved')).toHaveLength(0);
    expect(rx.at('/r/c-filled')).toHaveLength(0);
  });

  it("user A's fills and cancels never reach user B's endpoint; B's own events do", async () => {
    rx.clear();
    const m = TRADABLE[4];
    // A takes from the house ladder: created + filled.
    const taken = await place(svc, aTest, market(m, 'BUY', 'YES', 5));
    expect(taken.status).toBe('FILLED');
    const resting = await place(svc, aTest, limit(m, 'BUY', 'YES', m.reference - 15, 2));
    expect((await as(aTest, `${svc.api}/orders/${resting.id}`, { method: 'DELETE' })).status).toBe(
      200,
    );
    const got = await rx.waitFor('/r/a-test', 4);
    expect(types(got).sort()).toEqual([
      'order.cancelled',
      'order.created',
      'order.created',
      'order.filled',
    ]);
    const filled = got.find((r) => r.json.type === 'order.filled')!;
    expect(filled.json.data).toMatchObject({ order_id: taken.id, status: 'FILLED' });
    const cancelled = got.find((r) => r.json.type === 'order.cancelled')!;
    expect(cancelled.json.data).toMatchObject({ order_id: resting.id, status: 'CANCELLED' });

    const mine = await place(svc, bTest, limit(m, 'BUY', 'YES', m.reference - 14, 1));
    const [b] = await rx.waitFor('/r/b-test', 1);
    expect(b.json.data.order.id).toBe(mine.id);
    await sleep(200);
    // B saw exactly its own order; C subscribed to order.filled but only for its own orders.
    expect(rx.at('/r/b-test')).toHaveLength(1);
    expect(rx.at('/r/c-filled')).toHaveLength(0);
    expect(rx.at('/r/a-live')).toHaveLength(0);
    expect(rx.at('/r/a-test')).toHaveLength(4);
  });

  it('market.resolved (POST /sandbox/markets/{id}/resolve) goes to every subscribed test endpoint, never to live ones; position.settled only to the holder', async () => {
    rx.clear();
    const m = TRADABLE[5];
    const bought = await place(svc, aTest, market(m, 'BUY', 'YES', 3));
    expect(bought.status).toBe('FILLED');
    const resting = await place(svc, aTest, limit(m, 'BUY', 'YES', m.reference - 10, 1));
    await rx.waitFor('/r/a-test', 3);
    rx.clear();

    const res = await post(svc, aTest, `/sandbox/markets/${m.id}/resolve`, { outcome: 'YES' });
    expect(res.status).toBe(200);

    const resolvedA = (await rx.waitFor('/r/a-test', 3)).filter(
      (r) => r.json.type === 'market.resolved',
    );
    expect(resolvedA).toHaveLength(1);
    expect(resolvedA[0].json).toMatchObject({
      environment: 'test',
      data: { market_id: m.id, outcome: 'YES' },
    });
    const [resolvedB] = await rx.waitFor('/r/b-test', 1);
    expect(resolvedB.json).toMatchObject({ type: 'market.resolved', data: { market_id: m.id } });
    const [resolvedC] = await rx.waitFor('/r/c-resolved', 1);
    expect(resolvedC.json.id).toBe(resolvedA[0].json.id); // one event, one delivery per endpoint
    expect(resolvedC.headers['svc-webhook-id']).not.toBe(resolvedA[0].headers['svc-webhook-id']);

    const aTypes = await until(
      () => types(rx.at('/r/a-test')).sort(),
      (ts) => ts.length >= 3,
      'A: resolved, settled, cancelled',
    );
    expect(aTypes).toEqual(['market.resolved', 'order.cancelled', 'position.settled']);
    const settled = rx.at('/r/a-test').find((r) => r.json.type === 'position.settled')!;
    expect(settled.json.data).toMatchObject({
      market_id: m.id,
      outcome: 'YES',
      payout_cents: 300,
    });
    const cancel = rx.at('/r/a-test').find((r) => r.json.type === 'order.cancelled')!;
    expect(cancel.json.data).toMatchObject({
      order_id: resting.id,
      cancel_reason: 'MARKET_RESOLVED',
    });

    await sleep(200);
    expect(types(rx.at('/r/b-test'))).toEqual(['market.resolved']); // B held nothing there
    expect(types(rx.at('/r/c-resolved'))).toEqual(['market.resolved']);
    expect(rx.at('/r/c-filled')).toHaveLength(0);
    expect(rx.at('/r/a-live')).toHaveLength(0);
    expect(await deliveries(svc, aLive, ep.aLive.id)).toHaveLength(1); // just the live order
  });

  it("a sandbox reset is one account.reset event to the user's test endpoints, not one order.cancelled per order", async () => {
    const m = TRADABLE[4];
    const ids: string[] = [];
    for (const q of [1, 2]) {
      ids.push((await place(svc, aTest, limit(m, 'BUY', 'YES', m.reference - 10, q))).id);
    }
    // This case's own order.created deliveries, not any two (an earlier case's may still arrive).
    await until(
      () =>
        rx
          .at('/r/a-test')
          .filter((r) => r.json.type === 'order.created' && ids.includes(r.json.data.order.id)),
      (got) => got.length === 2,
      "this case's two order.created",
    );
    await sleep(100);
    rx.clear();
    const resetter = await keyFor(svc, aTest.email, aTest.token, {
      scopes: [...HOOK_SCOPES, 'wallet:write'],
    });
    const res = await post(svc, resetter, '/sandbox/reset');
    expect(res.status).toBe(200);
    expect(res.body.cancelled_orders).toBeGreaterThanOrEqual(2);
    const [reset] = await rx.waitFor('/r/a-test', 1);
    expect(reset.json).toMatchObject({
      type: 'account.reset',
      environment: 'test',
      data: {
        cancelled_orders: res.body.cancelled_orders,
        balance_cents: res.body.wallet.balance_cents,
        market_ids: expect.arrayContaining([m.id]),
      },
    });
    await sleep(200);
    expect(types(rx.at('/r/a-test'))).toEqual(['account.reset']);
    for (const path of ['/r/a-live', '/r/b-test', '/r/c-resolved', '/r/c-filled']) {
      expect([path, rx.at(path)]).toEqual([path, []]);
    }
  });
});
