import { createHmac } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import {
  asKey,
  asSession,
  createKey,
  login,
  meWithKey,
  startAccessApp,
  TRADER,
} from '../support/access.js';
import { expectContractError, http, startApp, type Running } from '../support/harness.js';
import { approveTier, as, keyFor } from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import {
  advance,
  createEndpoint,
  createEndpointRaw,
  DAY,
  deliveries,
  health,
  HOOK_SCOPES,
  hookUser,
  post,
  sendTest,
  sleep,
  startWebhookApp,
  until,
  type Json,
} from '../support/webhooks.js';

/**
 * Rules of SPEC.md (access, limits, webhooks, versioning) and CONTRACT.md that no other suite
 * pinned down exactly; see the audit report of this file's commit for the full rule map.
 */

// A minute window starts here, so counts are not split by a boundary.
const NOON = '2026-11-22T12:00:00.000Z';

describe('audit: limits', () => {
  let svc: Running | undefined;
  afterEach(async () => {
    await svc?.close();
    svc = undefined;
  });

  it('a per-IP 429 gives the rest of the window in Retry-After, and the ceiling lifts exactly then', async () => {
    svc = await startApp({ now: NOON });
    const clock = svc.clock as ManualClock;
    clock.advance(20_000); // 12:00:20: 40 s of the minute left
    for (let i = 0; i < 10; i++) expect((await http(`${svc.api}/referrals`)).status).toBe(404);
    const refused = await http(`${svc.api}/referrals`);
    const err = expectContractError(refused, 429, 'RATE_LIMITED');
    expect(err.details).toMatchObject({ limit_scope: 'ip', limit: 10, category: 'referrals' });
    expect(refused.headers.get('retry-after')).toBe('40');
    clock.advance(39_000);
    const stillRefused = await http(`${svc.api}/referrals`);
    expectContractError(stillRefused, 429, 'RATE_LIMITED');
    expect(stillRefused.headers.get('retry-after')).toBe('1');
    clock.advance(1_000);
    expectContractError(await http(`${svc.api}/referrals`), 404, 'NOT_FOUND');
  });

  it('per-key limits count per key; session tokens of one user share one per-user minute', async () => {
    svc = await startApp({ now: NOON });
    const token = await login(svc, TRADER);
    const a = await createKey(svc, token, { name: 'a' });
    const b = await createKey(svc, token, { name: 'b' });
    // /markets: its per-IP ceiling (600) is far above 2 x 60.
    for (let i = 0; i < 60; i++) {
      expect((await asKey(a.key, `${svc.api}/markets?limit=1`)).status).toBe(200);
    }
    const refused = await asKey(a.key, `${svc.api}/markets?limit=1`);
    expect(expectContractError(refused, 429, 'RATE_LIMITED').details).toMatchObject({
      limit_scope: 'key',
      limit: 60,
    });
    const other = await asKey(b.key, `${svc.api}/markets?limit=1`);
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-limit')).toBe('60');
    expect(other.headers.get('x-ratelimit-remaining')).toBe('59');

    // Two sessions of one user: 30 + 30 requests, then either token is refused. (The next
    // minute: the two key creations above were this user's session requests.)
    (svc.clock as ManualClock).advance(60_000);
    const t1 = await login(svc, TRADER);
    const t2 = await login(svc, TRADER);
    for (const t of [t1, t2]) {
      for (let i = 0; i < 30; i++) {
        expect((await asSession(t, `${svc.api}/notifications/cursor`)).status).toBe(200);
      }
    }
    const last = await asSession(t1, `${svc.api}/notifications/cursor`);
    expect(expectContractError(last, 429, 'RATE_LIMITED').details).toMatchObject({
      limit_scope: 'key',
      limit: 60,
    });
    expect(last.headers.get('retry-after')).toBe('60');
  });
});

describe('audit: webhooks', () => {
  let svc: Running | undefined;
  let rx: Receiver | undefined;
  /**
   * The default-configured service of the tests below that need nothing else: booted by the first,
   * kept for the rest (each makes its own user, key and endpoints; the clock only moves forward).
   */
  let shared: Running | undefined;
  const sharedApp = async (): Promise<Running> => (shared ??= await startWebhookApp());
  afterEach(async () => {
    if (svc !== shared) await svc?.close();
    svc = undefined;
    await rx?.close();
    rx = undefined;
  });
  afterAll(async () => {
    await shared?.close();
  });

  it('replays never count toward the 20 consecutive dead letters that suspend an endpoint', async () => {
    rx = await Receiver.start();
    // One attempt per delivery: each failure is dead-lettered at once.
    svc = await startWebhookApp({ env: { WEBHOOK_RETRY_SCHEDULE: '0' } });
    const s = svc;
    const t = await hookUser(s);
    rx.on('/audit/fail', { status: 500 });
    const ep = await createEndpoint(s, t, rx.url('/audit/fail'));
    const originals: string[] = [];
    for (let i = 0; i < 19; i++) originals.push((await sendTest(s, t, ep.id)).id as string);
    await until(
      () => health(s, t, ep.id),
      (h: Json) => h.dlq_count === 19,
      '19 dead letters',
    );
    // Three failing replays: dead letters too, but not part of the streak.
    for (const id of originals.slice(0, 3)) {
      const r = await post(s, t, `/webhooks/${ep.id}/deliveries/${id}/replay`);
      expect(r.status).toBe(202);
    }
    await until(
      () => health(s, t, ep.id),
      (h: Json) => h.dlq_count === 22,
      '22 dead letters',
    );
    await sleep(200); // worker passes after the last dead letter
    expect(await health(s, t, ep.id)).toMatchObject({
      status: 'ACTIVE',
      consecutive_failures: 19,
      dlq_count: 22,
      replays_24h: 3,
      success_rate_24h: 0,
      dead_letter_24h: 19,
      suspended_at: null,
    });
    // The 20th original does suspend it (no success ever, so none in 24 hours).
    await sendTest(s, t, ep.id);
    const h = await until(
      () => health(s, t, ep.id),
      (x: Json) => x.status === 'SUSPENDED',
      'SUSPENDED',
    );
    expect(h).toMatchObject({ consecutive_failures: 20, dlq_count: 23, replays_24h: 3 });
  });

  it('the endpoint cap reads active keys only: an expired PRO key no longer raises it', async () => {
    rx = await Receiver.start();
    svc = await sharedApp();
    const base = await hookUser(svc);
    const pro = await keyFor(svc, base.email, base.token, {
      scopes: HOOK_SCOPES,
      environment: 'test',
      expires_in_days: 1,
    });
    await approveTier(svc, pro, 'PRO');
    for (let i = 0; i < 4; i++) {
      const res = await createEndpointRaw(svc, base, {
        url: rx.url(`/audit/cap/${i}`),
        events: ['*'],
      });
      expect(res.status).toBe(201);
    }
    advance(svc, DAY + 1_000);
    expectContractError(await meWithKey(svc, pro.key), 401, 'API_KEY_EXPIRED');
    const over = await createEndpointRaw(svc, base, { url: rx.url('/audit/cap/x'), events: ['*'] });
    expect(expectContractError(over, 422, 'WEBHOOK_ENDPOINT_CAP_REACHED').details).toEqual({
      cap: 3,
      current_count: 4,
      tier: 'FREE',
    });
  });

  it('Idempotency-Key on webhook mutations: a retried create makes one endpoint, a retried rotation rotates once', async () => {
    rx = await Receiver.start();
    svc = await sharedApp();
    const t = await hookUser(svc);
    const body = { url: rx.url('/audit/idem'), events: ['*'] };
    const init = { method: 'POST', json: body, headers: { 'idempotency-key': 'audit-create-1' } };
    const first = await as(t, `${svc.api}/webhooks`, init);
    const retry = await as(t, `${svc.api}/webhooks`, init);
    expect([first.status, retry.status]).toEqual([201, 201]);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const listed = await as(t, `${svc.api}/webhooks`);
    expect(listed.body.data.map((e: Json) => e.id)).toEqual([first.body.id]);

    const rotate = {
      method: 'POST',
      json: {},
      headers: { 'idempotency-key': 'audit-rotate-1' },
    };
    const r1 = await as(t, `${svc.api}/webhooks/${first.body.id}/rotate-secret`, rotate);
    const r2 = await as(t, `${svc.api}/webhooks/${first.body.id}/rotate-secret`, rotate);
    expect([r1.status, r2.status]).toEqual([200, 200]);
    expect(r1.body.secret_version).toBe(2);
    expect(r2.body).toEqual(r1.body);
    expect(r2.headers.get('idempotent-replayed')).toBe('true');
    const ep = await as(t, `${svc.api}/webhooks/${first.body.id}`);
    expect(ep.body.secret_version).toBe(2);
  });

  it('platform lists follow the list convention: limit 1..200, default 50, an opaque next_cursor', async () => {
    rx = await Receiver.start();
    svc = await sharedApp();
    const s = svc;
    const t = await hookUser(s);
    const ep = await createEndpoint(s, t, rx.url('/audit/list'));
    for (let i = 0; i < 51; i++) await sendTest(s, t, ep.id);
    const page = await as(t, `${s.api}/webhooks/${ep.id}/deliveries`);
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(50);
    expect(typeof page.body.next_cursor).toBe('string');
    const rest = await as(
      t,
      `${s.api}/webhooks/${ep.id}/deliveries?cursor=${encodeURIComponent(page.body.next_cursor)}`,
    );
    expect(rest.body.data).toHaveLength(1);
    expect(rest.body.next_cursor).toBeNull();
    expect((await deliveries(s, t, ep.id)).length).toBe(51);
    for (const path of ['/webhooks', `/webhooks/${ep.id}/deliveries`, '/api-keys']) {
      for (const q of ['limit=0', 'limit=201']) {
        const res =
          path === '/api-keys'
            ? await asSession(t.token, `${s.api}${path}?${q}`)
            : await as(t, `${s.api}${path}?${q}`);
        const err = expectContractError(res, 400, 'VALIDATION_FAILED');
        expect(err.details.fields.map((f: { field: string }) => f.field)).toEqual(['limit']);
      }
    }
    expect((await as(t, `${s.api}/webhooks?limit=200`)).status).toBe(200);
  });
});

describe('audit: access and versioning', () => {
  let svc: Running | undefined;
  /**
   * The service at NOON the signing and deprecation tests share (each signs in and makes its
   * keys): the signing test, which signs at NOON, comes first; the deprecation test moves the
   * clock five years on after it.
   */
  let atNoon: Running | undefined;
  const noonApp = async (): Promise<Running> => (atNoon ??= await startAccessApp({ now: NOON }));
  afterEach(async () => {
    if (svc !== atNoon) await svc?.close();
    svc = undefined;
  });
  afterAll(async () => {
    await atNoon?.close();
  });

  it('the signed string is exactly <unix_ts>.<METHOD>.<path>. + raw body, HMAC-SHA256 hex after v1= (independent HMAC)', async () => {
    svc = await noonApp();
    const token = await login(svc, TRADER);
    const k = await createKey(svc, token, { signing_required: true });
    const secret = k.signing_secret as string;
    expect(secret.startsWith('svc_sign_')).toBe(true);
    const ts = Math.floor(Date.parse(NOON) / 1000);
    const hmac = (text: string) => createHmac('sha256', secret).update(text).digest('hex');
    const send = (method: string, path: string, signed: string, body?: string) =>
      http(`${svc!.baseUrl}${path}`, {
        method,
        body,
        headers: {
          'x-api-key': k.key,
          'X-Svc-Timestamp': String(ts),
          'X-Svc-Signature': `v1=${hmac(signed)}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
      });

    const path = '/api/v1/markets?limit=1';
    expect((await send('GET', path, `${ts}.GET.${path}.`)).status).toBe(200);
    // A body is appended raw after the trailing dot. The step-up runs (409: not enrolled) only
    // once the signature has passed.
    const body = '{"code":"123456"}';
    const stepUp = '/api/v1/security/mfa/step-up';
    expectContractError(
      await send('POST', stepUp, `${ts}.POST.${stepUp}.${body}`, body),
      409,
      'MFA_NOT_ENROLLED',
    );
    // Near misses of the format are refused.
    for (const wrong of [
      `${ts}.get.${path}.`, // METHOD is upper-case
      `${ts}.GET.${path}`, // the trailing dot
      `${ts}.GET./api/v1/markets.`, // the query string is part of the path
      `${ts}.GET.${path.slice('/api/v1'.length)}.`, // the path starts at /api/v1
      `${ts * 1000}.GET.${path}.`, // seconds, not milliseconds
    ]) {
      expectContractError(await send('GET', path, wrong), 401, 'SIGNATURE_INVALID');
    }
    expectContractError(
      await send('POST', stepUp, `${ts}.POST.${stepUp}.`, body),
      401,
      'SIGNATURE_INVALID',
    );
  });

  it('Origin: null (a sandboxed frame, a file) with a credential is 403 CORS_ORIGIN_REJECTED', async () => {
    svc = await startAccessApp({ env: { FIRST_PARTY_ORIGINS: 'https://app.example' } });
    const k = await createKey(svc, await login(svc, TRADER));
    for (const origin of ['null', 'https://app.example.evil.test', 'http://app.example']) {
      const res = await asKey(k.key, `${svc.api}/markets?limit=1`, { headers: { origin } });
      expectContractError(res, 403, 'CORS_ORIGIN_REJECTED');
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    }
    const ok = await asKey(k.key, `${svc.api}/markets?limit=1`, {
      headers: { origin: 'https://app.example' },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });

  it('a deprecated operation with no sunset keeps working years on, and every answer carries its headers', async () => {
    svc = await noonApp();
    const k = await createKey(svc, await login(svc, TRADER), { scopes: ['notifications:read'] });
    (svc.clock as ManualClock).advance(5 * 365 * 86_400_000);
    const headersOf = (res: { headers: Headers }) => [
      res.headers.get('deprecation'),
      res.headers.get('sunset'),
      res.headers.get('link'),
    ];
    const expected = [
      '@1778198400',
      null,
      '</api/v1/notifications/cursor>; rel="successor-version"',
    ];
    const ok = await asKey(k.key, `${svc.api}/notifications`);
    expect(ok.status).toBe(200);
    expect(headersOf(ok)).toEqual(expected);
    expectContractError(await http(`${svc.api}/notifications`), 401, 'UNAUTHENTICATED');
    expect(headersOf(await http(`${svc.api}/notifications`))).toEqual(expected);
    const narrow = await createKey(svc, await login(svc, TRADER), { scopes: ['markets:read'] });
    const forbidden = await asKey(narrow.key, `${svc.api}/notifications`);
    expectContractError(forbidden, 403, 'INSUFFICIENT_SCOPE');
    expect(headersOf(forbidden)).toEqual(expected);
  });
});
