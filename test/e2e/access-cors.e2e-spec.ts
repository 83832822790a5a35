import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createKey, login, TRADER } from '../support/access.js';
import { expectError, http, startApp, type Running } from '../support/harness.js';

const APP = 'https://app.example';
const EVIL = 'https://evil.example';

describe('CORS: only FIRST_PARTY_ORIGINS may send credentialed cross-origin requests', () => {
  let svc: Running;
  let session: string;
  let key: string;
  beforeAll(async () => {
    // Limits stay on here so the exposed limit headers are really sent.
    svc = await startApp({
      env: {
        FIRST_PARTY_ORIGINS: `${APP},https://admin.example:8443`,
        DATA_API_USAGE_METERING_ENABLED: 'true',
      },
    });
    session = await login(svc, TRADER);
    key = (await createKey(svc, session, { name: 'browser', environment: 'test' })).key;
  });
  afterAll(async () => {
    await svc.close();
  });

  it('a foreign origin with X-API-Key, Authorization or a cookie is 403 CORS_ORIGIN_REJECTED', async () => {
    const credentials: Record<string, string>[] = [
      { 'x-api-key': key },
      { authorization: `Bearer ${session}` },
      { cookie: 'session=abc' },
    ];
    for (const cred of credentials) {
      for (const path of ['/markets?limit=1', '/auth/me']) {
        const res = await http(`${svc.api}${path}`, { headers: { origin: EVIL, ...cred } });
        const err = expectError(res, 403, 'CORS_ORIGIN_REJECTED');
        expect(err.details.origin).toBe(EVIL);
        expect(res.text).not.toContain(key);
        expect(res.text).not.toContain(session);
        expect(res.headers.get('access-control-allow-origin')).toBeNull();
        expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      }
    }
    // A mutation from a foreign origin has no effect.
    const create = await http(`${svc.api}/api-keys`, {
      method: 'POST',
      headers: { origin: EVIL, authorization: `Bearer ${session}` },
      json: { name: 'csrf', environment: 'live' },
    });
    expectError(create, 403, 'CORS_ORIGIN_REJECTED');
    const list = await http(`${svc.api}/api-keys`, {
      headers: { authorization: `Bearer ${session}` },
    });
    expect(list.body.data.map((k: { name: string }) => k.name)).not.toContain('csrf');
    // Origins match exactly: scheme, host and port.
    for (const near of [
      'http://app.example',
      'https://app.example:444',
      'https://app.example.evil',
    ]) {
      expectError(
        await http(`${svc.api}/auth/me`, { headers: { origin: near, 'x-api-key': key } }),
        403,
        'CORS_ORIGIN_REJECTED',
      );
    }
  });

  it('the same foreign origin without credentials reads public markets (200)', async () => {
    const res = await http(`${svc.api}/markets?limit=1`, { headers: { origin: EVIL } });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('a preflight from a foreign origin gets no Access-Control-Allow-* headers', async () => {
    const res = await http(`${svc.api}/auth/me`, {
      method: 'OPTIONS',
      headers: {
        origin: EVIL,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-api-key',
      },
    });
    expect(res.status).toBeLessThan(300);
    const allow = [...res.headers.keys()].filter((h) => h.startsWith('access-control-allow-'));
    expect(allow).toEqual([]);
  });

  it('a preflight from a first-party origin is 204 with origin, credentials and headers allowed', async () => {
    for (const origin of [APP, 'https://admin.example:8443']) {
      const res = await http(`${svc.api}/api-keys`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type, idempotency-key, authorization',
        },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect(res.headers.get('access-control-allow-credentials')).toBe('true');
      const headers = (res.headers.get('access-control-allow-headers') ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase());
      for (const h of [
        'x-api-key',
        'idempotency-key',
        'authorization',
        'content-type',
        'x-svc-signature',
        'x-svc-timestamp',
      ]) {
        expect(headers).toContain(h);
      }
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      expect(res.headers.get('vary')).toContain('Origin');
    }
  });

  it('a real first-party request is allowed and exposes the limit, quota and Retry-After headers', async () => {
    const res = await http(`${svc.api}/markets?limit=1`, {
      headers: { origin: APP, 'x-api-key': key },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    const exposed = (res.headers.get('access-control-expose-headers') ?? '')
      .split(',')
      .map((h) => h.trim());
    for (const h of [
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'X-Quota-Daily-Limit',
      'X-Quota-Daily-Remaining',
      'X-Quota-Monthly-Limit',
      'X-Quota-Monthly-Remaining',
      'Retry-After',
    ]) {
      expect(exposed).toContain(h);
    }
    // The exposed headers are really there for the browser to read.
    expect(res.headers.get('x-ratelimit-limit')).toBe('60');
    expect(res.headers.get('x-ratelimit-remaining')).not.toBeNull();
    expect(res.headers.get('x-quota-daily-limit')).toBe('1000');

    const session2 = await http(`${svc.api}/auth/me`, {
      headers: { origin: APP, authorization: `Bearer ${session}`, cookie: 'first=party' },
    });
    expect(session2.status).toBe(200);
    expect(session2.headers.get('access-control-allow-origin')).toBe(APP);
  });

  it('requests without an Origin header are not CORS requests and are unaffected', async () => {
    const res = await http(`${svc.api}/auth/me`, { headers: { 'x-api-key': key } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS and the per-IP ceiling', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startApp({ env: { FIRST_PARTY_ORIGINS: APP } });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('preflights are not charged; a first-party 429 carries the allow and expose headers', async () => {
    const session = await login(svc, TRADER);
    for (let i = 0; i < 70; i++) {
      const pre = await http(`${svc.api}/auth/me`, {
        method: 'OPTIONS',
        headers: { origin: APP, 'access-control-request-method': 'GET' },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get('access-control-allow-origin')).toBe(APP);
    }
    const me = () =>
      http(`${svc.api}/auth/me`, { headers: { origin: APP, authorization: `Bearer ${session}` } });
    let last = await me();
    let n = 1;
    while (last.status === 200 && n < 100) {
      last = await me();
      n++;
    }
    // The login above and these: the auth category's 60 a minute, preflights not counted.
    expect(n).toBe(60);
    const err = expectError(last, 429, 'RATE_LIMITED');
    expect(err.details.limit_scope).toBe('ip');
    expect(last.headers.get('access-control-allow-origin')).toBe(APP);
    expect(last.headers.get('access-control-expose-headers')).toContain('Retry-After');
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
