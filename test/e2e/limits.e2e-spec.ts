import { afterEach, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { connect } from 'node:net';
import { MemoryLimitStore, type LimitStore } from '../../src/modules/limits/limit-store.js';
import { expectError, http, rawRequest, startApp, type Running } from '../support/harness.js';
import { WsClient } from '../support/ws.js';
import { createKey, sessionFor } from '../support/keys.js';

// 12:00:00.000 UTC exactly: a minute window starts here, so counts are not split by a boundary.
const NOON = '2026-11-22T12:00:00.000Z';

describe('limits', () => {
  let svc: Running | undefined;
  afterEach(async () => {
    await svc?.close();
    svc = undefined;
  });

  async function hammer(
    url: string,
    n: number,
    headers: Record<string, string> = {},
  ): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < n; i++) statuses.push((await http(url, { headers })).status);
    return statuses;
  }

  it('a FREE key gets exactly 60 requests a minute; the 61st is 429 with an honest Retry-After', async () => {
    svc = await startApp({ now: NOON });
    const key = await createKey(svc.api, await sessionFor(svc.api));
    const h = { 'x-api-key': key.key };
    (svc.clock as ManualClock).advance(20_000); // 12:00:20, 40 s before the window ends
    const first = await http(`${svc.api}/markets?limit=1`, { headers: h });
    expect(first.headers.get('x-ratelimit-limit')).toBe('60');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('59');
    expect(first.headers.get('x-ratelimit-reset')).toBe(
      String(Date.parse('2026-11-22T12:01:00Z') / 1000),
    );
    const rest = await hammer(`${svc.api}/markets?limit=1`, 59, h);
    expect(rest.every((s) => s === 200)).toBe(true);
    const refused = await http(`${svc.api}/markets?limit=1`, { headers: h });
    const err = expectError(refused, 429, 'RATE_LIMITED');
    expect(err.details).toMatchObject({ limit_scope: 'key', limit: 60 });
    expect(refused.headers.get('retry-after')).toBe('40');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    // One second before the advertised moment: still refused. At it: accepted.
    (svc.clock as ManualClock).advance(39_000);
    expectError(await http(`${svc.api}/markets?limit=1`, { headers: h }), 429, 'RATE_LIMITED');
    (svc.clock as ManualClock).advance(1_000);
    expect((await http(`${svc.api}/markets?limit=1`, { headers: h })).status).toBe(200);
  });

  it('an approved tier change raises the ceiling to PRO (600 per minute)', async () => {
    svc = await startApp({ now: NOON });
    const token = await sessionFor(svc.api);
    const key = await createKey(svc.api, token);
    const req = await http(`${svc.api}/api-keys/${key.id}/tier-request`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      json: { tier: 'PRO', reason: 'load tests' },
    });
    expect(req.status).toBe(202);
    const admin = await sessionFor(svc.api, 'admin@sandbox.test');
    const ok = await http(`${svc.api}/admin/tier-requests/${req.body.id}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(ok.status).toBe(200);
    const h = { 'x-api-key': key.key };
    // Half in the markets category, half in general, so no per-IP ceiling (600 each) interferes.
    const statuses = [
      ...(await hammer(`${svc.api}/markets?limit=1`, 300, h)),
      ...(await hammer(`${svc.api}/usage`, 300, h)),
    ];
    expect(statuses.filter((s) => s === 200).length).toBe(600);
    const refused = await http(`${svc.api}/usage`, { headers: h });
    expect(expectError(refused, 429, 'RATE_LIMITED').details).toMatchObject({
      limit_scope: 'key',
      limit: 600,
    });
  });

  it('per-IP ceilings apply before authentication: 60 auth requests, then 429 even with bad keys', async () => {
    svc = await startApp({ now: NOON });
    const statuses = await hammer(`${svc.api}/auth/me`, 60, { 'x-api-key': 'svc_test_bogus' });
    expect(statuses.every((s) => s === 401)).toBe(true);
    const err = expectError(
      await http(`${svc.api}/auth/me`, { headers: { 'x-api-key': 'svc_test_bogus' } }),
      429,
      'RATE_LIMITED',
    );
    expect(err.details).toMatchObject({ limit_scope: 'ip', limit: 60, category: 'auth' });
  });

  it('percent-encoding the path does not escape its per-IP category', async () => {
    svc = await startApp({ now: NOON });
    // The router decodes %61 to "a": /api/v1/%61uth/login is the login route, and counts as auth.
    for (let i = 0; i < 60; i++) {
      const path = i % 2 === 0 ? '/api/v1/auth/login' : '/api/v1/%61uth/login';
      const res = await http(`${svc.baseUrl}${path}`, {
        method: 'POST',
        json: { email: 'trader@sandbox.test', password: 'wrong-password' },
      });
      expect(res.status).toBe(401);
    }
    const refused = await http(`${svc.baseUrl}/api/v1/%61uth/login`, {
      method: 'POST',
      json: { email: 'trader@sandbox.test', password: 'wrong-password' },
    });
    expect(expectError(refused, 429, 'RATE_LIMITED').details).toMatchObject({
      limit_scope: 'ip',
      category: 'auth',
      limit: 60,
    });
    // Unmatched paths are categorised after decoding too: referrals allows 10.
    for (let i = 0; i < 10; i++) await http(`${svc.api}/%72eferrals`);
    expect(
      expectError(await http(`${svc.api}/referrals`), 429, 'RATE_LIMITED').details,
    ).toMatchObject({
      category: 'referrals',
    });
  });

  it('each per-IP category stops at its SPEC number', async () => {
    svc = await startApp({ now: NOON });
    const table: [string, string, number][] = [
      ['waitlist', '/api/v1/waitlist', 30],
      ['referrals', '/api/v1/referrals', 10],
      ['comments', '/api/v1/markets/mkt_x/comments', 120],
      ['orders', '/api/v1/rfq', 120],
      ['admin', '/api/v1/admin/anything', 200],
      ['app-shell', '/api/v1/changelog', 300],
      ['wallet', '/api/v1/transactions/cursor', 300],
      ['markets', '/api/v1/markets?limit=1', 600],
      ['general', '/api/v1/health', 600],
    ];
    for (const [category, path, limit] of table) {
      const statuses = await hammer(`${svc.baseUrl}${path}`, limit);
      expect(statuses.filter((s) => s === 429)).toEqual([]);
      const err = expectError(await http(`${svc.baseUrl}${path}`), 429, 'RATE_LIMITED');
      expect(err.details).toMatchObject({ limit_scope: 'ip', limit, category });
    }
  });

  it('a WebSocket handshake counts against the per-IP general ceiling; past it, 429 before any upgrade', async () => {
    svc = await startApp({ now: NOON });
    // 599 general requests, then one handshake: the 600th request of the minute.
    const statuses = await hammer(`${svc.baseUrl}/api/v1/health`, 599);
    expect(statuses.filter((s) => s === 429)).toEqual([]);
    const last = await WsClient.connect(svc.baseUrl);
    await last.close();
    const raw = await rawRequest(
      svc.baseUrl,
      `GET /api/v1/ws HTTP/1.1\r\nHost: ${new URL(svc.baseUrl).host}\r\nUpgrade: websocket\r\n` +
        'Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    );
    expect(raw.status).toBe(429);
    expect(Number(raw.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(raw.body).error).toMatchObject({
      code: 'RATE_LIMITED',
      details: { limit_scope: 'ip', limit: 600, category: 'general' },
    });
    // And the bucket is the HTTP routes' own.
    expectError(await http(`${svc.baseUrl}/api/v1/health`), 429, 'RATE_LIMITED');
  });

  it('a handshake waiting on a slow limit store survives a client reset, and is 503 if the service closes meanwhile', async () => {
    const memory = new MemoryLimitStore();
    let delayMs = 0;
    const slow: LimitStore = {
      take: async (charges, now) => {
        await new Promise((r) => setTimeout(r, delayMs));
        return memory.take(charges, now);
      },
      count: (bucket, now) => memory.count(bucket, now),
    };
    svc = await startApp({ now: NOON, limitStore: slow });
    const { host, hostname, port } = new URL(svc.baseUrl);
    const handshake =
      `GET /api/v1/ws HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n';
    // The client resets the connection while its handshake waits on the store: no crash.
    delayMs = 100;
    for (let i = 0; i < 3; i++) {
      const sock = connect({ host: hostname, port: Number(port) });
      await new Promise<void>((r) => sock.once('connect', () => r()));
      sock.on('error', () => undefined);
      sock.write(handshake);
      await new Promise((r) => setTimeout(r, 20));
      sock.resetAndDestroy();
    }
    await new Promise((r) => setTimeout(r, 250));
    expect((await http(`${svc.api}/health`)).status).toBe(200);
    // Shutting down while one waits: the contract's 503, not an upgrade onto a closing server.
    delayMs = 300;
    const answer = rawRequest(svc.baseUrl, handshake);
    await new Promise((r) => setTimeout(r, 50));
    const closing = svc.close();
    svc = undefined;
    const raw = await answer;
    await closing;
    expect(raw.status).toBe(503);
    expect(JSON.parse(raw.body).error.code).toBe('SERVICE_UNAVAILABLE');
  });

  it('401 and 403 answers do not consume the per-key allowance; a limited request has no effect', async () => {
    svc = await startApp({ now: NOON });
    const token = await sessionFor(svc.api);
    const narrow = await createKey(svc.api, token, { scopes: ['orders:read', 'markets:read'] });
    // 70 requests refused for scope (403) by the narrow key, and bogus keys (401) in between.
    for (let i = 0; i < 70; i++) {
      expect(
        (await http(`${svc.api}/usage`, { headers: { 'x-api-key': narrow.key } })).status,
      ).toBe(403);
    }
    // The narrow key still has its whole minute for what it may do.
    const statuses = await hammer(`${svc.api}/markets?limit=1`, 60, { 'x-api-key': narrow.key });
    expect(statuses.every((s) => s === 200)).toBe(true);
    expectError(
      await http(`${svc.api}/markets?limit=1`, { headers: { 'x-api-key': narrow.key } }),
      429,
      'RATE_LIMITED',
    );

    // A session (limited per user, FREE: 60/min) creating keys: the refused request creates nothing.
    (svc.clock as ManualClock).advance(60_000);
    const before = await http(`${svc.api}/api-keys?limit=200`, {
      headers: { authorization: `Bearer ${token}` },
    });
    let refused = 0;
    for (let i = 0; i < 60 && refused === 0; i++) {
      const res = await http(`${svc.api}/api-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        json: { name: `k${i}`, environment: 'live' },
      });
      if (res.status === 429) refused++;
    }
    expect(refused).toBe(1);
    (svc.clock as ManualClock).advance(60_000);
    const after = await http(`${svc.api}/api-keys?limit=200`, {
      headers: { authorization: `Bearer ${token}` },
    });
    // 60 per minute (per user, and per IP for the auth category): the listing and 59 creations fit;
    // the 60th creation was refused and created nothing.
    expect(after.body.data.length - before.body.data.length).toBe(59);
  });

  it('quotas: with metering on, a FREE key stops at 1,000 a UTC day and resumes the next day', async () => {
    svc = await startApp({
      now: '2026-11-22T23:00:00.000Z',
      env: { DATA_API_USAGE_METERING_ENABLED: 'true' },
    });
    const clock = svc.clock as ManualClock;
    const key = await createKey(svc.api, await sessionFor(svc.api));
    const h = { 'x-api-key': key.key };
    // /markets: its per-IP ceiling (600) is above the key's 60 a minute.
    let last = await http(`${svc.api}/markets?limit=1`, { headers: h });
    expect(last.headers.get('x-quota-daily-limit')).toBe('1000');
    expect(last.headers.get('x-quota-daily-remaining')).toBe('999');
    expect(last.headers.get('x-quota-monthly-limit')).toBe('20000');
    expect(last.headers.get('x-quota-monthly-remaining')).toBe('19999');
    for (let i = 1; i < 1000; i++) {
      if (i % 60 === 0) clock.advance(60_000);
      last = await http(`${svc.api}/markets?limit=1`, { headers: h });
      expect(last.status).toBe(200);
    }
    expect(last.headers.get('x-quota-daily-remaining')).toBe('0');
    clock.advance(60_000);
    const refused = await http(`${svc.api}/markets?limit=1`, { headers: h });
    const err = expectError(refused, 429, 'QUOTA_EXCEEDED');
    expect(err.details).toMatchObject({ period: 'day', limit: 1000, tier: 'FREE' });
    // Every limit header is on the quota's 429 too (nothing was charged).
    expect(refused.headers.get('x-quota-daily-remaining')).toBe('0');
    expect(refused.headers.get('x-quota-monthly-remaining')).toBe('19000');
    expect(refused.headers.get('x-quota-daily-limit')).toBe('1000');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('60');
    expect(refused.headers.get('x-ratelimit-limit')).toBe('60');
    const wait = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(wait)).toBe(true);
    const usage = await http(`${svc.api}/usage`, { headers: h });
    expect(usage.status).toBe(429);
    // Across midnight UTC the day quota starts again; the month keeps counting.
    clock.advance(wait * 1000);
    const next = await http(`${svc.api}/usage`, { headers: h });
    expect(next.status).toBe(200);
    expect(next.body.daily.used).toBe(1);
    expect(next.body.monthly.used).toBe(1001);
    expect(next.headers.get('x-quota-monthly-remaining')).toBe(String(20000 - 1001));
  });

  it('quotas: with metering off nothing is counted or refused', async () => {
    svc = await startApp({ now: NOON });
    const clock = svc.clock as ManualClock;
    const key = await createKey(svc.api, await sessionFor(svc.api), { scopes: ['data:read'] });
    const h = { 'x-api-key': key.key };
    for (let i = 0; i < 1001; i++) {
      if (i % 60 === 0) clock.advance(60_000);
      const res = await http(`${svc.api}/usage`, { headers: h });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-quota-daily-limit')).toBeNull();
    }
    const usage = await http(`${svc.api}/usage`, { headers: h });
    expect(usage.body).toMatchObject({ metering_enabled: false, daily: { used: null } });
  });

  it.each([
    [
      'throws',
      (): LimitStore => ({
        take: () => {
          throw new Error('store down');
        },
        count: () => {
          throw new Error('store down');
        },
      }),
    ],
    [
      'never answers',
      (): LimitStore => ({
        take: () => new Promise(() => undefined),
        count: () => new Promise(() => undefined),
      }),
    ],
  ])(
    'when the store %s: per-IP ceilings and quotas fail open, the tier ceiling still holds',
    async (_name, make) => {
      svc = await startApp({
        now: NOON,
        limitStore: make(),
        env: { DATA_API_USAGE_METERING_ENABLED: 'true' },
      });
      // 61 requests in the auth category (ceiling 60): no per-IP 429.
      const bogus = await hammer(`${svc.api}/auth/me`, 61, { 'x-api-key': 'svc_test_bogus' });
      expect(bogus.every((s) => s === 401)).toBe(true);
      const key = await createKey(svc.api, await sessionFor(svc.api));
      const h = { 'x-api-key': key.key };
      const statuses = await hammer(`${svc.api}/auth/me`, 60, h);
      expect(statuses.every((s) => s === 200)).toBe(true);
      const ok = await http(`${svc.api}/markets?limit=1`, { headers: h });
      expectError(ok, 429, 'RATE_LIMITED');
      expect(ok.headers.get('x-quota-daily-limit')).toBeNull();
      // A route limit holds locally too, and its refusal reads the key's minute from the same
      // local counters (6 exports used, 54 left; the store that is down would say 60).
      const other = { 'x-api-key': (await createKey(svc.api, await sessionFor(svc.api))).key };
      for (let i = 0; i < 6; i++) {
        expect((await http(`${svc.api}/orders/export`, { headers: other })).status).toBe(200);
      }
      const route = await http(`${svc.api}/orders/export`, { headers: other });
      expect(expectError(route, 429, 'RATE_LIMITED').details).toMatchObject({
        limit_scope: 'route',
      });
      expect(route.headers.get('x-ratelimit-remaining')).toBe('54');
      const warnings = svc.logs.filter((l) => l.includes('limit store unavailable'));
      expect(warnings.length).toBe(1); // logged, and rate-limited
    },
    60_000,
  );

  it('X-Forwarded-For is honoured only from trusted proxies', async () => {
    svc = await startApp({ now: NOON });
    for (let i = 0; i < 10; i++) {
      await http(`${svc.api}/referrals`, { headers: { 'x-forwarded-for': `203.0.113.${i}` } });
    }
    expectError(
      await http(`${svc.api}/referrals`, { headers: { 'x-forwarded-for': '203.0.113.99' } }),
      429,
      'RATE_LIMITED',
    );
    await svc.close();
    svc = await startApp({ now: NOON, env: { TRUSTED_PROXIES: '127.0.0.1' } });
    for (let i = 0; i < 10; i++) {
      const res = await http(`${svc.api}/referrals`, {
        headers: { 'x-forwarded-for': `203.0.113.${i}` },
      });
      expect(res.status).toBe(404);
    }
    const other = await http(`${svc.api}/referrals`, {
      headers: { 'x-forwarded-for': '203.0.113.99' },
    });
    expect(other.status).toBe(404);
  });
});
