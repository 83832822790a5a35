import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { totpAt } from '../../src/common/crypto/totp.js';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { verificationToken, verifiedAccount } from '../support/access.js';
import { http, rawRequest, startApp, type Running } from '../support/harness.js';
import {
  callService,
  OpenApiConformance,
  type CallOptions,
  type Exchange,
  type Obj,
} from '../support/openapi-conformance.js';
import { ADMIN, approveTier, ORDER_SCOPES, TRADABLE, TRADER } from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import { seedEvent } from '../support/sports.js';
import { sessionFor } from '../support/keys.js';
import { until } from '../support/webhooks.js';

/**
 * Response conformance: the service, driven as a client drives it, answers what its own OpenAPI
 * 3.1 document (GET /api/v1/openapi.json) says: a documented status, a documented Content-Type, a
 * body valid against the documented schema (with no undocumented property), the headers marked
 * required. Rate limits and usage metering are on, so their headers are checked too; every test
 * starts a new minute of the service clock so the per-minute windows do not carry over. The clock
 * starts before the legacy /openapi.json's sunset (308) and the last test moves past it (410).
 */
const START = '2026-07-01T12:00:00.000Z';
const HOOK_SCOPES = [
  ...ORDER_SCOPES,
  'wallet:write',
  'webhooks:read',
  'webhooks:write',
  'notifications:read',
  'notifications:write',
  'data:read',
  'websocket',
];
/** Operations this suite does not reach, and why. */
const NOT_EXERCISED: Record<string, string> = {};

describe('OpenAPI response conformance', () => {
  let svc: Running;
  let rx: Receiver;
  let oas: OpenApiConformance;
  /** trader@sandbox.test: a session, a test key with every trading and webhook scope, a live key. */
  let token: string;
  let adminToken: string;
  let testKey: string;
  let testKeyId: string;
  let liveKey: string;
  let readOnlyKey: string;
  /** The trader's TOTP seed, once enrolled. */
  let mfaSecret: string;
  const totp = () => totpAt(mfaSecret, Math.floor(svc.clock.nowSeconds() / 30));
  const market = TRADABLE[0];

  const call = (method: string, path: string, opts: CallOptions = {}) =>
    callService(svc.baseUrl, method, path, opts);
  const expectConforms = (ex: Exchange, status?: number) => oas.expectConforms(ex, status);
  /** call + expectConforms under /api/v1. */
  const api = async (method: string, path: string, status: number, opts: CallOptions = {}) =>
    expectConforms(await call(method, `/api/v1${path}`, opts), status);
  const advance = (ms: number) => (svc.clock as ManualClock).advance(ms);

  beforeAll(async () => {
    rx = await Receiver.start();
    rx.on('/ok', { status: 200 });
    rx.otherwise({ status: 500 });
    svc = await startApp({
      now: START,
      env: {
        SANDBOX_FEED_INTERVAL_MS: '0',
        DATA_API_USAGE_METERING_ENABLED: 'true',
        WEBHOOK_POLL_MS: '20',
        WEBHOOK_RETRY_SCHEDULE: '0',
      },
    });
    const res = await http(`${svc.api}/openapi.json`);
    expect(res.status).toBe(200);
    oas = new OpenApiConformance(res.body as Obj);
    token = await sessionFor(svc.api, TRADER);
    adminToken = await sessionFor(svc.api, ADMIN);
    const created = await api('POST', '/api-keys', 201, {
      token,
      json: {
        name: 'conformance',
        environment: 'test',
        scopes: HOOK_SCOPES,
        acknowledge_write_scopes: true,
      },
    });
    testKey = created.body.key;
    testKeyId = created.body.id;
    await approveTier(
      svc,
      { email: TRADER, token, key: testKey, keyId: testKeyId, userId: '' },
      'ENTERPRISE',
      adminToken,
    );
    const live = await api('POST', '/api-keys', 201, {
      token,
      json: {
        name: 'live',
        environment: 'live',
        scopes: HOOK_SCOPES,
        acknowledge_write_scopes: true,
      },
    });
    liveKey = live.body.key;
    const ro = await api('POST', '/api-keys', 201, {
      token,
      json: { name: 'read-only', environment: 'test' },
    });
    readOnlyKey = ro.body.key;
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });
  beforeEach(() => advance(61_000));

  describe('meta', () => {
    it('health, readiness, changelog (JSON and RSS), AsyncAPI', async () => {
      await api('GET', '/health', 200);
      await api('GET', '/health/ready', 200);
      await api('GET', '/changelog', 200);
      await api('GET', '/changelog.rss', 200);
      await api('GET', '/asyncapi.json', 200);
    });

    it('the contract: 200, then 304 with If-None-Match; the legacy URL redirects (308)', async () => {
      for (const path of ['/openapi.json', '/openapi/v1.json']) {
        const full = await api('GET', path, 200);
        const etag = full.headers.get('etag') ?? '';
        await api('GET', path, 304, { headers: { 'if-none-match': etag } });
      }
      expectConforms(await call('GET', '/openapi.json'), 308);
    });

    it('public operations refuse a credential from a foreign origin (403 CORS_ORIGIN_REJECTED)', async () => {
      const foreign = { key: testKey, headers: { origin: 'https://evil.example' } };
      for (const path of ['/health', '/changelog', '/changelog.rss', '/openapi.json']) {
        await api('GET', path, 403, foreign);
      }
      expectConforms(await call('GET', '/openapi.json', foreign), 403);
      await api('POST', '/auth/login', 403, {
        headers: { origin: 'https://evil.example', cookie: 'session=1' },
        json: { email: TRADER, password: 'sandbox-password' },
      });
    });

    it('answers given before routing: malformed HTTP (400), an unmet Expect (417), oversized headers (431)', async () => {
      /** One raw HTTP/1.1 request, its answer as an Exchange for `path`. */
      const raw = async (method: string, path: string, head: string): Promise<Exchange> => {
        const res = await rawRequest(svc.baseUrl, `${method} ${path} HTTP/1.1\r\n${head}\r\n`);
        return {
          status: res.status,
          headers: new Headers(res.headers),
          body: null,
          text: res.body,
          method,
          path,
        };
      };
      const host = `Host: ${new URL(svc.baseUrl).host}\r\n`;
      expect(
        expectConforms(await raw('GET', '/api/v1/health', 'Host: a b\r\n'), 400).text,
      ).toContain('BAD_REQUEST');
      expect(
        expectConforms(
          await raw('POST', '/api/v1/orders', `${host}Expect: bogus\r\nContent-Length: 2\r\n`),
          417,
        ).text,
      ).toContain('EXPECTATION_FAILED');
      const big = `X-Big: ${'a'.repeat(70_000)}\r\n`;
      expect(
        expectConforms(await raw('GET', '/api/v1/markets', `${host}${big}`), 431).text,
      ).toContain('HEADERS_TOO_LARGE');
      expectConforms(await raw('GET', '/openapi.json', 'Host: a b\r\n'), 400);
    });
  });

  describe('accounts and sessions', () => {
    it('register, verify, resend, login, me', async () => {
      const email = `conf-${Date.now()}@example.test`;
      const reg = await api('POST', '/auth/register', 201, {
        json: { email, password: 'correct-horse-battery' },
      });
      expect(reg.body.email).toBe(email);
      await api('POST', '/auth/register', 409, {
        json: { email, password: 'correct-horse-battery' },
      });
      await api('POST', '/auth/register', 400, { json: { email, password: 'short' } });
      const fresh = await api('POST', '/auth/login', 200, {
        json: { email, password: 'correct-horse-battery' },
      });
      await api('POST', '/auth/verify-email/resend', 202, { token: fresh.body.token });
      await api('POST', '/auth/verify-email', 422, { json: { token: 'x'.repeat(32) } });
      await api('POST', '/auth/verify-email', 400, { json: { token: 'short' } });
      await api('POST', '/auth/verify-email', 200, {
        json: { token: verificationToken(svc, email) },
      });
      await api('POST', '/auth/verify-email/resend', 409, { token: fresh.body.token });
      await api('POST', '/auth/login', 401, { json: { email, password: 'wrong-password!' } });
      await api('POST', '/auth/login', 400, { body: '{"email":', headers: json() });
      await api('GET', '/auth/me', 200, { key: testKey });
      await api('GET', '/auth/me', 200, { token });
      await api('GET', '/auth/me', 401);
      await api('GET', '/auth/me', 401, { key: 'svc_test_00000000000000000000000000000000' });
      await api('GET', '/auth/me', 403, {
        key: testKey,
        headers: { origin: 'https://evil.example' },
      });
    });
  });

  describe('users', () => {
    it('own profile, its update, the public profile, and their refusals', async () => {
      await api('GET', '/users/me', 200, { token });
      await api('GET', '/users/me', 200, { key: readOnlyKey });
      await api('GET', '/users/me', 403, { key: testKey });
      await api('GET', '/users/me', 401);
      const admin = await api('GET', '/users/me', 200, { token: adminToken });
      await api('PATCH', '/users/me', 200, {
        token,
        json: { display_name: null, bio: null, avatar_url: null },
      });
      const own = await api('PATCH', '/users/me', 200, {
        token,
        json: {
          display_name: 'Conformance',
          bio: 'Checks the document',
          avatar_url: 'https://cdn.example.com/conformance.png',
          profile_visibility: 'PUBLIC',
        },
      });
      await api('PATCH', '/users/me', 400, { token, json: { username: 'Not Valid' } });
      await api('PATCH', '/users/me', 400, { token, body: '{"bio":', headers: json() });
      await api('PATCH', '/users/me', 409, { token, json: { username: admin.body.username } });
      await api('PATCH', '/users/me', 403, { key: readOnlyKey, json: { bio: 'test key' } });
      await api('PATCH', '/users/me', 401, { json: { bio: 'nobody' } });
      await api('GET', `/users/${own.body.username}`, 200);
      await api('GET', `/users/${own.body.id}`, 200, { key: readOnlyKey });
      await api('GET', '/users/nobody_at_all', 404);
      await api('GET', `/users/${own.body.username}`, 403, { key: testKey });
      await api('GET', `/users/${own.body.username}`, 401, {
        key: 'svc_test_00000000000000000000000000000000',
      });
    });
  });

  describe('API keys, tiers, security, terms, usage', () => {
    it('create (with a signing secret), list, rotate, revoke, and their refusals', async () => {
      const signed = await api('POST', '/api-keys', 201, {
        token,
        json: { name: 'signed', environment: 'live', signing_required: true, expires_in_days: 30 },
      });
      expect(signed.body.signing_secret).toMatch(/^svc_sign_/);
      await api('GET', '/api-keys', 200, { token });
      await api('GET', '/api-keys?limit=0', 400, { token });
      await api('GET', '/markets', 401, { key: signed.body.key });
      const rotated = await api('POST', `/api-keys/${signed.body.id}/rotate`, 200, { token });
      await api('POST', `/api-keys/${signed.body.id}/revoke`, 200, { token });
      await api('GET', '/markets', 401, { key: rotated.body.key });
      await api('POST', `/api-keys/${signed.body.id}/rotate`, 409, { token });
      await api('POST', '/api-keys/key_00000000000000000000/revoke', 404, { token });
      await api('POST', '/api-keys', 422, {
        token,
        json: { name: 'w', environment: 'test', scopes: ['orders:write'] },
      });
      await api('POST', '/api-keys', 403, {
        token,
        json: { name: 'a', environment: 'test', scopes: ['admin:read'] },
      });
      await api('POST', '/api-keys', 400, { token, json: { name: 'x', environment: 'prod' } });
      await api('POST', '/api-keys', 403, {
        key: testKey,
        json: { name: 'x', environment: 'test' },
      });
      await api('POST', '/api-keys', 415, {
        token,
        body: 'name=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      await api('POST', '/api-keys', 413, {
        token,
        json: { name: 'x', environment: 'test', pad: 'x'.repeat(2_000_000) },
      });
      const unverified = await sessionFor(svc.api, 'unverified@sandbox.test');
      await api('POST', '/api-keys', 403, {
        token: unverified,
        json: {
          name: 'w',
          environment: 'test',
          scopes: ['orders:write'],
          acknowledge_write_scopes: true,
        },
      });
    });

    it('tier requests: ask, list (admin), approve, deny, and a second decision', async () => {
      const key = await api('POST', '/api-keys', 201, {
        token,
        json: { name: 'tiers', environment: 'live' },
      });
      const ask = (tier: string) =>
        api('POST', `/api-keys/${key.body.id}/tier-request`, 202, {
          token,
          json: { tier, reason: 'conformance' },
        });
      const first = await ask('PRO');
      await api('GET', '/admin/tier-requests', 200, { token: adminToken });
      await api('GET', '/admin/tier-requests?status=PENDING', 200, { token: adminToken });
      await api('GET', '/admin/tier-requests', 403, { token });
      await api('POST', `/admin/tier-requests/${first.body.id}/deny`, 200, { token: adminToken });
      await api('POST', `/admin/tier-requests/${first.body.id}/approve`, 409, {
        token: adminToken,
      });
      const second = await ask('PRO');
      await api('POST', `/admin/tier-requests/${second.body.id}/approve`, 200, {
        token: adminToken,
      });
      await api('POST', '/admin/tier-requests/tier_00000000000000000000/approve', 404, {
        token: adminToken,
      });
      await api('POST', `/api-keys/${key.body.id}/tier-request`, 400, {
        token,
        json: { tier: 'GOLD' },
      });
    });

    it('MFA enrol and step-up, developer terms, usage', async () => {
      const enrolled = await api('POST', '/security/mfa/enroll', 201, { token });
      mfaSecret = enrolled.body.secret as string;
      await api('POST', '/security/mfa/step-up', 422, { token, json: { code: '000000' } });
      await api('POST', '/security/mfa/step-up', 200, { token, json: { code: totp() } });
      await api('POST', '/security/mfa/step-up', 400, { token, json: {} });
      const terms = await api('GET', '/developer-terms', 200, { token });
      await api('POST', '/developer-terms/accept', 200, {
        token,
        json: { version: terms.body.version },
      });
      await api('POST', '/developer-terms/accept', 422, { token, json: { version: '1999-01-01' } });
      await api('GET', '/usage', 200, { key: testKey });
      await api('GET', '/usage', 200, { token });
    });
  });

  describe('markets', () => {
    it('list, get, order book, trades, with and without a key, and refusals', async () => {
      await api('GET', '/markets', 200);
      await api('GET', '/markets?limit=2&status=OPEN', 200, { key: testKey });
      await api('GET', '/markets?limit=0', 400);
      await api('GET', '/markets?bogus=1', 400, { key: testKey });
      await api('GET', '/markets', 401, { key: 'svc_test_00000000000000000000000000000000' });
      await api('GET', `/markets/${market.id}`, 200);
      await api('GET', `/markets/${market.id}`, 200, { key: testKey });
      await api('GET', '/markets/mkt_00000000000000000000', 404);
      await api('GET', `/markets/${market.id}/orderbook`, 200, { key: testKey });
      await api('GET', `/markets/${market.id}/orderbook?depth=2`, 200);
      await api('GET', `/markets/${market.id}/trades`, 200, { key: testKey });
    });
  });

  describe('comments', () => {
    it('post, reply, list, thread, get, edit, report, delete, with and without a key, and refusals', async () => {
      const path = `/markets/${market.id}/comments`;
      const none = 'cmt_00000000000000000000';
      const root = await api('POST', path, 201, { token, json: { body: 'conformance' } });
      const id = root.body.id as string;
      const reply = await api('POST', path, 201, {
        token: adminToken,
        json: { body: 'a reply', parent_id: id },
      });
      await api('POST', path, 422, { token, json: { body: 'deeper', parent_id: reply.body.id } });
      await api('POST', path, 400, { token, json: { body: '' } });
      await api('POST', '/markets/mkt_00000000000000000000/comments', 404, {
        token,
        json: { body: 'x' },
      });
      await api('POST', path, 403, { key: readOnlyKey, json: { body: 'x' } });
      await api('POST', path, 401, { json: { body: 'x' } });
      await api('GET', path, 200);
      await api('GET', `${path}?limit=1`, 200, { token });
      await api('GET', `${path}?parent_id=${id}`, 200);
      await api('GET', `${path}?limit=0`, 400);
      await api('GET', '/markets/mkt_00000000000000000000/comments', 404);
      await api('GET', `/comments/${id}`, 200);
      await api('GET', `/comments/${id}`, 200, { token });
      await api('GET', `/comments/${none}`, 404);
      await api('PATCH', `/comments/${id}`, 200, { token, json: { body: 'edited' } });
      await api('PATCH', `/comments/${id}`, 403, { token: adminToken, json: { body: 'x' } });
      await api('PATCH', `/comments/${id}`, 400, { token, json: { body: 'x', extra: 1 } });
      await api('PATCH', `/comments/${none}`, 404, { token, json: { body: 'x' } });
      const report = (status: number, who: string, json: unknown, target = id) =>
        api('POST', `/comments/${target}/report`, status, { token: who, json });
      await report(202, adminToken, { reason: 'SPAM', note: 'conformance' });
      await report(409, adminToken, { reason: 'SPAM' });
      await report(422, token, { reason: 'SPAM' });
      await report(400, adminToken, { reason: 'RUDE' });
      await report(404, adminToken, { reason: 'SPAM' }, none);
      await api('DELETE', `/comments/${reply.body.id}`, 403, { token });
      await api('DELETE', `/comments/${id}`, 204, { token });
      await api('DELETE', `/comments/${none}`, 404, { token });
      await api('PATCH', `/comments/${id}`, 409, { token, json: { body: 'x' } });
      expect((await api('GET', `/comments/${id}`, 200)).body.body).toBeNull();
    });
  });

  describe('indices', () => {
    it('list and history (current and deprecated), with and without a key, and refusals', async () => {
      for (const base of ['/indices', '/data-exports/indices']) {
        await api('GET', base, 200);
        await api('GET', base, 200, { key: testKey });
        await api('GET', `${base}?bogus=1`, 400, { key: testKey });
        await api('GET', base, 401, { key: 'svc_test_00000000000000000000000000000000' });
        await api('GET', base, 403, { key: (await hookKey(['orders:read'])).key });
        await api('GET', `${base}/all/history`, 200);
        advance(61_000);
        const page = await api('GET', `${base}/sports/history?limit=1`, 200, { key: testKey });
        expect(page.body.data).toHaveLength(1);
        await api('GET', `${base}/sports/history?from=2026-07-01T00:00:00Z`, 200, {
          key: testKey,
        });
        await api('GET', `${base}/all/history?limit=0`, 400, { key: testKey });
        await api('GET', `${base}/all/history?from=tomorrow`, 400, { key: testKey });
        await api('GET', `${base}/nope/history`, 404, { key: testKey });
        await api('GET', `${base}/all/history`, 401, {
          key: 'svc_test_00000000000000000000000000000000',
        });
        await api('GET', `${base}/all/history`, 403, { key: (await hookKey(['orders:read'])).key });
      }
    });
  });

  describe('crypto', () => {
    it('prices, history and the sandbox price, with and without a key, and refusals', async () => {
      const { key } = await hookKey(['crypto:read', 'orders:write']);
      await api('GET', '/crypto/prices', 200);
      await api('GET', '/crypto/prices', 200, { key });
      await api('GET', '/crypto/prices', 401, { key: 'svc_test_00000000000000000000000000000000' });
      await api('GET', '/crypto/prices', 403, { key: (await hookKey(['orders:read'])).key });
      await api('POST', '/sandbox/crypto/BTC-USD/price', 200, {
        key,
        json: { price: '101000.25' },
      });
      await api('POST', '/sandbox/crypto/BTC-USD/price', 400, { key, json: { price: '-1' } });
      await api('POST', '/sandbox/crypto/DOGE-USD/price', 404, { key, json: { price: '1.00' } });
      await api('POST', '/sandbox/crypto/BTC-USD/price', 403, {
        key: liveKey,
        json: { price: '1.00' },
      });
      advance(61_000);
      await api('POST', '/sandbox/crypto/BTC-USD/price', 200, { key, json: { price: '99000' } });
      const page = await api('GET', '/crypto/prices/BTC-USD/history?limit=1', 200, { key });
      expect(page.body.data).toHaveLength(1);
      expect(page.body.next_cursor).not.toBeNull();
      await api('GET', '/crypto/prices/BTC-USD/history?interval=1d', 200);
      await api('GET', '/crypto/prices/BTC-USD/history?interval=5m', 400, { key });
      await api('GET', '/crypto/prices/BTC-USD/history?from=tomorrow', 400, { key });
      await api('GET', '/crypto/prices/DOGE-USD/history', 404, { key });
      await api('GET', '/crypto/prices/BTC-USD/history', 401, {
        key: 'svc_test_00000000000000000000000000000000',
      });
      await api('GET', '/crypto/prices/BTC-USD/history', 403, {
        key: (await hookKey(['orders:read'])).key,
      });
      // Inside an ephemeral world: the world's own indices, set and stepped with its key.
      const maker = (await hookKey(['crypto:read', 'orders:write', 'wallet:write'])).key;
      const world = await api('POST', '/sandbox/worlds', 201, { key: maker, json: { seed: 11 } });
      const worldKey = (world.body as Obj).key as string;
      await api('POST', '/sandbox/crypto/ETH-USD/price', 200, {
        key: worldKey,
        json: { price: '4000.00' },
      });
      await api('POST', '/sandbox/clock', 200, { key: worldKey, json: { advance_seconds: 120 } });
      await api('GET', '/crypto/prices', 200, { key: worldKey });
      await api('GET', '/crypto/prices/ETH-USD/history?limit=1', 200, { key: worldKey });
      await api('POST', '/sandbox/reset', 200, { key: worldKey });
      await api('DELETE', `/sandbox/worlds/${(world.body as Obj).id as string}`, 204, {
        key: maker,
      });
    });
  });

  describe('orders', () => {
    const buy = (price: number, quantity = 1, extra: Obj = {}) => ({
      market_id: market.id,
      action: 'BUY',
      side: 'YES',
      type: 'LIMIT',
      price,
      quantity,
      ...extra,
    });

    it('place, quote, amend, get, list, cancel, and their refusals', async () => {
      const resting = await api('POST', '/orders', 201, { key: testKey, json: buy(5, 2) });
      await api('POST', '/orders', 201, {
        key: testKey,
        json: { market_id: market.id, action: 'BUY', side: 'YES', type: 'MARKET', quantity: 3 },
      });
      await api('POST', '/orders', 201, {
        key: testKey,
        json: buy(95, 1, { time_in_force: 'IOC', client_order_id: 'conf-ioc' }),
      });
      await api('POST', '/orders', 201, {
        key: testKey,
        json: { ...buy(50, 5_000), time_in_force: 'FOK' },
      });
      await api('POST', '/orders', 201, {
        key: testKey,
        json: buy(4, 1, { self_trade_prevention: 'CANCEL_BOTH' }),
      });
      await api('POST', '/orders', 400, {
        key: testKey,
        json: buy(4, 1, { self_trade_prevention: 'DECREMENT' }),
      });
      await api('POST', '/orders', 400, { key: testKey, json: buy(0) });
      await api('POST', '/orders', 404, {
        key: testKey,
        json: { ...buy(5), market_id: 'mkt_00000000000000000000' },
      });
      await api('POST', '/orders', 422, { key: testKey, json: buy(99, 1, { post_only: true }) });
      await api('POST', '/orders', 422, { key: testKey, json: buy(50, 900_000_000) });
      await api('POST', '/orders', 401, { json: buy(5) });
      await api('POST', '/orders', 403, { key: readOnlyKey, json: buy(5) });
      await api('POST', '/orders/quote', 200, { key: testKey, json: buy(60, 10) });
      await api('POST', '/orders/quote', 400, { key: testKey, json: { market_id: market.id } });
      const id = resting.body.id as string;
      await api('PATCH', `/orders/${id}`, 200, { key: testKey, json: { quantity: 1 } });
      await api('PATCH', `/orders/${id}`, 422, { key: testKey, json: { quantity: 1 } });
      await api('PATCH', `/orders/${id}`, 400, { key: testKey, json: { price: 100 } });
      await api('GET', `/orders/${id}`, 200, { key: testKey });
      await api('GET', '/orders/ord_00000000000000000000', 404, { key: testKey });
      const page = await api('GET', '/orders?limit=2', 200, { key: testKey });
      await api('GET', `/orders?limit=2&cursor=${page.body.next_cursor}`, 200, { key: testKey });
      await api('GET', '/orders?limit=201', 400, { key: testKey });
      await api('GET', `/orders?status=OPEN&market_id=${market.id}`, 200, { key: testKey });
      await api('GET', '/orders?status=NOPE', 400, { key: testKey });
      await api('DELETE', `/orders/${id}`, 200, { key: testKey });
      await api('DELETE', `/orders/${id}`, 409, { key: testKey });
      await api('PATCH', `/orders/${id}`, 409, { key: testKey, json: { quantity: 1 } });
      await api('DELETE', '/orders/ord_00000000000000000000', 404, { key: testKey });
    });

    it('batch, cancel-batch, cancel-all', async () => {
      const batch = await api('POST', '/orders/batch', 200, {
        key: testKey,
        json: { orders: [buy(4), buy(3), buy(99, 1, { post_only: true })] },
      });
      const ids = (batch.body.results as Obj[]).filter((r) => r.order).map((r) => r.order.id);
      await api('POST', '/orders/batch', 400, { key: testKey, json: { orders: [] } });
      await api('POST', '/orders/cancel-batch', 200, {
        key: testKey,
        json: { order_ids: [ids[0], 'ord_00000000000000000000'] },
      });
      await api('POST', '/orders/cancel-batch', 400, { key: testKey, json: { order_ids: [] } });
      await api('POST', '/orders/cancel-all', 200, {
        key: testKey,
        json: { market_id: market.id },
      });
      await api('POST', '/orders/cancel-all', 200, { key: testKey });
      await api('POST', '/orders/cancel-all', 404, {
        key: testKey,
        json: { market_id: 'mkt_00000000000000000000' },
      });
    });

    it('Idempotency-Key: a replay, a reuse with another body', async () => {
      const headers = { 'idempotency-key': `conf-${Date.now()}` };
      await api('POST', '/orders', 201, { key: testKey, json: buy(2), headers });
      const replay = await api('POST', '/orders', 201, { key: testKey, json: buy(2), headers });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      await api('POST', '/orders', 422, { key: testKey, json: buy(3), headers });
      const failing = { 'idempotency-key': `conf-fail-${Date.now()}` };
      const cross = buy(99, 1, { post_only: true });
      await api('POST', '/orders', 422, { key: testKey, json: cross, headers: failing });
      const again = await api('POST', '/orders', 422, {
        key: testKey,
        json: cross,
        headers: failing,
      });
      expect(again.headers.get('idempotent-original-request-id')).toMatch(/^req_/);
    });

    it('export (CSV), its refusals, and the per-route limit (429)', async () => {
      await api('GET', '/orders/export', 200, { key: testKey });
      await api('HEAD', '/orders/export', 200, { key: testKey });
      await api('GET', `/orders/export?status=CANCELLED&created_from=2026-01-01`, 200, {
        key: testKey,
      });
      await api('GET', '/orders/export?created_from=yesterday', 400, { key: testKey });
      for (let i = 0; i < 2; i++) await api('GET', '/orders/export', 200, { key: testKey });
      await api('GET', '/orders/export', 429, { key: testKey });
    });

    it('cancel-on-disconnect: enable, read, disable; a session is refused', async () => {
      await api('POST', '/orders/cancel-on-disconnect', 200, {
        key: testKey,
        json: { grace_seconds: 3 },
      });
      await api('GET', '/orders/cancel-on-disconnect', 200, { key: testKey });
      // Its body is optional: without one, grace_seconds is 5.
      const bare = await api('POST', '/orders/cancel-on-disconnect', 200, { key: testKey });
      expect(bare.body.grace_seconds).toBe(5);
      await api('DELETE', '/orders/cancel-on-disconnect', 200, { key: testKey });
      await api('POST', '/orders/cancel-on-disconnect', 400, {
        key: testKey,
        json: { grace_seconds: 1000 },
      });
      await api('GET', '/orders/cancel-on-disconnect', 403, { token });
    });
  });

  describe('wallet, positions, transactions', () => {
    it('wallet, ledger and positions (cursor and deprecated)', async () => {
      await api('GET', '/wallet', 200, { key: testKey });
      await api('GET', '/wallet', 200, { token });
      await api('GET', '/transactions/cursor?limit=2', 200, { key: testKey });
      await api('GET', '/transactions/cursor?type=TRADE', 200, { key: testKey });
      await api('GET', '/transactions/cursor?cursor=forged', 400, { key: testKey });
      await api('GET', '/wallet/transactions', 200, { key: testKey });
      await api('GET', '/positions/cursor', 200, { key: testKey });
      await api('GET', '/positions/cursor?include_closed=true', 200, { key: testKey });
      await api('GET', '/wallet/positions', 200, { key: testKey });
      await api('GET', '/wallet/positions', 401);
      await api('GET', '/wallet/transactions?limit=0', 400, { key: testKey });
      await api('GET', '/notifications', 403, { key: (await hookKey(['markets:read'])).key });
      await api('GET', '/wallet', 403, { key: (await hookKey(['markets:read'])).key });
    });

    it('rank history (cursor and deprecated)', async () => {
      await api('GET', '/rank/history/cursor', 200, { key: testKey });
      await api('GET', '/rank/history/cursor?limit=2', 200, { token });
      await api('GET', '/rank/history/cursor?from=yesterday', 400, { key: testKey });
      await api('GET', '/rank/history/cursor?cursor=forged', 400, { key: testKey });
      await api('GET', '/rank/history/cursor', 401);
      const noWallet = (await hookKey(['markets:read'])).key;
      await api('GET', '/rank/history/cursor', 403, { key: noWallet });
      await api('GET', '/rank/history', 200, { key: testKey });
      await api('GET', '/rank/history?limit=0', 400, { key: testKey });
      await api('GET', '/rank/history', 401);
      await api('GET', '/rank/history', 403, { key: noWallet });
    });

    it('leaderboard, with and without a key, and refusals', async () => {
      const paper = await api('GET', '/rank/leaderboard?period=ALL&limit=200', 200, {
        key: testKey,
      });
      // The trader traded in the paper world by now: the rows are checked against the schema.
      expect(paper.body.data.length).toBeGreaterThan(0);
      await api('GET', '/rank/leaderboard', 200);
      await api('GET', '/rank/leaderboard?period=DAY&limit=1', 200, { token });
      await api('GET', '/rank/leaderboard?period=YEAR', 400);
      await api('GET', '/rank/leaderboard?cursor=forged', 400, { key: testKey });
      await api('GET', '/rank/leaderboard', 401, {
        key: 'svc_test_00000000000000000000000000000000',
      });
      await api('GET', '/rank/leaderboard', 403, { key: (await hookKey(['users:read'])).key });
    });

    it('deposits and withdrawals (live only, step-up)', async () => {
      await api('POST', '/wallet/deposits', 403, { key: testKey, json: { amount_cents: 100 } });
      await api('POST', '/wallet/deposits', 201, { key: liveKey, json: { amount_cents: 5000 } });
      await api('POST', '/wallet/deposits', 400, { key: liveKey, json: { amount_cents: '1' } });
      await api('POST', '/wallet/withdrawals', 403, { key: liveKey, json: { amount_cents: 1 } });
      advance(30_000);
      await api('POST', '/security/mfa/step-up', 200, { key: liveKey, json: { code: totp() } });
      await api('POST', '/wallet/withdrawals', 201, { key: liveKey, json: { amount_cents: 100 } });
      await api('POST', '/wallet/withdrawals', 422, {
        key: liveKey,
        json: { amount_cents: 1_000_000_000 },
      });
      await api('GET', '/transactions/cursor', 200, { key: liveKey });
      await api('GET', '/wallet', 200, { key: liveKey });
    });
  });

  describe('creating markets', () => {
    it('create, edit, resolve, and their refusals, in both worlds', async () => {
      const { key } = await hookKey(['markets:read', 'markets:write']);
      const body = (slug: string, extra: Record<string, unknown> = {}) => ({
        title: `Conformance ${slug}`,
        slug,
        category: 'CULTURE',
        close_time: '2027-01-01T00:00:00Z',
        ...extra,
      });
      const m = await api('POST', '/markets', 201, { key, json: body('conf-market') });
      const id = m.body.id as string;
      await api('POST', '/markets', 400, { key, json: body('X') });
      await api('POST', '/markets', 404, {
        key,
        json: body('conf-event', { event_id: 'spe_unknown' }),
      });
      await api('POST', '/markets', 409, { key, json: body('conf-market') });
      await api('POST', '/markets', 422, {
        key,
        json: body('conf-past', { close_time: '2020-01-01T00:00:00Z' }),
      });
      await api('POST', '/markets', 401, { json: body('conf-anon') });
      await api('POST', '/markets', 403, { key: readOnlyKey, json: body('conf-read-only') });
      const live = async (t: string) =>
        (
          await api('POST', '/api-keys', 201, {
            token: t,
            json: {
              name: 'creator',
              environment: 'live',
              scopes: ['markets:read', 'markets:write'],
              acknowledge_write_scopes: true,
            },
          })
        ).body.key as string;
      const creatorKey = await live(token);
      const liveMarket = await api('POST', '/markets', 201, {
        key: creatorKey,
        json: body('conf-live'),
      });
      const email = `conf-${Date.now()}-nocreator@example.test`;
      await api('POST', '/markets', 403, {
        key: await live(await verifiedAccount(svc, email)),
        json: body('conf-refused'),
      });
      const other = (await hookKey(['markets:read', 'markets:write'])).key;
      await api('PATCH', `/markets/${id}`, 200, { key, json: { title: 'Renamed' } });
      await api('PATCH', `/markets/${id}`, 400, { key, json: { status: 'CLOSED' } });
      await api('PATCH', `/markets/${id}`, 403, { key: other, json: { title: 'x' } });
      await api('PATCH', '/markets/mkt_unknown', 404, { key, json: { title: 'x' } });
      await api('PATCH', `/markets/${id}`, 422, {
        key,
        json: { close_time: '2020-01-01T00:00:00Z' },
      });
      await api('POST', `/markets/${id}/resolve`, 400, { key, json: { outcome: 'MAYBE' } });
      await api('POST', `/markets/${id}/resolve`, 403, { key: other, json: { outcome: 'YES' } });
      await api('POST', '/markets/mkt_unknown/resolve', 404, { key, json: { outcome: 'YES' } });
      await api('POST', `/markets/${id}/resolve`, 200, { key, json: { outcome: 'YES' } });
      await api('POST', `/markets/${id}/resolve`, 409, { key, json: { outcome: 'NO' } });
      await api('POST', `/markets/${liveMarket.body.id as string}/resolve`, 200, {
        key: creatorKey,
        json: { outcome: 'NO' },
      });
      for (let i = 1; i < 20; i++) {
        await api('POST', '/markets', 201, { key: other, json: body(`conf-filler-${i}`) });
      }
      await api('POST', '/markets', 201, { key: other, json: body('conf-filler-20') });
      await api('POST', '/markets', 422, { key: other, json: body('conf-one-too-many') });
    });
  });

  describe('watchlists', () => {
    it('create, list, get, update, append, remove, delete, and their refusals', async () => {
      const { key } = await hookKey(['watchlist:read', 'watchlist:write', 'markets:read']);
      const [m1, m2] = [TRADABLE[0].id, TRADABLE[1].id];
      const w = await api('POST', '/watchlists', 201, {
        key,
        json: { name: 'Conformance', market_ids: [m1] },
      });
      const id = w.body.id as string;
      await api('POST', '/watchlists', 400, { key, json: { name: '' } });
      await api('POST', '/watchlists', 404, {
        key,
        json: { name: 'Unknown', market_ids: ['mkt_00000000000000000000'] },
      });
      await api('POST', '/watchlists', 409, { key, json: { name: 'CONFORMANCE' } });
      await api('GET', '/watchlists?limit=1', 200, { key });
      await api('GET', '/watchlists?cursor=forged', 400, { key });
      await api('GET', '/watchlists', 401);
      const noScope = (await hookKey(['markets:read'])).key;
      await api('GET', '/watchlists', 403, { key: noScope });
      await api('POST', '/watchlists', 403, { key: readOnlyKey, json: { name: 'Read only' } });
      await api('GET', `/watchlists/${id}`, 200, { key });
      await api('GET', '/watchlists/wl_unknown', 404, { key });
      await api('PATCH', `/watchlists/${id}`, 200, { key, json: { market_ids: [m2, m1] } });
      await api('PATCH', `/watchlists/${id}`, 400, { key, json: { market_ids: [m1, m1] } });
      await api('PATCH', '/watchlists/wl_unknown', 404, { key, json: { name: 'x' } });
      await api('POST', `/watchlists/${id}/markets`, 200, { key, json: { market_id: m1 } });
      await api('POST', `/watchlists/${id}/markets`, 400, { key, json: { market_id: 'x' } });
      await api('POST', `/watchlists/${id}/markets`, 404, {
        key,
        json: { market_id: 'mkt_00000000000000000000' },
      });
      await api('DELETE', `/watchlists/${id}/markets/${m2}`, 204, { key });
      await api('DELETE', `/watchlists/${id}/markets/${m2}`, 404, { key });
      for (let i = 1; i < 20; i++) {
        await api('POST', '/watchlists', 201, { key, json: { name: `Filler ${i}` } });
      }
      await api('POST', '/watchlists', 422, { key, json: { name: 'One too many' } });
      await api('PATCH', `/watchlists/${id}`, 409, { key, json: { name: 'filler 1' } });
      await api('DELETE', `/watchlists/${id}`, 204, { key });
      await api('DELETE', `/watchlists/${id}`, 404, { key });
    });
  });

  describe('sandbox controls', () => {
    it('fund, move a price, resolve, reset; a live key is refused', async () => {
      await api('POST', '/sandbox/wallet/fund', 201, { key: testKey, json: { amount_cents: 500 } });
      await api('POST', '/sandbox/wallet/fund', 400, { key: testKey, json: { amount_cents: 0 } });
      await api('POST', '/sandbox/wallet/fund', 403, { key: liveKey, json: { amount_cents: 5 } });
      await api('POST', '/sandbox/wallet/fund', 403, { token, json: { amount_cents: 5 } });
      const other = TRADABLE[1];
      await api('POST', `/sandbox/markets/${other.id}/price`, 200, {
        key: testKey,
        json: { price: 40 },
      });
      await api('POST', '/sandbox/markets/mkt_00000000000000000000/price', 404, {
        key: testKey,
        json: { price: 40 },
      });
      await api('POST', '/orders', 201, {
        key: testKey,
        json: { market_id: other.id, action: 'BUY', side: 'YES', type: 'MARKET', quantity: 2 },
      });
      await api('POST', '/orders', 201, {
        key: testKey,
        json: {
          market_id: other.id,
          action: 'SELL',
          side: 'YES',
          type: 'LIMIT',
          price: 90,
          quantity: 1,
        },
      });
      await api('POST', '/orders', 201, {
        key: testKey,
        json: {
          market_id: other.id,
          action: 'BUY',
          side: 'YES',
          type: 'LIMIT',
          price: 3,
          quantity: 1,
        },
      });
      await api('POST', `/sandbox/markets/${other.id}/resolve`, 200, {
        key: testKey,
        json: { outcome: 'YES' },
      });
      await api('POST', `/sandbox/markets/${other.id}/resolve`, 409, {
        key: testKey,
        json: { outcome: 'YES' },
      });
      await api('POST', `/sandbox/markets/${other.id}/price`, 422, {
        key: testKey,
        json: { price: 40 },
      });
      await api('GET', '/positions/cursor?include_closed=true', 200, { key: testKey });
      await api('GET', `/orders?market_id=${other.id}`, 200, { key: testKey });
      await api('GET', '/transactions/cursor?type=SETTLEMENT', 200, { key: testKey });
      await api('POST', '/sandbox/reset', 200, { key: testKey });
      await api('GET', '/transactions/cursor', 200, { key: testKey });
      await api('GET', '/orders', 200, { key: testKey });
    });
  });

  describe('sandbox scenarios', () => {
    it('create, list, get, a shaped order and a shaped 429, delete; bad input and a live key are refused', async () => {
      const created = await api('POST', '/sandbox/scenarios', 201, {
        key: testKey,
        json: {
          match: { operation: 'POST /orders', market_id: market.id },
          effect: { type: 'PARTIAL_FILL', quantity: 1 },
        },
      });
      const id = (created.body as Obj).id as string;
      await api('GET', '/sandbox/scenarios?limit=1', 200, { key: testKey });
      await api('GET', `/sandbox/scenarios/${id}`, 200, { key: testKey });
      await api('POST', '/orders', 201, {
        key: testKey,
        json: {
          market_id: market.id,
          action: 'BUY',
          side: 'YES',
          type: 'LIMIT',
          price: 99,
          quantity: 3,
        },
      });
      await api('POST', '/sandbox/scenarios', 201, {
        key: testKey,
        json: {
          match: { operation: 'GET /wallet' },
          effect: { type: 'RATE_LIMIT', retry_after_seconds: 5 },
        },
      });
      await api('GET', '/wallet', 429, { key: testKey });
      await api('POST', '/sandbox/scenarios', 400, {
        key: testKey,
        json: { match: { operation: 'GET /nowhere' }, effect: { type: 'DISCONNECT' } },
      });
      await api('POST', '/sandbox/scenarios', 404, {
        key: testKey,
        json: {
          match: { operation: 'POST /orders', market_id: 'mkt_00000000000000000000' },
          effect: { type: 'DISCONNECT' },
        },
      });
      await api('POST', '/sandbox/scenarios', 403, {
        key: liveKey,
        json: { match: { operation: 'GET /wallet' }, effect: { type: 'DISCONNECT' } },
      });
      await api('DELETE', `/sandbox/scenarios/${id}`, 204, { key: testKey });
      await api('DELETE', `/sandbox/scenarios/${id}`, 404, { key: testKey });
      await api('GET', `/sandbox/scenarios/${id}`, 404, { key: testKey });
      await api('POST', '/sandbox/reset', 200, { key: testKey });
    });
  });

  describe('sandbox worlds', () => {
    it('create, list, get, delete; bad input and a live key are refused', async () => {
      const created = await api('POST', '/sandbox/worlds', 201, {
        key: testKey,
        json: { name: 'conformance', seed: 3, ttl_seconds: 120 },
      });
      const id = (created.body as Obj).id as string;
      await api('GET', '/sandbox/worlds?limit=1', 200, { key: testKey });
      await api('GET', `/sandbox/worlds/${id}`, 200, { key: testKey });
      // The world's clock: moved with its key, bad input refused, 404 outside a world.
      const worldKey = (created.body as Obj).key as string;
      await api('POST', '/sandbox/clock', 200, { key: worldKey, json: { advance_seconds: 60 } });
      await api('POST', '/sandbox/clock', 400, { key: worldKey, json: { advance_seconds: -1 } });
      await api('POST', '/sandbox/clock', 404, { key: testKey, json: { advance_seconds: 60 } });
      // RFQ inside the world: the world's own records, unknown to the paper world.
      const wr = await api('POST', '/rfq', 201, {
        key: worldKey,
        json: { market_id: market.id, quantity: 2 },
      });
      const wrId = (wr.body as Obj).id as string;
      await api('GET', `/rfq/${wrId}`, 200, { key: worldKey });
      await api('GET', `/rfq/${wrId}`, 404, { key: testKey });
      await api('GET', '/rfq?limit=1', 200, { key: worldKey });
      await api('GET', `/rfq/${wrId}/quotes`, 200, { key: worldKey });
      await api('POST', '/rfq/quotes/quo_unknown/accept', 404, {
        key: worldKey,
        json: { action: 'BUY', side: 'YES' },
      });
      await api('DELETE', `/rfq/${wrId}`, 200, { key: worldKey });
      await api('DELETE', `/rfq/${wrId}`, 409, { key: worldKey });
      await api('POST', '/sandbox/worlds', 400, { key: testKey, json: { ttl_seconds: 1 } });
      await api('POST', '/sandbox/worlds', 403, { key: liveKey, json: {} });
      await api('DELETE', `/sandbox/worlds/${id}`, 204, { key: testKey });
      await api('DELETE', `/sandbox/worlds/${id}`, 404, { key: testKey });
      await api('GET', `/sandbox/worlds/${id}`, 404, { key: testKey });
    });
  });

  describe('webhooks and notifications', () => {
    it('create, read, update, rotate, test, deliveries, replay, health, delete', async () => {
      const ep = await api('POST', '/webhooks', 201, {
        key: testKey,
        json: { url: rx.url('/ok'), events: ['*'], description: 'conformance' },
      });
      const id = ep.body.id as string;
      await api('POST', '/webhooks', 400, { key: testKey, json: { url: 'nope', events: ['*'] } });
      await api('GET', '/webhooks', 200, { key: testKey });
      await api('GET', `/webhooks/${id}`, 200, { key: testKey });
      await api('GET', '/webhooks/whe_00000000000000000000', 404, { key: testKey });
      await api('PATCH', `/webhooks/${id}`, 200, {
        key: testKey,
        json: { events: ['order.created'] },
      });
      await api('PATCH', `/webhooks/${id}`, 200, { key: testKey, json: { description: 'v2' } });
      await api('POST', `/webhooks/${id}/rotate-secret`, 200, {
        key: testKey,
        json: { grace_hours: 1 },
      });
      await api('POST', `/webhooks/${id}/rotate-secret`, 200, { key: testKey }); // body optional
      await api('POST', `/webhooks/${id}/reactivate`, 409, { key: testKey });
      const sent = await api('POST', `/webhooks/${id}/test`, 202, { key: testKey });
      await until(
        () => call('GET', `/api/v1/webhooks/${id}/deliveries`, { key: testKey }),
        (r) => r.body.data.some((d: Obj) => d.id === sent.body.id && d.status === 'SUCCEEDED'),
        'the test delivery',
      );
      await api('GET', `/webhooks/${id}/deliveries?status=SUCCEEDED`, 200, { key: testKey });
      await api('POST', `/webhooks/${id}/deliveries/${sent.body.id}/replay`, 409, {
        key: testKey,
      });
      await api('GET', `/webhooks/${id}/health`, 200, { key: testKey });
      await api('GET', '/webhooks', 403, { key: (await hookKey(['markets:read'])).key });
      await api('DELETE', `/webhooks/${id}`, 200, { key: testKey });
      await api('POST', `/webhooks/${id}/test`, 409, { key: testKey });
    });

    it('the workbench: simulated failures, samples, the attempt log', async () => {
      const ep = await api('POST', '/webhooks', 201, {
        key: testKey,
        json: { url: rx.url('/ok'), events: ['*'] },
      });
      const id = ep.body.id as string;
      const path = `/webhooks/${id}/simulate-failures`;
      await api('POST', path, 200, { key: testKey, json: { count: 1, mode: 'TIMEOUT' } });
      await api('POST', path, 400, { key: testKey, json: { count: 0, mode: 'TIMEOUT' } });
      await api('POST', '/webhooks/whe_00000000000000000000/simulate-failures', 404, {
        key: testKey,
        json: { count: 1, mode: 'HTTP_500' },
      });
      await api('GET', path, 200, { key: testKey });
      await api('GET', '/webhooks/whe_00000000000000000000/simulate-failures', 404, {
        key: testKey,
      });
      const failed = await api('POST', `/webhooks/${id}/test`, 202, {
        key: testKey,
        json: { type: 'order.filled' },
      });
      await api('POST', `/webhooks/${id}/test`, 400, { key: testKey, json: { type: 'nope' } });
      await until(
        () => call('GET', `/api/v1/webhooks/${id}/deliveries/${failed.body.id}`, { key: testKey }),
        (r) => r.body.status === 'DEAD_LETTERED',
        'the simulated dead letter',
      );
      await api('GET', `/webhooks/${id}/deliveries/${failed.body.id}`, 200, { key: testKey });
      await api('DELETE', path, 200, { key: testKey });
      await api('DELETE', '/webhooks/whe_00000000000000000000/simulate-failures', 404, {
        key: testKey,
      });
      const ok = await api('POST', `/webhooks/${id}/test`, 202, { key: testKey });
      await until(
        () => call('GET', `/api/v1/webhooks/${id}/deliveries/${ok.body.id}`, { key: testKey }),
        (r) => r.body.status === 'SUCCEEDED',
        'the sample delivered',
      );
      await api('GET', `/webhooks/${id}/deliveries/${ok.body.id}`, 200, { key: testKey });
      await api('GET', `/webhooks/${id}/deliveries/dlv_00000000000000000000`, 404, {
        key: testKey,
      });
      const live = await api('POST', '/webhooks', 201, {
        key: liveKey,
        json: { url: rx.url('/ok'), events: ['*'] },
      });
      await api('POST', `/webhooks/${live.body.id}/simulate-failures`, 403, {
        key: liveKey,
        json: { count: 1, mode: 'HTTP_500' },
      });
      await api('GET', `/webhooks/${live.body.id}/simulate-failures`, 403, { key: liveKey });
      await api('DELETE', `/webhooks/${live.body.id}/simulate-failures`, 403, { key: liveKey });
      await api('POST', `/webhooks/${live.body.id}/test`, 403, {
        key: liveKey,
        json: { type: 'order.created' },
      });
      await api('DELETE', `/webhooks/${live.body.id}`, 200, { key: liveKey });
      await api('DELETE', `/webhooks/${id}`, 200, { key: testKey });
    });

    it('dead letters, replay, suspension, reactivation, notifications', async () => {
      const ep = await api('POST', '/webhooks', 201, {
        key: testKey,
        json: { url: rx.url('/fail'), events: ['webhook.test'] },
      });
      const id = ep.body.id as string;
      for (let i = 0; i < 20; i++) await api('POST', `/webhooks/${id}/test`, 202, { key: testKey });
      const suspended = await until(
        () => call('GET', `/api/v1/webhooks/${id}`, { key: testKey }),
        (r) => r.body.status === 'SUSPENDED',
        'suspension',
      );
      expectConforms(suspended, 200);
      await api('GET', `/webhooks/${id}/health`, 200, { key: testKey });
      const dead = await api('GET', `/webhooks/${id}/deliveries?status=DEAD_LETTERED`, 200, {
        key: testKey,
      });
      await api('POST', `/webhooks/${id}/reactivate`, 200, { key: testKey });
      await api('POST', `/webhooks/${id}/deliveries/${dead.body.data[0].id}/replay`, 202, {
        key: testKey,
      });
      await api('GET', `/webhooks/${id}/deliveries`, 200, { key: testKey });

      const inbox = await api('GET', '/notifications/cursor?limit=5', 200, { key: testKey });
      await api('GET', '/notifications/cursor?unread=true', 200, { token });
      await api('GET', '/notifications', 200, { key: testKey });
      await api('POST', `/notifications/${inbox.body.data[0].id}/read`, 200, { key: testKey });
      await api('POST', '/notifications/ntf_00000000000000000000/read', 404, { key: testKey });
      await api('GET', '/notifications/unread-count', 200, { key: testKey });
      await api('GET', '/notifications/unread-count', 200, { token });
      const before = inbox.body.data[0].created_at as string;
      await api('POST', '/notifications/read-all', 200, { key: testKey, json: { before } });
      await api('POST', '/notifications/read-all', 200, { key: testKey });
      await api('POST', '/notifications/read-all', 400, { key: testKey, json: { before: 'soon' } });
      await api('POST', '/notifications/read-all', 403, { key: readOnlyKey });
    });

    it('the endpoint cap (422) of a FREE user', async () => {
      const { key } = await hookKey(HOOK_SCOPES);
      for (let i = 0; i < 3; i++) {
        await api('POST', '/webhooks', 201, {
          key,
          json: { url: rx.url(`/c${i}`), events: ['*'] },
        });
      }
      await api('POST', '/webhooks', 422, { key, json: { url: rx.url('/c3'), events: ['*'] } });
    });
  });

  describe('limits (429)', () => {
    /**
     * Sends `send` in waves of 16 until an answer is not `open`: every answer conforms, and each
     * one past the limit is a conforming 429. Waves, not one by one: in the PostgreSQL pass every
     * request waits on Redis, and the few hundred sent in turn took most of this case's time.
     */
    async function untilRefused(send: () => Promise<Exchange>, open: number): Promise<void> {
      for (let sent = 0; sent < 2_000; sent += 16) {
        const wave = await Promise.all(Array.from({ length: 16 }, send));
        for (const ex of wave) expectConforms(ex);
        const refused = wave.filter((ex) => ex.status !== open);
        for (const ex of refused) expectConforms(ex, 429);
        if (refused.length > 0) return;
      }
      throw new Error(`still ${open} after 2,000 requests`);
    }

    it('per key, per route (batch) and per IP (the legacy contract URL); MFA lock', async () => {
      const free = await hookKey(['markets:read', 'orders:read', 'orders:write']);
      await untilRefused(() => call('GET', '/api/v1/orders', { key: free.key }), 200);
      advance(61_000);
      const leg = { market_id: market.id, action: 'BUY', side: 'YES', type: 'LIMIT', price: 2 };
      for (let i = 0; i < 10; i++) {
        await api('POST', '/orders/batch', 200, {
          key: testKey,
          json: { orders: [{ ...leg, quantity: 1 }] },
        });
      }
      await api('POST', '/orders/batch', 429, {
        key: testKey,
        json: { orders: [{ ...leg, quantity: 1 }] },
      });
      // The trader's keys (not sessions) are locked out of step-up for 900 s from here.
      const wrong = { key: liveKey, json: { code: '000000' } };
      for (let i = 0; i < 5; i++) await api('POST', '/security/mfa/step-up', 422, wrong);
      await api('POST', '/security/mfa/step-up', 429, wrong);
      advance(61_000);
      await untilRefused(() => call('GET', '/openapi.json'), 308);
    });
  });

  describe('sports', () => {
    it('sports, events (filters, paging), one event, the sandbox final, and their refusals', async () => {
      const { key } = await hookKey(['sports:read', 'orders:write', 'markets:read']);
      const [started, ahead] = [
        seedEvent('nba-knicks-vs-heat'),
        seedEvent('atp-alcaraz-vs-sinner'),
      ];
      await api('GET', '/sports', 200);
      await api('GET', '/sports', 200, { key });
      await api('GET', '/sports', 403, { key: (await hookKey(['markets:read'])).key });
      await api('GET', '/sports/events?limit=2', 200);
      await api('GET', '/sports/events?sport=soccer&status=LIVE', 200, { key });
      await api('GET', '/sports/events?status=live', 400, { key });
      await api('GET', '/sports/events', 401, { key: 'svc_test_00000000000000000000000000000000' });
      await api('GET', `/sports/events/${started.id}`, 200, { key });
      await api('GET', '/sports/events/spe_unknown', 404, { key });
      const path = (id: string) => `/sandbox/sports/events/${id}/final`;
      const score = { home_score: 3, away_score: 1 };
      await api('POST', path(started.id), 400, { key, json: { home_score: -1, away_score: 0 } });
      await api('POST', path('spe_unknown'), 404, { key, json: score });
      await api('POST', path(started.id), 403, { key: liveKey, json: score });
      await api('POST', path(ahead.id), 422, { key, json: score });
      const ended = await api('POST', path(started.id), 200, { key, json: score });
      expect(ended.body.event.status).toBe('FINAL');
      await api('POST', path(started.id), 409, { key, json: score });
      await api('GET', `/markets/${started.marketId}`, 200, { key });
    });
  });

  describe('rfq', () => {
    it('request, quote, replace, withdraw, accept, cancel, lists, and their refusals', async () => {
      const respToken = await sessionFor(svc.api, 'responder@sandbox.test');
      const respKey = (
        await api('POST', '/api-keys', 201, {
          token: respToken,
          json: {
            name: 'responder',
            environment: 'test',
            scopes: [...ORDER_SCOPES, 'rfq:respond'],
            acknowledge_write_scopes: true,
          },
        })
      ).body.key as string;
      const key = testKey;
      const body = { market_id: market.id, quantity: 3 };
      const r = await api('POST', '/rfq', 201, { key, json: body });
      const id = r.body.id as string;
      await api('POST', '/rfq', 400, { key, json: { ...body, expires_in_seconds: 5 } });
      await api('POST', '/rfq', 404, {
        key,
        json: { ...body, market_id: 'mkt_00000000000000000000' },
      });
      await api('POST', '/rfq', 403, { key: readOnlyKey, json: body });
      await api('POST', '/rfq', 401, { json: body });
      await api('GET', '/rfq?limit=1', 200, { key });
      await api('GET', '/rfq?status=LATE', 400, { key });
      await api('GET', `/rfq/${id}`, 200, { key });
      await api('GET', '/rfq/rfq_unknown', 404, { key });
      await api('GET', '/rfq/open?limit=2', 200, { key: respKey });
      await api('GET', '/rfq/open', 403, { key });
      const q = await api('POST', `/rfq/${id}/quotes`, 201, {
        key: respKey,
        json: { bid: 40, ask: 45 },
      });
      await api('POST', `/rfq/${id}/quotes`, 400, { key: respKey, json: { bid: 45, ask: 40 } });
      await api('POST', '/rfq/rfq_unknown/quotes', 404, { key: respKey, json: { bid: 40 } });
      const own = await api('POST', '/rfq', 201, { key: respKey, json: body });
      await api('POST', `/rfq/${own.body.id}/quotes`, 422, { key: respKey, json: { bid: 40 } });
      await api('GET', `/rfq/${id}/quotes`, 200, { key });
      await api('GET', `/rfq/${id}/quotes`, 200, { key: respKey });
      await api('GET', '/rfq/rfq_unknown/quotes', 404, { key });
      const q2 = await api('POST', `/rfq/${id}/quotes`, 201, { key: respKey, json: { bid: 41 } });
      await api('POST', `/rfq/quotes/${q2.body.id}/accept`, 422, {
        key,
        json: { action: 'BUY', side: 'YES' },
      });
      await api('POST', `/rfq/quotes/${q.body.id}/accept`, 409, {
        key,
        json: { action: 'SELL', side: 'YES' },
      });
      await api('POST', '/rfq/quotes/quo_unknown/accept', 404, {
        key,
        json: { action: 'SELL', side: 'YES' },
      });
      await api('POST', `/rfq/quotes/${q2.body.id}/accept`, 400, { key, json: { action: 'SELL' } });
      const accepted = await api('POST', `/rfq/quotes/${q2.body.id}/accept`, 200, {
        key,
        json: { action: 'SELL', side: 'YES' },
      });
      expect(accepted.body.trade.source).toBe('RFQ');
      await api('DELETE', `/rfq/${id}`, 409, { key });
      await api('DELETE', '/rfq/rfq_unknown', 404, { key });
      const r2 = await api('POST', '/rfq', 201, { key, json: body });
      const q3 = await api('POST', `/rfq/${r2.body.id}/quotes`, 201, {
        key: respKey,
        json: { ask: 60 },
      });
      await api('DELETE', `/rfq/quotes/${q3.body.id}`, 200, { key: respKey });
      await api('DELETE', `/rfq/quotes/${q3.body.id}`, 409, { key: respKey });
      await api('DELETE', '/rfq/quotes/quo_unknown', 404, { key: respKey });
      await api('DELETE', `/rfq/quotes/${q3.body.id}`, 403, { key });
      await api('DELETE', `/rfq/${r2.body.id}`, 200, { key });
      await api('POST', `/rfq/${r2.body.id}/quotes`, 409, { key: respKey, json: { bid: 10 } });
    });
  });

  describe('data exports', () => {
    it('datasets, estimate, create, list, get, download (whole, range, 416), delete and their refusals', async () => {
      const body = {
        dataset: 'LEDGER',
        format: 'CSV',
        start: '2026-06-01T00:00:00Z',
        end: '2026-08-01T00:00:00Z',
      };
      await api('GET', '/data/datasets', 200, { key: testKey });
      await api('GET', '/data/datasets', 403, { key: (await hookKey(['markets:read'])).key });
      await api('POST', '/data/exports/estimate', 200, { key: testKey, json: body });
      await api('POST', '/data/exports/estimate', 400, {
        key: testKey,
        json: { ...body, dataset: 'QUOTES' },
      });
      await api('POST', '/data/exports', 400, { key: testKey, json: { ...body, end: body.start } });
      const created = await api('POST', '/data/exports', 202, { key: testKey, json: body });
      const id = created.body.id as string;
      await until(
        () => call('GET', `/api/v1/data/exports/${id}`, { key: testKey }),
        (r) => (r.body as Obj).status === 'READY',
        'export READY',
      );
      await api('GET', `/data/exports/${id}`, 200, { key: testKey });
      await api('GET', `/data/exports/${id}`, 404, { key: liveKey });
      await api('GET', '/data/exports?limit=1', 200, { key: testKey });
      await api('GET', `/data/exports/${id}/download`, 200, { key: testKey });
      await api('GET', `/data/exports/${id}/download`, 206, {
        key: testKey,
        headers: { range: 'bytes=0-9' },
      });
      await api('GET', `/data/exports/${id}/download`, 416, {
        key: testKey,
        headers: { range: 'bytes=99999999-' },
      });
      await api('GET', '/data/exports/dex_unknown/download', 404, { key: testKey });
      await api('DELETE', `/data/exports/${id}`, 204, { key: testKey });
      await api('DELETE', `/data/exports/${id}`, 404, { key: testKey });
      // Inside an ephemeral world: the world's own jobs, not found from the paper world.
      const world = await api('POST', '/sandbox/worlds', 201, { key: testKey, json: {} });
      const worldKey = world.body.key as string;
      const inWorld = await api('POST', '/data/exports', 202, { key: worldKey, json: body });
      await api('GET', `/data/exports/${inWorld.body.id as string}`, 200, { key: worldKey });
      await api('GET', `/data/exports/${inWorld.body.id as string}`, 404, { key: testKey });
      await api('DELETE', `/sandbox/worlds/${world.body.id as string}`, 204, { key: testKey });
    });
  });

  describe('coverage and sunset', () => {
    it('past its sunset the legacy /openapi.json is 410; an expired key is 401', async () => {
      const expiring = await api('POST', '/api-keys', 201, {
        token,
        json: { name: 'expiring', environment: 'test', expires_in_days: 1 },
      });
      advance(Date.parse('2026-08-09T00:00:00Z') - svc.clock.now());
      expectConforms(await call('GET', '/openapi.json'), 410);
      await api('GET', '/auth/me', 401, { key: expiring.body.key });
      await api('GET', '/api-keys', 200, { token: await sessionFor(svc.api, TRADER) });
      // The trader trades again (a sandbox reset took it off the leaderboard), a day goes by: its
      // paper standing is sampled (a point with every field).
      await api('POST', '/orders', 201, {
        key: testKey,
        json: { market_id: market.id, action: 'BUY', side: 'YES', type: 'MARKET', quantity: 1 },
      });
      advance(86_400_000);
      const points = await api('GET', '/rank/history/cursor?limit=1', 200, { key: testKey });
      expect(points.body.data).toHaveLength(1);
      expect((await api('GET', '/rank/history?limit=1', 200, { key: testKey })).body).toEqual(
        points.body,
      );
    });

    it('every documented operation was exercised, except those named here', () => {
      const missing = oas.operations().filter((o) => !oas.seen.has(o));
      expect(missing.sort()).toEqual(Object.keys(NOT_EXERCISED).sort());
    });
  });

  /** A fresh verified user's key with the given scopes (a new email each time). */
  async function hookKey(scopes: string[]): Promise<{ key: string }> {
    const email = `conf-${Date.now()}-${Math.random().toString(36).slice(2)}@example.test`;
    const session = await verifiedAccount(svc, email);
    const k = await api('POST', '/api-keys', 201, {
      token: session,
      json: { name: 'k', environment: 'test', scopes, acknowledge_write_scopes: true },
    });
    return { key: k.body.key as string };
  }

  function json(): Record<string, string> {
    return { 'content-type': 'application/json' };
  }
});
