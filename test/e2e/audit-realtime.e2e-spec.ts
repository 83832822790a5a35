import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createHmac } from 'node:crypto';
import WebSocket from 'ws';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { loadConfig } from '../../src/config/app-config.js';
import { AccessPipeline } from '../../src/modules/access/access.pipeline.js';
import { http, rawRequest, startApp, type Running } from '../support/harness.js';
import { createKey, sessionFor } from '../support/keys.js';
import {
  as,
  getOrder,
  limit,
  ORDER_SCOPES,
  place,
  startOrdersApp,
  trader,
  TRADABLE,
  type Trader,
} from '../support/orders.js';
import { sleep, WsClient, wsUrl, type WsMessage } from '../support/ws.js';

/**
 * Realtime rules of SPEC.md, CONTRACT.md, the README and the AsyncAPI document that no other
 * realtime test pins down (an audit of the realtime suite's coverage; each test fails if its rule
 * breaks).
 */

const WS_SCOPES = [...ORDER_SCOPES, 'websocket'];
/** cancel-on-disconnect sweeps every 100 ms of real time against the service clock. */
const SWEEP_WAIT_MS = 350;

function cod(svc: Running, key: string, method: 'GET' | 'POST' | 'DELETE', json?: unknown) {
  return as({ key }, `${svc.api}/orders/cancel-on-disconnect`, { method, json });
}

/** Waits until the server counts `n` realtime connections for the key. */
async function connectionsAre(svc: Running, key: string, n: number): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    const s = await cod(svc, key, 'GET');
    if (s.body.connections === n) return;
    if (Date.now() - t0 > 3000) throw new Error(`connections stayed ${s.body.connections}`);
    await sleep(20);
  }
}

/** seq of each event channel, in arrival order, from index `from`. */
function seqs(c: WsClient, from = 0): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const m of c.messages.slice(from)) {
    if (m.type === 'event') (out[m.channel as string] ??= []).push(m.seq as number);
  }
  return out;
}

const upTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

describe('audit: realtime protocol', () => {
  let svc: Running;
  let clock: ManualClock;
  let a: Trader;

  beforeAll(async () => {
    svc = await startOrdersApp({ env: { WS_AUTH_TIMEOUT_MS: '2000' } });
    clock = svc.clock as ManualClock;
    a = await trader(svc, undefined, { scopes: WS_SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('a (re)subscribe starts every channel over at seq 1, not only orderbook (orders, trades, ticker)', async () => {
    // README / AsyncAPI: "A (re)subscribe starts its channel over: the first event after
    // `subscribed` has seq 1".
    const m = TRADABLE[5];
    const channels = ['orders', `trades:${m.id}`, 'ticker'];
    const c = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    expect(await c.subscribe(channels)).toEqual({ type: 'subscribed', channels });
    // Two crossing IOCs against the house: each gives trades, orders and ticker events.
    const take = () =>
      place(svc, a, limit(m, 'BUY', 'YES', m.reference + 1, 1, { time_in_force: 'IOC' }));
    expect((await take()).status).toBe('FILLED');
    expect((await take()).status).toBe('FILLED');
    await c.sync();
    const first = seqs(c);
    for (const ch of channels) {
      expect(first[ch].length).toBeGreaterThanOrEqual(2);
      expect({ ch, seqs: first[ch] }).toEqual({ ch, seqs: upTo(first[ch].length) });
    }
    const from = c.mark();
    expect(await c.subscribe(channels)).toEqual({ type: 'subscribed', channels });
    expect((await take()).status).toBe('FILLED');
    await c.sync();
    const again = seqs(c, from);
    for (const ch of channels) {
      expect(again[ch].length).toBeGreaterThanOrEqual(1);
      expect({ ch, seqs: again[ch] }).toEqual({ ch, seqs: upTo(again[ch].length) });
    }
    // A channel the resubscribe did not name keeps counting.
    const partial = c.mark();
    expect(await c.subscribe(['orders'])).toEqual({ type: 'subscribed', channels: ['orders'] });
    expect((await take()).status).toBe('FILLED');
    await c.sync();
    const after = seqs(c, partial);
    expect(after.orders).toEqual(upTo(after.orders.length));
    expect(after[`trades:${m.id}`]).toEqual([again[`trades:${m.id}`].length + 1]);
    await c.close();
  });

  it('a subscribe naming a private channel without its scope subscribes nothing of the request', async () => {
    // README: "else an INSUFFICIENT_SCOPE error message, and nothing of that subscribe is
    // subscribed".
    const m = TRADABLE[6];
    const noWallet = await trader(svc, undefined, {
      scopes: ['websocket', 'orders:read', 'orders:write', 'markets:read'],
    });
    const c = await WsClient.authed(svc.baseUrl, { api_key: noWallet.key });
    const err = await c.subscribe(['ticker', 'orders', `orderbook:${m.id}`, 'wallet']);
    expect(err).toEqual({
      type: 'error',
      code: 'INSUFFICIENT_SCOPE',
      message: 'Channel wallet needs the wallet:read scope',
      details: { required_scopes: ['wallet:read'] },
    });
    // An order that moves the book, the ticker and the user's orders: nothing arrives, not even
    // an orderbook snapshot.
    const from = c.mark();
    await place(svc, noWallet, limit(m, 'BUY', 'YES', m.reference - 10, 1));
    await c.sync();
    expect(c.messages.slice(from)).toEqual([{ type: 'pong' }]);
    expect(c.events(`orderbook:${m.id}`)).toEqual([]);
    expect(c.closed).toBeNull();
    // The same channels without `wallet` are subscribed and do carry that kind of order.
    const ok = ['ticker', 'orders'];
    expect(await c.subscribe(ok)).toEqual({ type: 'subscribed', channels: ok });
    const later = c.mark();
    await place(svc, noWallet, limit(m, 'BUY', 'YES', m.reference - 11, 1));
    await c.sync();
    expect(c.events('orders', later).map((e) => e.data.event)).toEqual(['order.accepted']);
    expect(c.events('ticker', later)).toHaveLength(1);
    await c.close();
  });

  it('credentials in the handshake (X-API-Key, Authorization, ?api_key=) do not authenticate: the first message must', async () => {
    // SPEC: "The first message on the socket authenticates it. It is not a header or query
    // parameter."
    const viaHeaders = await WsClient.connect(svc.baseUrl, {
      headers: { 'x-api-key': a.key, authorization: `Bearer ${a.token}` },
    });
    viaHeaders.send({ type: 'subscribe', channels: ['ticker'] });
    expect(await viaHeaders.waitClose()).toEqual({ code: 4401, reason: 'UNAUTHENTICATED' });
    expect(viaHeaders.messages).toEqual([
      {
        type: 'error',
        code: 'UNAUTHENTICATED',
        message: 'The first message must be {"type":"auth", ...}',
      },
    ]);

    const raw = new WebSocket(`${wsUrl(svc.baseUrl)}?api_key=${encodeURIComponent(a.key)}`);
    const got: WsMessage[] = [];
    raw.on('message', (d: WebSocket.RawData) => got.push(JSON.parse(d.toString()) as WsMessage));
    await new Promise<void>((resolve, reject) => {
      raw.once('open', () => resolve());
      raw.once('error', reject);
    });
    const closed = new Promise<number>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`not closed; got ${JSON.stringify(got)}`)), 3000);
      raw.once('close', (code) => {
        clearTimeout(t);
        resolve(code);
      });
    });
    raw.send(JSON.stringify({ type: 'ping' }));
    expect(await closed).toBe(4401);
    expect(got).toEqual([{ type: 'error', code: 'UNAUTHENTICATED', message: expect.any(String) }]);

    // A header credential does not stop the auth deadline either.
    const idle = await WsClient.connect(svc.baseUrl, { headers: { 'x-api-key': a.key } });
    expect(await idle.waitClose(5000)).toEqual({ code: 4401, reason: 'auth timeout' });
    expect(idle.messages).toEqual([
      { type: 'error', code: 'UNAUTHENTICATED', message: 'No auth message within 2000 ms' },
    ]);
  });

  it('a signed auth outside +/-300 s is SIGNATURE_TIMESTAMP_SKEW and close 4401; 300 s off authenticates', async () => {
    // CONTRACT error table: timestamp outside +/-300 s -> SIGNATURE_TIMESTAMP_SKEW (401 class,
    // so close 4401 on the stream: "signature codes as over HTTP").
    const k = await createKey(svc.api, a.token, {
      scopes: ['websocket'],
      environment: 'test',
      signing_required: true,
    });
    const now = Math.floor(clock.now() / 1000);
    const signed = (ts: number) => ({
      type: 'auth',
      api_key: k.key,
      timestamp: String(ts),
      signature: `v1=${createHmac('sha256', k.signing_secret!).update(`${ts}.GET./api/v1/ws.`).digest('hex')}`,
    });
    for (const skew of [-301, 301]) {
      const c = await WsClient.connect(svc.baseUrl);
      c.send(signed(now + skew));
      expect(await c.waitClose()).toEqual({ code: 4401, reason: 'SIGNATURE_TIMESTAMP_SKEW' });
      expect(c.messages).toEqual([
        {
          type: 'error',
          code: 'SIGNATURE_TIMESTAMP_SKEW',
          message: expect.any(String),
          details: { server_time: now, skew_seconds: skew, window_seconds: 300 },
        },
      ]);
    }
    for (const skew of [-300, 300]) {
      const c = await WsClient.connect(svc.baseUrl);
      c.send(signed(now + skew));
      expect(await c.waitFor(() => true)).toMatchObject({ type: 'auth_ok', key_id: k.id });
      await c.close();
    }
  });

  it('an unexpected server error while authenticating: INTERNAL and close 1011; a retry authenticates', async () => {
    // README / AsyncAPI: "1011 an unexpected server error while authenticating (retry)".
    const pipeline = svc.app.get(AccessPipeline);
    const spy = jest
      .spyOn(pipeline, 'authenticateRealtime')
      .mockRejectedValueOnce(new Error('SQLITE_BUSY: database is locked'));
    try {
      const c = await WsClient.connect(svc.baseUrl);
      c.send({ type: 'auth', api_key: a.key });
      expect(await c.waitClose()).toEqual({ code: 1011, reason: 'INTERNAL' });
      expect(c.messages).toEqual([
        {
          type: 'error',
          code: 'INTERNAL',
          message: 'Internal error; quote the request_id when reporting it',
        },
      ]);
    } finally {
      spy.mockRestore();
    }
    const again = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    expect(again.messages[0]).toMatchObject({ type: 'auth_ok', key_id: a.keyId });
    await again.close();
    // The AsyncAPI document names the code and the close.
    const doc = (await http(`${svc.api}/asyncapi.json`)).body;
    expect(doc.info.description).toContain(
      '1011 an unexpected server error while authenticating (retry)',
    );
    expect(doc.info.description).toMatch(/Error message codes[^]*\bINTERNAL\b/);
  });

  it('a message of exactly 64 KiB is answered; one byte more closes 1009', async () => {
    // README: "1009 a client message over 64 KiB".
    const c = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    const head = '{"type":"ping","pad":"';
    const exact = `${head}${'x'.repeat(64 * 1024 - head.length - 2)}"}`;
    expect(Buffer.byteLength(exact)).toBe(65_536);
    const from = c.mark();
    c.sendRaw(exact);
    expect(await c.waitFor(() => true, 3000, from)).toEqual({ type: 'pong' });
    expect(c.closed).toBeNull();
    c.sendRaw(`${head}${'x'.repeat(64 * 1024 - head.length - 1)}"}`);
    expect((await c.waitClose(5000)).code).toBe(1009);
  });

  it("a rotated key's connection is closed and arms cancel-on-disconnect; reconnecting with the new secret in time keeps the orders", async () => {
    // README: a rotated key's connection closes 4401 API_KEY_ROTATED ("reconnect with the new
    // secret"); cancel-on-disconnect belongs to the key, whose identity rotation keeps.
    const m = TRADABLE[7];
    const t = await trader(svc, undefined, { scopes: WS_SCOPES });
    expect((await cod(svc, t.key, 'POST', { grace_seconds: 2 })).status).toBe(200);
    const ws = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    const order = await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 10, 1));
    const rotated = await http(`${svc.api}/api-keys/${t.keyId}/rotate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}` },
    });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.key as string;
    expect(await ws.waitClose()).toEqual({ code: 4401, reason: 'API_KEY_ROTATED' });
    await connectionsAre(svc, fresh, 0);
    expect((await cod(svc, fresh, 'GET')).body).toEqual({
      key_id: t.keyId,
      enabled: true,
      grace_seconds: 2,
      connections: 0,
      cancels_at: new Date(clock.now() + 2000).toISOString(),
    });
    clock.advance(1500);
    await sleep(SWEEP_WAIT_MS);
    const back = await WsClient.authed(svc.baseUrl, { api_key: fresh });
    expect((await cod(svc, fresh, 'GET')).body).toMatchObject({ connections: 1, cancels_at: null });
    clock.advance(5000);
    await sleep(SWEEP_WAIT_MS);
    expect(await getOrder(svc, { ...t, key: fresh }, order.id)).toMatchObject({ status: 'OPEN' });
    // Gone for good: cancelled after the grace.
    await back.close();
    await connectionsAre(svc, fresh, 0);
    clock.advance(2001);
    await sleep(SWEEP_WAIT_MS);
    expect(await getOrder(svc, { ...t, key: fresh }, order.id)).toMatchObject({
      status: 'CANCELLED',
      cancel_reason: 'CANCEL_ON_DISCONNECT',
    });
  });

  it("a live key: a deposit is a DEPOSIT wallet message; cancel-on-disconnect cancels the key's live orders", async () => {
    // README: "A wallet message follows every balance change (with the ledger's type as
    // reason...)": real money added on the live engine is DEPOSIT (paper money is FUNDING).
    // Issue 6 / CONTRACT: cancel-on-disconnect cancels "every open order placed with that key",
    // in the key's own environment (the other cancel-on-disconnect tests use test keys).
    const token = await sessionFor(svc.api, 'responder@sandbox.test');
    const k = await createKey(svc.api, token, {
      environment: 'live',
      scopes: [...WS_SCOPES, 'wallet:write'],
      acknowledge_write_scopes: true,
    });
    const ws = await WsClient.authed(svc.baseUrl, { api_key: k.key });
    expect(ws.messages[0]).toMatchObject({ type: 'auth_ok', environment: 'live' });
    expect(await ws.subscribe(['wallet'])).toEqual({ type: 'subscribed', channels: ['wallet'] });
    const before = (await as(k, `${svc.api}/wallet`)).body.balance_cents as number;
    const dep = await http(`${svc.api}/wallet/deposits`, {
      method: 'POST',
      headers: { 'x-api-key': k.key, 'idempotency-key': `audit-dep-${k.id}` },
      json: { amount_cents: 100_000 },
    });
    expect(dep.status).toBe(201);
    await ws.sync();
    expect(ws.events('wallet').map((e) => e.data)).toEqual([
      {
        balance_cents: before + 100_000,
        delta_cents: 100_000,
        reason: 'DEPOSIT',
        reserved_cents: 0,
        available_cents: before + 100_000,
      },
    ]);
    const m = TRADABLE[0];
    const placed = await as(k, `${svc.api}/orders`, {
      method: 'POST',
      json: limit(m, 'BUY', 'YES', 30, 2),
    });
    expect(placed.status).toBe(201);
    expect(placed.body).toMatchObject({ status: 'OPEN', environment: 'live' });
    expect((await cod(svc, k.key, 'POST', { grace_seconds: 1 })).status).toBe(200);
    await ws.close();
    await connectionsAre(svc, k.key, 0);
    clock.advance(500);
    await sleep(SWEEP_WAIT_MS);
    expect((await as(k, `${svc.api}/orders/${placed.body.id}`)).body.status).toBe('OPEN');
    clock.advance(501);
    await sleep(SWEEP_WAIT_MS);
    expect((await as(k, `${svc.api}/orders/${placed.body.id}`)).body).toMatchObject({
      status: 'CANCELLED',
      cancel_reason: 'CANCEL_ON_DISCONNECT',
      environment: 'live',
    });
  });

  it('the AsyncAPI server is wss on the staging host at /api/v1/ws', async () => {
    const res = await http(`${svc.api}/asyncapi.json`);
    expect(res.status).toBe(200);
    expect(res.body.servers).toEqual({
      staging: {
        host: 'sandbox.staging.svc.example',
        protocol: 'wss',
        pathname: '/api/v1/ws',
        description: 'Staging',
      },
    });
  });
});

describe('audit: the handshake per-IP ceiling behind a trusted proxy', () => {
  let svc: Running;

  beforeAll(async () => {
    svc = await startApp({
      now: '2026-11-22T12:00:00.000Z',
      env: { SANDBOX_FEED_INTERVAL_MS: '0', TRUSTED_PROXIES: '127.0.0.1' },
    });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('counts the client named by X-Forwarded-For; its 429 ends with the service-clock minute', async () => {
    // README: a handshake counts against the per-IP general ceiling (600 / 60 s), with the same
    // client-address rule (TRUSTED_PROXIES) as the HTTP routes; past it 429 RATE_LIMITED with
    // Retry-After, before any upgrade.
    const { host } = new URL(svc.baseUrl);
    const handshake = (xff: string) =>
      rawRequest(
        svc.baseUrl,
        `GET /api/v1/ws HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `X-Forwarded-For: ${xff}\r\nSec-WebSocket-Version: 13\r\n` +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      );
    const busy = '203.0.113.7';
    for (let sent = 0; sent < 600; sent += 50) {
      const statuses = await Promise.all(
        Array.from({ length: 50 }, async () => {
          const r = await http(`${svc.api}/health`, { headers: { 'x-forwarded-for': busy } });
          return r.status;
        }),
      );
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
    }
    const refused = await handshake(busy);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).error).toMatchObject({
      code: 'RATE_LIMITED',
      status: 429,
      details: { limit_scope: 'ip', limit: 600, category: 'general' },
    });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBe(60);
    // Another client behind the same proxy, and the proxy itself, still connect.
    const other = await WsClient.connect(svc.baseUrl, {
      headers: { 'x-forwarded-for': '203.0.113.8' },
    });
    const direct = await WsClient.connect(svc.baseUrl);
    for (const c of [other, direct]) expect(c.closed).toBeNull();
    await other.close();
    await direct.close();
    // Retry-After later (service clock), the busy client's handshake upgrades.
    (svc.clock as ManualClock).advance(retryAfter * 1000);
    const later = await WsClient.connect(svc.baseUrl, { headers: { 'x-forwarded-for': busy } });
    expect(later.closed).toBeNull();
    await later.close();
  });
});

describe('audit: a paper-only live key (env:paper) while the sandbox is off', () => {
  it('SANDBOX_DISABLED and close 4403, as for a test key: paper endpoints are unavailable', async () => {
    // SPEC: while the sandbox is off "the paper endpoints are unavailable"; CONTRACT: env:paper
    // makes a key paper-only whatever its class (the stream serves it the paper engine).
    const on = await startApp({ env: { SANDBOX_FEED_INTERVAL_MS: '0' } });
    const token = await sessionFor(on.api);
    const paperLive = await createKey(on.api, token, {
      scopes: ['websocket', 'env:paper'],
      environment: 'live',
    });
    await on.close({ keepData: true });
    const off = await startApp({
      dataDir: on.dataDir,
      env: { SANDBOX_FEED_INTERVAL_MS: '0', DEVELOPER_SANDBOX_ENABLED: 'false' },
    });
    try {
      const c = await WsClient.connect(off.baseUrl);
      c.send({ type: 'auth', api_key: paperLive.key });
      expect(await c.waitClose()).toEqual({ code: 4403, reason: 'SANDBOX_DISABLED' });
      expect(c.messages).toEqual([
        { type: 'error', code: 'SANDBOX_DISABLED', message: expect.any(String) },
      ]);
    } finally {
      await off.close();
    }
  });
});

describe('audit: documented realtime defaults', () => {
  it('WS_MAX_BUFFERED_BYTES defaults to 4194304 (README configuration table)', () => {
    expect(loadConfig({}).wsMaxBufferedBytes).toBe(4_194_304);
    expect(loadConfig({ WS_MAX_BUFFERED_BYTES: '2048' }).wsMaxBufferedBytes).toBe(2048);
  });
});
