import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/common/clock/clock.js';
import { ClusterSignals } from '../../src/modules/redis/cluster-signals.js';
import type { RedisClusterSignals } from '../../src/modules/redis/redis-cluster-signals.js';
import { RealtimeHub } from '../../src/modules/realtime/realtime-hub.service.js';
import { WebhooksCore } from '../../src/modules/webhooks/webhooks.core.js';
import { expectError, http, startApp, type Running } from '../support/harness.js';
import {
  as,
  getOrder,
  keyFor,
  limit,
  ORDER_SCOPES,
  place,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import { RedisServer } from '../support/redis-server.js';
import { copyDatabaseOf, openDatabaseOf } from '../support/test-database.js';
import { sleep, WsClient } from '../support/ws.js';
import {
  createEndpoint,
  HOOK_SCOPES,
  hookUser,
  WEBHOOK_ENV,
  type Json,
} from '../support/webhooks.js';

/**
 * REDIS_URL: two app instances on one Redis hear each other's signals. Each instance has its own
 * DATA_DIR (SQLite is one process's), both copied from one directory, so the same keys, webhook
 * endpoint and cancel-on-disconnect setting exist in both. Where a cluster would share one
 * database, the test writes the change into B's database itself, then shows that B keeps serving
 * its cache until A's signal arrives, and drops it then.
 */
const WS_SCOPES = { scopes: [...ORDER_SCOPES, 'websocket'] };
const GRACE_S = 5;
const m = TRADABLE[2];

describe('two instances on one Redis: invalidation and cancel-on-disconnect', () => {
  let redis: RedisServer;
  let rx: Receiver;
  let a: Running;
  let b: Running;
  let clock: ManualClock;
  let revoked: Trader;
  let rotated: Trader;
  let cod: Trader;
  let missed: Trader;
  let missedRotation: Trader;
  let hook: Trader;
  let endpoint: Json;
  const NOW = '2027-02-01T09:00:00.000Z';

  beforeAll(async () => {
    redis = await RedisServer.start();
    rx = await Receiver.start();
    // One deployment: the instances share their keys (on SQLite each has its copy of DATA_DIR, so
    // the prefix derived from it would differ).
    const env = { ...WEBHOOK_ENV, REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'svc-two-instances:' };
    const first = await startApp({ now: NOW, env });
    revoked = await trader(first, undefined, WS_SCOPES);
    rotated = await keyFor(first, revoked.email, revoked.token, WS_SCOPES);
    cod = await keyFor(first, revoked.email, revoked.token, WS_SCOPES);
    missed = await keyFor(first, revoked.email, revoked.token, WS_SCOPES);
    missedRotation = await keyFor(first, revoked.email, revoked.token, WS_SCOPES);
    const enabled = await as(cod, `${first.api}/orders/cancel-on-disconnect`, {
      method: 'POST',
      json: { grace_seconds: GRACE_S },
    });
    expect(enabled.status).toBe(200);
    hook = await hookUser(first, { scopes: HOOK_SCOPES });
    endpoint = await createEndpoint(first, hook, rx.url('/hook'));
    const dir = first.dataDir;
    await first.close({ keepData: true });
    const copy = mkdtempSync(join(tmpdir(), 'svc-e2e-'));
    cpSync(dir, copy, { recursive: true });
    await copyDatabaseOf(dir, copy);
    // One clock for both, as two machines on NTP would share one time.
    clock = new ManualClock(NOW);
    clock.advance(60_000);
    a = await startApp({ clock, env, dataDir: dir });
    b = await startApp({ clock, env, dataDir: copy });
    for (const svc of [a, b]) {
      const signals = svc.app.get(ClusterSignals) as RedisClusterSignals;
      const t0 = Date.now();
      while (!signals.listening && Date.now() - t0 < 5000) await sleep(10);
      expect(signals.listening).toBe(true);
    }
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await rx?.close();
    await redis?.stop();
  });

  /** Writes to B's platform database, as a change made through the one shared database would. */
  function inB(sql: string, ...params: unknown[]): void {
    const db = openDatabaseOf(b.dataDir, 'platform');
    try {
      db.prepare(sql).run(...params);
    } finally {
      db.close();
    }
  }

  const ordersOn = (svc: Running, t: Trader) => as(t, `${svc.api}/orders?limit=1`);
  const session = (t: Trader) => ({ authorization: `Bearer ${t.token}` });

  it("revoking a key on A closes its socket on B (4401 API_KEY_REVOKED) and drops B's cached key", async () => {
    const ws = await WsClient.authed(b.baseUrl, { api_key: revoked.key });
    expect((await ordersOn(b, revoked)).status).toBe(200);
    inB(
      'UPDATE api_keys SET revoked_at = ? WHERE id = ?',
      clock.nowDate().toISOString(),
      revoked.keyId,
    );
    // B still serves its cached resolution: only the signal tells it.
    expect((await ordersOn(b, revoked)).status).toBe(200);
    const res = await http(`${a.api}/api-keys/${revoked.keyId}/revoke`, {
      method: 'POST',
      headers: session(revoked),
    });
    expect(res.status).toBe(200);
    expect(await ws.waitClose()).toMatchObject({ code: 4401, reason: 'API_KEY_REVOKED' });
    expect(ws.messages.filter((x) => x.type === 'error')).toEqual([
      { type: 'error', code: 'API_KEY_REVOKED', message: 'The API key was revoked' },
    ]);
    expectError(await ordersOn(b, revoked), 401, 'API_KEY_REVOKED');
  });

  it('rotating a key on A closes its socket on B (4401 API_KEY_ROTATED) and B refuses the old secret', async () => {
    const ws = await WsClient.authed(b.baseUrl, { api_key: rotated.key });
    const other = await WsClient.authed(b.baseUrl, { api_key: cod.key });
    expect((await ordersOn(b, rotated)).status).toBe(200);
    inB("UPDATE api_keys SET secret_hash = 'rotated-elsewhere' WHERE id = ?", rotated.keyId);
    expect((await ordersOn(b, rotated)).status).toBe(200);
    const res = await http(`${a.api}/api-keys/${rotated.keyId}/rotate`, {
      method: 'POST',
      headers: session(rotated),
    });
    expect(res.status).toBe(200);
    expect(await ws.waitClose()).toMatchObject({ code: 4401, reason: 'API_KEY_ROTATED' });
    expect(ws.messages.filter((x) => x.type === 'error')).toEqual([
      {
        type: 'error',
        code: 'API_KEY_ROTATED',
        message: 'The API key was rotated: reconnect with its new secret',
      },
    ]);
    expectError(await ordersOn(b, rotated), 401, 'UNAUTHENTICATED');
    // Another key's socket on B stays open.
    await other.sync();
    expect(other.closed).toBeNull();
    await other.close();
  });

  it("a webhook endpoint changed on A drops B's endpoint cache", async () => {
    const cached = (svc: Running) =>
      svc.app
        .get(WebhooksCore)
        .endpointsFor('test')
        .map((e) => e.id);
    expect(cached(b)).toContain(endpoint.id);
    inB("UPDATE webhook_endpoints SET status = 'DISABLED' WHERE id = ?", endpoint.id);
    expect(cached(b)).toContain(endpoint.id); // B's cache, until told
    const res = await as(hook, `${a.api}/webhooks/${endpoint.id}`, {
      method: 'PATCH',
      json: { description: 'changed on A' },
    });
    expect(res.status).toBe(200);
    const t0 = Date.now();
    while (cached(b).includes(endpoint.id) && Date.now() - t0 < 3000) await sleep(10);
    expect(cached(b)).not.toContain(endpoint.id);
    expect(cached(a)).toContain(endpoint.id); // A's own database still has it active
  });

  it("a signal missed (Redis away) is caught by B's periodic re-read of its sessions' keys", async () => {
    const gone = await WsClient.authed(b.baseUrl, { api_key: missed.key });
    const before = await WsClient.authed(b.baseUrl, { api_key: missedRotation.key });
    const rotatedAt = clock.now() + 1;
    clock.advance(10);
    const after = await WsClient.authed(b.baseUrl, { api_key: missedRotation.key });
    // Changed in the database with no signal at all.
    inB(
      'UPDATE api_keys SET revoked_at = ? WHERE id = ?',
      clock.nowDate().toISOString(),
      missed.keyId,
    );
    inB(
      'UPDATE api_keys SET rotated_at = ? WHERE id = ?',
      new Date(rotatedAt).toISOString(),
      missedRotation.keyId,
    );
    await sleep(100);
    expect(gone.closed).toBeNull();
    // What B's timer does every CLUSTER_CACHE_TTL_MS (5 s), run now.
    await b.app.get(RealtimeHub).recheckKeys();
    expect(await gone.waitClose()).toMatchObject({ code: 4401, reason: 'API_KEY_REVOKED' });
    expect(await before.waitClose()).toMatchObject({ code: 4401, reason: 'API_KEY_ROTATED' });
    // A session that authenticated after the rotation used the new secret: it stays.
    await after.sync();
    expect(after.closed).toBeNull();
    await after.close();
  });

  const status = (svc: Running) => as(cod, `${svc.api}/orders/cancel-on-disconnect`);
  async function until(svc: Running, ok: (body: Json) => boolean): Promise<Json> {
    const t0 = Date.now();
    for (;;) {
      const s = await status(svc);
      if (ok(s.body)) return s.body;
      if (Date.now() - t0 > 3000) throw new Error(`status stayed ${JSON.stringify(s.body)}`);
      await sleep(20);
    }
  }

  it('cancel-on-disconnect counts both instances; the last close arms it once, on its instance', async () => {
    const onA = await WsClient.authed(a.baseUrl, { api_key: cod.key });
    const onB = await WsClient.authed(b.baseUrl, { api_key: cod.key });
    for (const svc of [a, b]) {
      expect(await until(svc, (s) => s.connections === 2)).toMatchObject({ cancels_at: null });
    }
    // One resting order in each instance's engine (each has its own database here).
    const orderA = await place(a, cod, limit(m, 'BUY', 'YES', 2, 1));
    const orderB = await place(b, cod, limit(m, 'BUY', 'YES', 2, 1));
    await onA.close();
    await until(b, (s) => s.connections === 1);
    await sleep(150); // an arm would have been told by now
    for (const svc of [a, b]) {
      expect((await status(svc)).body).toMatchObject({ connections: 1, cancels_at: null });
    }
    const closedAt = clock.now();
    await onB.close();
    const expected = new Date(closedAt + GRACE_S * 1000).toISOString();
    expect(await until(a, (s) => s.cancels_at !== null)).toMatchObject({
      connections: 0,
      cancels_at: expected,
    });
    expect((await status(b)).body).toMatchObject({ connections: 0, cancels_at: expected });
    clock.advance(GRACE_S * 1000 + 1);
    // B armed it, B cancels; A runs no cancel of its own.
    const t0 = Date.now();
    while ((await getOrder(b, cod, orderB.id)).status !== 'CANCELLED' && Date.now() - t0 < 5000)
      await sleep(20);
    expect(await getOrder(b, cod, orderB.id)).toMatchObject({
      status: 'CANCELLED',
      cancel_reason: 'CANCEL_ON_DISCONNECT',
    });
    await sleep(300); // three sweeps of A
    expect((await getOrder(a, cod, orderA.id)).status).toBe('OPEN');
    expect((await status(a)).body.cancels_at).toBeNull();
  });
});
