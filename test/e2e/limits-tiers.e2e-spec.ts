import { afterEach, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { MemoryLimitStore, type Charge } from '../../src/modules/limits/limit-store.js';
import { dayWindow, monthWindow } from '../../src/modules/limits/limit-tables.js';
import { expectError, http, startApp, type Running } from '../support/harness.js';
import { createKey, sessionFor } from '../support/keys.js';

const NOON = '2026-11-22T12:00:00.000Z';

/**
 * A store that starts with a key's quota counters already near their limit, so the real app can
 * be driven to the real SPEC numbers (2,000,000 a day, 50,000,000 a month) without millions of
 * requests. Everything else is the in-process store unchanged.
 */
class PreloadedStore extends MemoryLimitStore {
  private readonly preload = new Map<string, number>();

  preset(bucketPrefix: string, used: number): void {
    this.preload.set(bucketPrefix, used);
  }

  override take(charges: readonly Charge[], now: number) {
    for (const c of charges) {
      for (const [prefix, used] of this.preload) {
        if (c.bucket.startsWith(prefix) && this.count(c.bucket, now) === 0) {
          this.preload.delete(prefix);
          super.take([{ ...c, units: used, limit: Number.MAX_SAFE_INTEGER }], now);
        }
      }
    }
    return super.take(charges, now);
  }
}

async function keyOfTier(svc: Running, tier: 'PRO' | 'ENTERPRISE', scopes?: string[]) {
  const token = await sessionFor(svc.api);
  const key = await createKey(
    svc.api,
    token,
    scopes === undefined ? {} : { scopes, acknowledge_write_scopes: true },
  );
  const req = await http(`${svc.api}/api-keys/${key.id}/tier-request`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    json: { tier },
  });
  const admin = await sessionFor(svc.api, 'admin@sandbox.test');
  const ok = await http(`${svc.api}/admin/tier-requests/${req.body.id}/approve`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}` },
  });
  expect(ok.status).toBe(200);
  return key;
}

describe('limits: every tier at its SPEC number', () => {
  let svc: Running | undefined;
  afterEach(async () => {
    await svc?.close();
    svc = undefined;
  });

  it('an ENTERPRISE key gets exactly 6,000 requests a minute', async () => {
    // Spread over categories whose per-IP ceilings (600 each) are not the limit: trusted proxy
    // addresses give each batch of 500 its own client IP.
    svc = await startApp({ now: NOON, env: { TRUSTED_PROXIES: '127.0.0.1' } });
    const key = await keyOfTier(svc, 'ENTERPRISE');
    let ok = 0;
    for (let i = 0; i < 6000; i++) {
      const res = await http(`${svc.api}/auth/me`, {
        headers: { 'x-api-key': key.key, 'x-forwarded-for': `198.51.100.${Math.floor(i / 50)}` },
      });
      if (res.status === 200) ok++;
      if (i === 0) expect(res.headers.get('x-ratelimit-limit')).toBe('6000');
    }
    expect(ok).toBe(6000);
    const refused = await http(`${svc.api}/auth/me`, {
      headers: { 'x-api-key': key.key, 'x-forwarded-for': '198.51.100.250' },
    });
    expect(expectError(refused, 429, 'RATE_LIMITED').details).toMatchObject({
      limit_scope: 'key',
      limit: 6000,
      tier: 'ENTERPRISE',
    });
  });

  it.each([
    ['FREE', 'day', 1_000],
    ['FREE', 'month', 20_000],
    ['PRO', 'day', 50_000],
    ['PRO', 'month', 1_000_000],
    ['ENTERPRISE', 'day', 2_000_000],
    ['ENTERPRISE', 'month', 50_000_000],
  ] as const)('%s %s quota stops at %i with metering on', async (tier, period, limit) => {
    const store = new PreloadedStore();
    svc = await startApp({
      now: NOON,
      limitStore: store,
      env: { DATA_API_USAGE_METERING_ENABLED: 'true' },
    });
    const key =
      tier === 'FREE'
        ? await createKey(svc.api, await sessionFor(svc.api))
        : await keyOfTier(svc, tier);
    const now = (svc.clock as ManualClock).now();
    const start = period === 'day' ? dayWindow(now)[0] : monthWindow(now)[0];
    // Two requests short of the limit were made earlier in this window.
    store.preset(`quota:${period}:${key.id}:${start}`, limit - 2);
    const h = { 'x-api-key': key.key };
    const a = await http(`${svc.api}/markets?limit=1`, { headers: h });
    expect(a.status).toBe(200);
    const header = period === 'day' ? 'x-quota-daily' : 'x-quota-monthly';
    expect(a.headers.get(`${header}-limit`)).toBe(String(limit));
    expect(a.headers.get(`${header}-remaining`)).toBe('1');
    expect((await http(`${svc.api}/markets?limit=1`, { headers: h })).status).toBe(200);
    const refused = await http(`${svc.api}/markets?limit=1`, { headers: h });
    const err = expectError(refused, 429, 'QUOTA_EXCEEDED');
    expect(err.details).toMatchObject({ period, limit, tier });
    const retry = Number(refused.headers.get('retry-after'));
    const end = period === 'day' ? dayWindow(now)[1] : monthWindow(now)[1];
    expect(now + retry * 1000).toBeGreaterThanOrEqual(end);
  });

  it('webhook endpoint caps follow the highest active tier: ENTERPRISE allows 25', async () => {
    svc = await startApp({ now: NOON });
    const key = await keyOfTier(svc, 'ENTERPRISE', ['webhooks:write', 'webhooks:read']);
    const h = { 'x-api-key': key.key };
    for (let i = 0; i < 25; i++) {
      const res = await http(`${svc.api}/webhooks`, {
        method: 'POST',
        headers: h,
        json: { url: `http://127.0.0.1:9/hook/${i}`, events: ['*'] },
      });
      expect(res.status).toBe(201);
    }
    const over = await http(`${svc.api}/webhooks`, {
      method: 'POST',
      headers: h,
      json: { url: 'http://127.0.0.1:9/hook/26', events: ['*'] },
    });
    expect(expectError(over, 422, 'WEBHOOK_ENDPOINT_CAP_REACHED').details).toEqual({
      cap: 25,
      current_count: 25,
      tier: 'ENTERPRISE',
    });
  });
});
