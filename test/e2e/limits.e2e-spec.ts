import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { connect } from 'node:net';
import {
  MemoryLimitStore,
  type Charge,
  type LimitStore,
} from '../../src/modules/limits/limit-store.js';
import { verifiedAccount } from '../support/access.js';
import { burst } from '../support/burst.js';
import { jsonClient, type ClientResponse } from '../support/json-client.js';
import { toNextMinute } from '../support/limits.js';
import { expectError, http, rawRequest, startApp, type Running } from '../support/harness.js';
import { WsClient } from '../support/ws.js';
import { createKey, sessionFor } from '../support/keys.js';

// 12:00:00.000 UTC exactly: a minute window starts here, so counts are not split by a boundary.
const NOON = '2026-11-22T12:00:00.000Z';
// The tests of a thousand requests or more: the default 60 s is tight on a loaded 2-core CI box.
const SLOW_TEST_MS = 120_000;
// No info line per request: the app shares the CPU with the thousands of requests of this suite.
const QUIET = { LOG_LEVEL: 'warn' };

/**
 * The requests that only fill a window go 16 at a time (which of them lands first does not matter
 * to the rule) through a lean keep-alive client: the test shares its CPU with the app it calls.
 * The requests at a boundary go one by one through `http` after them.
 */
const client = jsonClient(16);

/** `n` GETs of `url`, with their statuses in the order sent. */
function hammer(url: string, n: number, headers: Record<string, string> = {}): Promise<number[]> {
  return burst(n, async () => (await client.send(url, 'GET', headers)).status);
}

/** A limit store the test can break while the app runs: a store that goes down after boot. */
class BreakableStore implements LimitStore {
  readonly memory = new MemoryLimitStore();
  broken: LimitStore | null = null;

  take(charges: readonly Charge[], now: number) {
    return this.broken === null ? this.memory.take(charges, now) : this.broken.take(charges, now);
  }

  count(bucket: string, now: number) {
    return this.broken === null ? this.memory.count(bucket, now) : this.broken.count(bucket, now);
  }
}

describe('limits', () => {
  afterAll(() => client.close());

  describe('with the defaults', () => {
    let svc: Running;
    let clock: ManualClock;
    beforeAll(async () => {
      svc = await startApp({ now: NOON, env: QUIET });
      clock = svc.clock as ManualClock;
    });
    afterAll(() => svc.close());
    beforeEach(() => toNextMinute(clock));

    it('a FREE key gets exactly 60 requests a minute; the 61st is 429 with an honest Retry-After', async () => {
      const windowEnd = clock.now() + 60_000;
      const key = await createKey(svc.api, await sessionFor(svc.api));
      const h = { 'x-api-key': key.key };
      clock.advance(20_000); // 40 s before the window ends
      const first = await http(`${svc.api}/markets?limit=1`, { headers: h });
      expect(first.headers.get('x-ratelimit-limit')).toBe('60');
      expect(first.headers.get('x-ratelimit-remaining')).toBe('59');
      expect(first.headers.get('x-ratelimit-reset')).toBe(String(windowEnd / 1000));
      const rest = await hammer(`${svc.api}/markets?limit=1`, 59, h);
      expect(rest.every((s) => s === 200)).toBe(true);
      const refused = await http(`${svc.api}/markets?limit=1`, { headers: h });
      const err = expectError(refused, 429, 'RATE_LIMITED');
      expect(err.details).toMatchObject({ limit_scope: 'key', limit: 60 });
      expect(refused.headers.get('retry-after')).toBe('40');
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
      // One second before the advertised moment: still refused. At it: accepted.
      clock.advance(39_000);
      expectError(await http(`${svc.api}/markets?limit=1`, { headers: h }), 429, 'RATE_LIMITED');
      clock.advance(1_000);
      expect((await http(`${svc.api}/markets?limit=1`, { headers: h })).status).toBe(200);
    });

    it('an approved tier change raises the ceiling to PRO (600 per minute)', async () => {
      // An account of its own: a session's tier follows its user's keys, and the seeded trader's
      // session is tested as FREE below.
      const token = await verifiedAccount(svc, 'pro-tier@limits.test');
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
      const login = (path: string) =>
        http(`${svc.baseUrl}${path}`, {
          method: 'POST',
          json: { email: 'trader@sandbox.test', password: 'wrong-password' },
        });
      // The router decodes %61 to "a": /api/v1/%61uth/login is the login route, and counts as auth.
      const statuses = await burst(
        60,
        async (i) =>
          (await login(i % 2 === 0 ? '/api/v1/auth/login' : '/api/v1/%61uth/login')).status,
      );
      expect(statuses).toEqual(new Array(60).fill(401));
      expect(
        expectError(await login('/api/v1/%61uth/login'), 429, 'RATE_LIMITED').details,
      ).toMatchObject({ limit_scope: 'ip', category: 'auth', limit: 60 });
      // Unmatched paths are categorised after decoding too: referrals allows 10.
      await hammer(`${svc.api}/%72eferrals`, 10);
      expect(
        expectError(await http(`${svc.api}/referrals`), 429, 'RATE_LIMITED').details,
      ).toMatchObject({
        category: 'referrals',
      });
    });

    it(
      'each per-IP category stops at its SPEC number',
      async () => {
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
      },
      SLOW_TEST_MS,
    );

    it('a WebSocket handshake counts against the per-IP general ceiling; past it, 429 before any upgrade', async () => {
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

    it('401 and 403 answers do not consume the per-key allowance; a limited request has no effect', async () => {
      const token = await sessionFor(svc.api);
      const narrow = await createKey(svc.api, token, { scopes: ['orders:read', 'markets:read'] });
      const h = { 'x-api-key': narrow.key };
      // 70 requests refused for scope (403) by the narrow key.
      expect(await hammer(`${svc.api}/usage`, 70, h)).toEqual(new Array(70).fill(403));
      // The narrow key still has its whole minute for what it may do.
      const statuses = await hammer(`${svc.api}/markets?limit=1`, 60, h);
      expect(statuses.every((s) => s === 200)).toBe(true);
      expectError(await http(`${svc.api}/markets?limit=1`, { headers: h }), 429, 'RATE_LIMITED');

      // A session (limited per user, FREE: 60/min) creating keys: the refused request creates
      // nothing, however the 60 attempts interleave.
      clock.advance(60_000);
      const before = await http(`${svc.api}/api-keys?limit=200`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const created = await burst(
        60,
        async (i) =>
          (
            await http(`${svc.api}/api-keys`, {
              method: 'POST',
              headers: { authorization: `Bearer ${token}` },
              json: { name: `k${i}`, environment: 'live' },
            })
          ).status,
      );
      expect(created.filter((s) => s === 429).length).toBe(1);
      expect(created.filter((s) => s === 201).length).toBe(59);
      clock.advance(60_000);
      const after = await http(`${svc.api}/api-keys?limit=200`, {
        headers: { authorization: `Bearer ${token}` },
      });
      // 60 per minute (per user, and per IP for the auth category): the listing and 59 creations
      // fit; the 60th creation was refused and created nothing.
      expect(after.body.data.length - before.body.data.length).toBe(59);
    });

    it(
      'quotas: with metering off nothing is counted or refused',
      async () => {
        const key = await createKey(svc.api, await sessionFor(svc.api), { scopes: ['data:read'] });
        const h = { 'x-api-key': key.key };
        // 1,001 requests, 60 in each minute (the key's ceiling).
        for (let sent = 0; sent < 1001; sent += 60) {
          clock.advance(60_000);
          const batch = await burst(Math.min(60, 1001 - sent), () =>
            client.send(`${svc.api}/usage`, 'GET', h),
          );
          for (const res of batch) {
            expect(res.status).toBe(200);
            expect(res.headers['x-quota-daily-limit']).toBeUndefined();
          }
        }
        const usage = await http(`${svc.api}/usage`, { headers: h });
        expect(usage.body).toMatchObject({ metering_enabled: false, daily: { used: null } });
      },
      SLOW_TEST_MS,
    );

    it('X-Forwarded-For is not honoured from an untrusted peer', async () => {
      await burst(10, (i) =>
        http(`${svc.api}/referrals`, { headers: { 'x-forwarded-for': `203.0.113.${i}` } }),
      );
      expectError(
        await http(`${svc.api}/referrals`, { headers: { 'x-forwarded-for': '203.0.113.99' } }),
        429,
        'RATE_LIMITED',
      );
    });
  });

  describe('with metering on', () => {
    let svc: Running;
    let clock: ManualClock;
    const store = new BreakableStore();
    beforeAll(async () => {
      svc = await startApp({
        now: '2026-11-22T23:00:00.000Z',
        limitStore: store,
        env: { ...QUIET, DATA_API_USAGE_METERING_ENABLED: 'true' },
      });
      clock = svc.clock as ManualClock;
    });
    afterAll(() => svc.close());
    beforeEach(() => {
      store.broken = null;
      toNextMinute(clock);
    });

    it(
      'quotas: a FREE key stops at 1,000 a UTC day and resumes the next day',
      async () => {
        const key = await createKey(svc.api, await sessionFor(svc.api));
        const h = { 'x-api-key': key.key };
        // /markets: its per-IP ceiling (600) is above the key's 60 a minute.
        const first = await http(`${svc.api}/markets?limit=1`, { headers: h });
        expect(first.headers.get('x-quota-daily-limit')).toBe('1000');
        expect(first.headers.get('x-quota-daily-remaining')).toBe('999');
        expect(first.headers.get('x-quota-monthly-limit')).toBe('20000');
        expect(first.headers.get('x-quota-monthly-remaining')).toBe('19999');
        // 999 more, 60 in each minute: each is charged once, so together they read every count
        // from 998 left down to 0 left.
        const rest: ClientResponse[] = [];
        for (let i = 1; i < 1000;) {
          if (i % 60 === 0) clock.advance(60_000);
          const n = Math.min(60 - (i % 60), 1000 - i);
          rest.push(...(await burst(n, () => client.send(`${svc.api}/markets?limit=1`, 'GET', h))));
          i += n;
        }
        expect(rest.filter((r) => r.status !== 200)).toEqual([]);
        const left = rest.map((r) => Number(r.headers['x-quota-daily-remaining']));
        expect(left.sort((a, b) => a - b)).toEqual(Array.from({ length: 999 }, (_, i) => i));
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
      },
      SLOW_TEST_MS,
    );

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
        const logsBefore = svc.logs.length;
        store.broken = make();
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
        const exports = await hammer(`${svc.api}/orders/export`, 6, other);
        expect(exports).toEqual(new Array(6).fill(200));
        const route = await http(`${svc.api}/orders/export`, { headers: other });
        expect(expectError(route, 429, 'RATE_LIMITED').details).toMatchObject({
          limit_scope: 'route',
        });
        expect(route.headers.get('x-ratelimit-remaining')).toBe('54');
        const warnings = svc.logs
          .slice(logsBefore)
          .filter((l) => l.includes('limit store unavailable'));
        expect(warnings.length).toBe(1); // logged, and rate-limited
      },
    );
  });

  it('a handshake waiting on a slow limit store survives a client reset, and is 503 if the service closes meanwhile', async () => {
    const memory = new MemoryLimitStore();
    let delayMs = 0;
    // Each take the store is asked for, so the test acts while a handshake waits on it (a
    // condition, not a guess at how long the loaded machine takes to get there).
    const waiting: Promise<unknown>[] = [];
    let asked: () => void = () => undefined;
    const slow: LimitStore = {
      take: (charges, now) => {
        const answer = new Promise((r) => setTimeout(r, delayMs)).then(() =>
          memory.take(charges, now),
        );
        waiting.push(answer);
        asked();
        return answer;
      },
      count: (bucket, now) => memory.count(bucket, now),
    };
    const nextTake = () => new Promise<void>((r) => (asked = r));
    let svc: Running | undefined = await startApp({ now: NOON, limitStore: slow });
    try {
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
        const taken = nextTake();
        sock.write(handshake);
        await taken;
        sock.resetAndDestroy();
      }
      // Past every store answer, the waiting handshakes went on to their reset sockets.
      await Promise.all(waiting);
      await new Promise((r) => setImmediate(r));
      expect((await http(`${svc.api}/health`)).status).toBe(200);
      // Shutting down while one waits: the contract's 503, not an upgrade onto a closing server.
      delayMs = 300;
      const taken = nextTake();
      const answer = rawRequest(svc.baseUrl, handshake);
      await taken;
      const closing = svc.close();
      svc = undefined;
      const raw = await answer;
      await closing;
      expect(raw.status).toBe(503);
      expect(JSON.parse(raw.body).error.code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      await svc?.close();
    }
  });

  it('X-Forwarded-For is honoured from trusted proxies', async () => {
    const svc = await startApp({ now: NOON, env: { TRUSTED_PROXIES: '127.0.0.1' } });
    try {
      // Ten addresses, one request each, then an eleventh: none meets the referrals ceiling (10).
      const statuses = await burst(
        10,
        async (i) =>
          (
            await http(`${svc.api}/referrals`, {
              headers: { 'x-forwarded-for': `203.0.113.${i}` },
            })
          ).status,
      );
      expect(statuses).toEqual(new Array(10).fill(404));
      const other = await http(`${svc.api}/referrals`, {
        headers: { 'x-forwarded-for': '203.0.113.99' },
      });
      expect(other.status).toBe(404);
    } finally {
      await svc.close();
    }
  });
});
