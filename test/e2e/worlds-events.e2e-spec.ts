import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, type Running } from '../support/harness.js';
import { as, keyFor, limit, ORDER_SCOPES, TRADABLE, type Trader } from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import { scenario } from '../support/scenarios.js';
import {
  createEndpoint,
  hookUser,
  HOOK_SCOPES,
  startWebhookApp,
  until,
  type Json,
} from '../support/webhooks.js';
import { WsClient, type WsMessage } from '../support/ws.js';

const m = TRADABLE[0];
const PRIVATE = ['orders', 'fills', 'positions'];
const PUBLIC = ['ticker', `trades:${m.id}`, `orderbook:${m.id}`];

/**
 * Webhooks and realtime between worlds: events of an ephemeral world carry `world_id` and reach
 * that world's endpoints and sockets only; the paper world's carry none and reach none of a
 * world's. A scenario shapes the world it was made in only.
 */
describe('sandbox worlds: world_id, and webhooks, realtime and scenarios kept per world', () => {
  let svc: Running;
  let receiver: Receiver;
  let u: Trader;
  const worlds: Record<'a' | 'b', { id: string; key: string }> = {
    a: { id: '', key: '' },
    b: { id: '', key: '' },
  };
  const sockets: Record<string, WsClient> = {};

  const arrived = (path: string): Json[] =>
    receiver.requests.filter((r) => r.path === path).map((r) => r.json);

  beforeAll(async () => {
    svc = await startWebhookApp();
    receiver = await Receiver.start();
    u = await hookUser(svc, { scopes: [...HOOK_SCOPES, 'websocket'] });
    for (const w of ['a', 'b'] as const) {
      const r = await as(u, `${svc.api}/sandbox/worlds`, { method: 'POST', json: { seed: 3 } });
      expect(r.status).toBe(201);
      worlds[w] = { id: r.body.id as string, key: r.body.key as string };
    }
    // One endpoint and one socket in each world: the paper world, A and B.
    const keys: Record<string, { key: string }> = { paper: u, a: worlds.a, b: worlds.b };
    for (const [name, k] of Object.entries(keys)) {
      await createEndpoint(svc, k, receiver.url(`/${name}`));
      sockets[name] = await WsClient.authed(svc.baseUrl, { api_key: k.key });
      const sub = await sockets[name].subscribe([...PRIVATE, ...PUBLIC]);
      expect(sub.type).toBe('subscribed');
    }
  });
  afterAll(async () => {
    for (const s of Object.values(sockets)) await s.close();
    await receiver.close();
    await svc.close();
  });

  it("a world's order reaches its own endpoint and socket with world_id; the paper world's carries none; B hears nothing", async () => {
    const a = worlds.a;
    const placed = await as(a, `${svc.api}/orders`, {
      method: 'POST',
      json: limit(m, 'BUY', 'YES', 99, 2),
    });
    expect(placed.status).toBe(201);
    expect(placed.body.filled_quantity).toBe(2);
    const paper = await as(u, `${svc.api}/orders`, {
      method: 'POST',
      json: limit(m, 'BUY', 'YES', 99, 2),
    });
    expect(paper.status).toBe(201);

    // Webhooks: the world's endpoint gets the world's events, named; the paper one the paper's.
    const ofOrder = (path: string, id: string) =>
      arrived(path).filter((e: Json) => e.data?.order?.id === id || e.data?.order_id === id);
    const aEvents = await until(
      () => ofOrder('/a', placed.body.id as string),
      (v) => v.some((e: Json) => e.type === 'order.filled'),
      "world A's order.filled",
    );
    const pEvents = await until(
      () => ofOrder('/paper', paper.body.id as string),
      (v) => v.some((e: Json) => e.type === 'order.filled'),
      "the paper world's order.filled",
    );
    for (const e of arrived('/a')) expect(e.world_id).toBe(a.id);
    expect(aEvents.map((e: Json) => e.type)).toEqual(
      expect.arrayContaining(['order.created', 'order.filled']),
    );
    for (const e of arrived('/paper')) expect(e).not.toHaveProperty('world_id');
    expect(pEvents.length).toBeGreaterThan(0);
    expect(ofOrder('/paper', placed.body.id as string)).toEqual([]);
    expect(ofOrder('/a', paper.body.id as string)).toEqual([]);

    // Realtime: A's socket hears its order, fill, position and trade, each with world_id.
    const sa = sockets.a;
    for (const channel of [...PRIVATE, `trades:${m.id}`]) {
      const msg = await sa.waitFor((x) => x.type === 'event' && x.channel === channel);
      expect(msg.world_id).toBe(a.id);
    }
    const ids = (s: WsClient) =>
      s.events('orders').map((x: WsMessage) => (x.data as { order_id: string }).order_id);
    expect(ids(sa)).toContain(placed.body.id);
    expect(ids(sa)).not.toContain(paper.body.id);
    // The paper socket: its own order, no world_id on any message, nothing of A.
    const sp = sockets.paper;
    for (const channel of [...PRIVATE, `trades:${m.id}`]) {
      await sp.waitFor((x) => x.type === 'event' && x.channel === channel);
    }
    await sp.sync();
    for (const msg of sp.messages) expect(msg).not.toHaveProperty('world_id');
    expect(ids(sp)).toContain(paper.body.id);
    expect(ids(sp)).not.toContain(placed.body.id);
    // B, on the same market id, heard no order, fill, position, trade or book change of either.
    const sb = sockets.b;
    await sb.sync();
    const bEvents = sb.messages.filter((x) => x.type === 'event');
    for (const channel of [...PRIVATE, `trades:${m.id}`]) {
      expect(bEvents.filter((x) => x.channel === channel)).toEqual([]);
    }
    const deltas = bEvents.filter(
      (x) => x.channel === `orderbook:${m.id}` && (x.data as { kind: string }).kind !== 'snapshot',
    );
    expect(deltas).toEqual([]);
    for (const x of bEvents) expect(x.world_id).toBe(worlds.b.id);
    expect(arrived('/b')).toEqual([]);
  });

  it('a scenario made in world A shapes A only: not world B, not the paper world, never live', async () => {
    const made = await scenario(svc, worlds.a, {
      match: { operation: 'POST /orders' },
      effect: { type: 'REJECT', code: 'MARKET_NOT_OPEN' },
      times: 10,
    });
    const order = limit(m, 'BUY', 'YES', 2, 1);
    const inA = await as(worlds.a, `${svc.api}/orders`, { method: 'POST', json: order });
    expectContractError(inA, 422, 'MARKET_NOT_OPEN');
    expect(inA.headers.get('svc-scenario')).toBe(made.id);
    for (const k of [worlds.b, u]) {
      const r = await as(k, `${svc.api}/orders`, { method: 'POST', json: order });
      expect(r.status).toBe(201);
      expect(r.headers.get('svc-scenario')).toBeNull();
    }
    // The same user's live key: its order meets the live world's own rules (no money there).
    const live = await keyFor(svc, u.email, u.token, {
      environment: 'live',
      scopes: ORDER_SCOPES,
    });
    const l = await as(live, `${svc.api}/orders`, { method: 'POST', json: order });
    expectContractError(l, 422, 'INSUFFICIENT_FUNDS');
    expect(l.headers.get('svc-scenario')).toBeNull();
    // Not listed outside A either.
    expect((await as(worlds.b, `${svc.api}/sandbox/scenarios`)).body.data).toEqual([]);
    expect((await as(u, `${svc.api}/sandbox/scenarios`)).body.data).toEqual([]);
    const inAList = (await as(worlds.a, `${svc.api}/sandbox/scenarios`)).body.data;
    expect(inAList.map((s: { id: string }) => s.id)).toEqual([made.id]);
  });
});
