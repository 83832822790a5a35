import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { expectContractError, http, type Running } from '../support/harness.js';
import {
  as,
  expectValidation,
  getOrder,
  keyFor,
  limit,
  ORDER_SCOPES,
  place,
  startOrdersApp,
  trader,
  TRADABLE,
  type Trader,
} from '../support/orders.js';
import { sleep, WsClient } from '../support/ws.js';
import { failWrites } from '../support/fail-writes.js';

const WS_SCOPES = [...ORDER_SCOPES, 'websocket'];
const m = TRADABLE[3];
/** Sweeps run every 100 ms of real time against the service clock. */
const SWEEP_WAIT_MS = 350;

function cod(svc: Running, t: Trader, method: 'GET' | 'POST' | 'DELETE', json?: unknown) {
  return as(t, `${svc.api}/orders/cancel-on-disconnect`, { method, json });
}

/** Waits until the server has seen the key's connections go (status.connections = n). */
async function connectionsAre(svc: Running, t: Trader, n: number): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    const s = await cod(svc, t, 'GET');
    if (s.body.connections === n) return;
    if (Date.now() - t0 > 3000) throw new Error(`connections stayed ${s.body.connections}`);
    await sleep(20);
  }
}

async function statuses(svc: Running, t: Trader, ids: string[]) {
  return Promise.all(
    ids.map(async (id) => {
      const o = await getOrder(svc, t, id);
      return [o.status, o.cancel_reason] as [string, string | null];
    }),
  );
}

/**
 * Waits (up to 5 s of real time, for a loaded machine) until a sweep has cancelled every one of
 * `ids` on disconnect, then asserts it: a rule that breaks leaves them open and fails here.
 */
async function cancelledOnDisconnect(svc: Running, t: Trader, ids: string[]): Promise<void> {
  const want = ids.map(() => ['CANCELLED', 'CANCEL_ON_DISCONNECT']);
  const deadline = Date.now() + 5000;
  let seen = await statuses(svc, t, ids);
  while (JSON.stringify(seen) !== JSON.stringify(want) && Date.now() < deadline) {
    await sleep(20);
    seen = await statuses(svc, t, ids);
  }
  expect(seen).toEqual(want);
}

/** Resting bids well below the house (its lowest bid is reference - 5 >= 15), one per price. */
async function rest(svc: Running, t: Trader, n: number, base: number): Promise<string[]> {
  expect(base + n - 1).toBeLessThan(m.reference - 5);
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push((await place(svc, t, limit(m, 'BUY', 'YES', base + i, 1))).id);
  return ids;
}

describe('realtime: cancel-on-disconnect', () => {
  let svc: Running;
  let clock: ManualClock;
  let k1: Trader;
  let k2: Trader;
  /** Another user: k2 is k1's own account, which self-trade prevention keeps from trading with it. */
  let k3: Trader;
  let watcher: WsClient;

  beforeAll(async () => {
    svc = await startOrdersApp();
    clock = svc.clock as ManualClock;
    k1 = await trader(svc, undefined, { scopes: WS_SCOPES });
    k2 = await keyFor(svc, k1.email, k1.token, { scopes: WS_SCOPES }); // same user, another key
    k3 = await trader(svc, 'cod-counterparty@example.com', { scopes: ORDER_SCOPES });
    // A second connection of the same user, with the other key, watches `orders`.
    watcher = await WsClient.authed(svc.baseUrl, { api_key: k2.key });
    expect((await watcher.subscribe(['orders'])).type).toBe('subscribed');
  });
  afterAll(async () => {
    await watcher.close();
    await svc.close();
  });

  it('GET shows the status; validation of grace_seconds; a session token gets API_KEY_REQUIRED', async () => {
    const s = await cod(svc, k1, 'GET');
    expect(s.status).toBe(200);
    expect(s.body).toEqual({
      key_id: k1.keyId,
      enabled: false,
      grace_seconds: null,
      connections: 0,
      cancels_at: null,
    });
    for (const grace_seconds of [-1, 301, 1.5, 'x']) {
      expectValidation(await cod(svc, k1, 'POST', { grace_seconds }), 'grace_seconds');
    }
    // Both ends of 0..300 are accepted.
    for (const grace_seconds of [0, 300]) {
      const edge = await cod(svc, k1, 'POST', { grace_seconds });
      expect(edge.status).toBe(200);
      expect(edge.body).toMatchObject({ enabled: true, grace_seconds });
    }
    expect((await cod(svc, k1, 'DELETE')).body).toMatchObject({ enabled: false });
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      const res = await http(`${svc.api}/orders/cancel-on-disconnect`, {
        method,
        headers: { authorization: `Bearer ${k1.token}` },
        json: method === 'POST' ? { grace_seconds: 5 } : undefined,
      });
      expectContractError(res, 403, 'API_KEY_REQUIRED');
    }
    // A key without orders:write cannot enable it.
    const ro = await keyFor(svc, k1.email, k1.token, { scopes: ['orders:read', 'websocket'] });
    for (const method of ['POST', 'DELETE'] as const) {
      const denied = expectContractError(
        await cod(svc, ro, method, method === 'POST' ? { grace_seconds: 5 } : undefined),
        403,
        'INSUFFICIENT_SCOPE',
      );
      expect(denied.details.required_scopes).toEqual(['orders:write']);
    }
    // Reading the status needs orders:read.
    const wo = await keyFor(svc, k1.email, k1.token, {
      scopes: ['orders:write', 'websocket'],
      acknowledge_write_scopes: true,
    });
    const noRead = expectContractError(await cod(svc, wo, 'GET'), 403, 'INSUFFICIENT_SCOPE');
    expect(noRead.details.required_scopes).toEqual(['orders:read']);
    // Omitted grace: the default (5 s); then disabled again.
    const d = await cod(svc, k1, 'POST', {});
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ enabled: true, grace_seconds: 5 });
    expect((await cod(svc, k1, 'DELETE')).body).toMatchObject({ enabled: false });
  });

  it('cancels every open order of the key after the grace; other keys untouched; published', async () => {
    const on = await cod(svc, k1, 'POST', { grace_seconds: 5 });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({
      key_id: k1.keyId,
      enabled: true,
      grace_seconds: 5,
      connections: 0,
      cancels_at: null,
    });
    const ws = await WsClient.authed(svc.baseUrl, { api_key: k1.key });
    expect((await cod(svc, k1, 'GET')).body.connections).toBe(1);
    const mine = await rest(svc, k1, 3, 1);
    const partly = await place(svc, k1, limit(m, 'BUY', 'YES', m.reference, 10));
    // A partial fill leaves it PARTIALLY_FILLED: still open, still cancelled.
    await place(svc, k3, limit(m, 'SELL', 'YES', m.reference, 4));
    mine.push(partly.id);
    const other = await rest(svc, k2, 2, 5);
    const from = watcher.mark();

    await ws.close();
    await connectionsAre(svc, k1, 0);
    const armed = (await cod(svc, k1, 'GET')).body;
    expect(armed).toEqual({
      key_id: k1.keyId,
      enabled: true,
      grace_seconds: 5,
      connections: 0,
      cancels_at: new Date(clock.now() + 5000).toISOString(),
    });

    clock.advance(4000);
    await sleep(SWEEP_WAIT_MS);
    expect(await statuses(svc, k1, mine)).toEqual([
      ['OPEN', null],
      ['OPEN', null],
      ['OPEN', null],
      ['PARTIALLY_FILLED', null],
    ]);

    clock.advance(1500);
    await cancelledOnDisconnect(svc, k1, mine);
    expect(await statuses(svc, k2, other)).toEqual([
      ['OPEN', null],
      ['OPEN', null],
    ]);
    // Published: the same user's other connection got one order.cancelled per order.
    await watcher.sync();
    const cancelled = watcher
      .events('orders', from)
      .filter((e) => e.data.event === 'order.cancelled');
    expect(
      cancelled.map((e) => e.data).sort((a, b) => a.order_id.localeCompare(b.order_id)),
    ).toEqual(
      [...mine].sort().map((id) => ({
        event: 'order.cancelled',
        order_id: id,
        status: 'CANCELLED',
        cancel_reason: 'CANCEL_ON_DISCONNECT',
        filled_quantity: id === partly.id ? 4 : 0,
      })),
    );
    // Fired once: disarmed, still enabled.
    expect((await cod(svc, k1, 'GET')).body).toMatchObject({ enabled: true, cancels_at: null });
    // Orders placed afterwards (with no connection) stay: nothing is armed until a connection closes.
    const later = await rest(svc, k1, 1, 7);
    clock.advance(10_000);
    await sleep(SWEEP_WAIT_MS);
    expect(await statuses(svc, k1, later)).toEqual([['OPEN', null]]);
  });

  it('reconnecting within the grace keeps the orders; the last of several connections arms it', async () => {
    expect((await cod(svc, k1, 'POST', { grace_seconds: 5 })).status).toBe(200);
    const c1 = await WsClient.authed(svc.baseUrl, { api_key: k1.key });
    const c2 = await WsClient.authed(svc.baseUrl, { api_key: k1.key });
    const ids = await rest(svc, k1, 2, 8);
    await c1.close();
    await connectionsAre(svc, k1, 1);
    expect((await cod(svc, k1, 'GET')).body.cancels_at).toBeNull(); // c2 is still open
    await c2.close();
    await connectionsAre(svc, k1, 0);
    clock.advance(3000);
    await sleep(SWEEP_WAIT_MS);
    const back = await WsClient.authed(svc.baseUrl, { api_key: k1.key });
    expect((await cod(svc, k1, 'GET')).body).toMatchObject({ connections: 1, cancels_at: null });
    clock.advance(10_000);
    await sleep(SWEEP_WAIT_MS);
    expect(await statuses(svc, k1, ids)).toEqual([
      ['OPEN', null],
      ['OPEN', null],
    ]);
    // The connection goes again and does not come back: cancelled after a fresh grace.
    await back.close();
    await connectionsAre(svc, k1, 0);
    clock.advance(5001);
    await cancelledOnDisconnect(svc, k1, ids);
  });

  it("a session connection of the same user does not hold the key's orders", async () => {
    expect((await cod(svc, k1, 'POST', { grace_seconds: 2 })).status).toBe(200);
    const c = await WsClient.authed(svc.baseUrl, { api_key: k1.key });
    const ids = await rest(svc, k1, 1, 10);
    const session = await WsClient.authed(svc.baseUrl, { token: k1.token });
    await c.close();
    await connectionsAre(svc, k1, 0);
    clock.advance(2500);
    await cancelledOnDisconnect(svc, k1, ids);
    await session.close();
  });

  it('a cancel that fails to commit is retried, not forgotten (the safe direction)', async () => {
    expect((await cod(svc, k1, 'POST', { grace_seconds: 1 })).status).toBe(200);
    const c = await WsClient.authed(svc.baseUrl, { api_key: k1.key });
    const ids = await rest(svc, k1, 1, 13);
    await c.close();
    await connectionsAre(svc, k1, 0);
    const restore = failWrites(svc.dataDir, 'paper', 'orders', 'UPDATE');
    try {
      clock.advance(1500);
      // The sweep's cancel fails to commit, and says it will retry.
      const failed = `cancel-on-disconnect for ${k1.keyId} failed, retrying`;
      const deadline = Date.now() + 5000;
      while (!svc.logs.some((l) => l.includes(failed)) && Date.now() < deadline) await sleep(10);
      expect(svc.logs.some((l) => l.includes(failed))).toBe(true);
    } finally {
      restore();
    }
    expect(await statuses(svc, k1, ids)).toEqual([['OPEN', null]]);
    await cancelledOnDisconnect(svc, k1, ids);
  });

  it('DELETE disables: a closed connection then cancels nothing', async () => {
    expect((await cod(svc, k1, 'POST', { grace_seconds: 1 })).status).toBe(200);
    const c = await WsClient.authed(svc.baseUrl, { api_key: k1.key });
    const ids = await rest(svc, k1, 2, 11);
    await c.close();
    await connectionsAre(svc, k1, 0);
    expect((await cod(svc, k1, 'GET')).body.cancels_at).not.toBeNull();
    const off = await cod(svc, k1, 'DELETE');
    expect(off.status).toBe(200);
    expect(off.body).toEqual({
      key_id: k1.keyId,
      enabled: false,
      grace_seconds: null,
      connections: 0,
      cancels_at: null,
    });
    clock.advance(10_000);
    await sleep(SWEEP_WAIT_MS);
    expect(await statuses(svc, k1, ids)).toEqual([
      ['OPEN', null],
      ['OPEN', null],
    ]);
  });
});

describe('realtime: cancel-on-disconnect when the server ends the connection', () => {
  let svc: Running;
  let clock: ManualClock;

  beforeAll(async () => {
    // A client that never pongs is cut on the second beat after it connects: 500 to 1000 ms.
    svc = await startOrdersApp({ env: { WS_HEARTBEAT_MS: '500' } });
    clock = svc.clock as ManualClock;
  });
  afterAll(async () => {
    await svc.close();
  });

  it('a dead client cut by the heartbeat (4000) arms it: its orders go after the grace', async () => {
    const t = await trader(svc, 'cod-heartbeat@orders.test', { scopes: WS_SCOPES });
    expect((await cod(svc, t, 'POST', { grace_seconds: 2 })).status).toBe(200);
    // The orders first: the count below must be read while the dead client is still connected.
    const ids = await rest(svc, t, 2, 3);
    const dead = await WsClient.authed(svc.baseUrl, { api_key: t.key }, { autoPong: false });
    expect((await cod(svc, t, 'GET')).body).toMatchObject({ connections: 1, cancels_at: null });
    expect((await dead.waitClose(3000)).code).toBe(4000);
    await connectionsAre(svc, t, 0);
    const armed = (await cod(svc, t, 'GET')).body.cancels_at as string;
    expect(Date.parse(armed)).toBe(clock.now() + 2000);
    clock.advance(1500);
    await sleep(SWEEP_WAIT_MS);
    expect(await statuses(svc, t, ids)).toEqual([
      ['OPEN', null],
      ['OPEN', null],
    ]);
    // Changing the grace while armed counts the new grace from now.
    expect((await cod(svc, t, 'POST', { grace_seconds: 3 })).body.cancels_at).toBe(
      new Date(clock.now() + 3000).toISOString(),
    );
    clock.advance(2000);
    await sleep(SWEEP_WAIT_MS);
    expect(await statuses(svc, t, ids)).toEqual([
      ['OPEN', null],
      ['OPEN', null],
    ]);
    clock.advance(1001);
    await cancelledOnDisconnect(svc, t, ids);
  });

  it('revoking the key closes its connection (4401) and arms it: the orders go after the grace', async () => {
    const t = await trader(svc, 'cod-revoke@orders.test', { scopes: WS_SCOPES });
    const reader = await keyFor(svc, t.email, t.token, { scopes: ORDER_SCOPES });
    expect((await cod(svc, t, 'POST', { grace_seconds: 1 })).status).toBe(200);
    const c = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    const ids = await rest(svc, t, 1, 6);
    const revoked = await http(`${svc.api}/api-keys/${t.keyId}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}` },
    });
    expect(revoked.status).toBe(200);
    expect((await c.waitClose()).code).toBe(4401);
    await sleep(SWEEP_WAIT_MS);
    expect(await statuses(svc, reader, ids)).toEqual([['OPEN', null]]);
    clock.advance(1001);
    await cancelledOnDisconnect(svc, reader, ids);
  });
});

describe('realtime: cancel-on-disconnect across a restart (the safe direction)', () => {
  it('after a restart every enabled key is armed: cancelled unless a connection authenticates in time', async () => {
    let svc = await startOrdersApp();
    let clock = svc.clock as ManualClock;
    const gone = await trader(svc, undefined, { scopes: WS_SCOPES });
    const back = await keyFor(svc, gone.email, gone.token, { scopes: WS_SCOPES });
    const plain = await keyFor(svc, gone.email, gone.token, { scopes: WS_SCOPES });
    // Enabled on a key that cannot open a realtime connection: it never had one to lose.
    const noWs = await keyFor(svc, gone.email, gone.token, { scopes: ORDER_SCOPES });
    for (const k of [gone, back, noWs]) {
      expect((await cod(svc, k, 'POST', { grace_seconds: 5 })).status).toBe(200);
    }
    const ws = await WsClient.authed(svc.baseUrl, { api_key: gone.key }); // open at shutdown
    const goneIds = await rest(svc, gone, 2, 1);
    const backIds = await rest(svc, back, 2, 3);
    const plainIds = await rest(svc, plain, 1, 5);
    const noWsIds = await rest(svc, noWs, 1, 6);
    const stoppedAt = clock.now() + 60_000;
    clock.advance(60_000);
    await svc.close({ keepData: true });
    expect((await ws.waitClose()).code).toBe(1001);

    svc = await startOrdersApp({ dataDir: svc.dataDir, now: new Date(stoppedAt).toISOString() });
    clock = svc.clock as ManualClock;
    try {
      // Armed at boot for the full grace, enabled state kept.
      expect((await cod(svc, gone, 'GET')).body).toEqual({
        key_id: gone.keyId,
        enabled: true,
        grace_seconds: 5,
        connections: 0,
        cancels_at: new Date(stoppedAt + 5000).toISOString(),
      });
      expect((await cod(svc, plain, 'GET')).body.enabled).toBe(false);
      expect((await cod(svc, noWs, 'GET')).body).toMatchObject({ enabled: true, cancels_at: null });
      clock.advance(3000);
      await sleep(SWEEP_WAIT_MS);
      const again = await WsClient.authed(svc.baseUrl, { api_key: back.key }); // in time
      clock.advance(3000);
      // The sweep that cancels `gone` passes `back` (the same deadline) too.
      await cancelledOnDisconnect(svc, gone, goneIds);
      expect(await statuses(svc, back, backIds)).toEqual(backIds.map(() => ['OPEN', null]));
      expect(await statuses(svc, plain, plainIds)).toEqual([['OPEN', null]]);
      expect(await statuses(svc, noWs, noWsIds)).toEqual([['OPEN', null]]);
      await again.close();
    } finally {
      await svc.close();
    }
  });
});
