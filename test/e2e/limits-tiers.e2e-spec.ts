import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { MemoryLimitStore, type Charge } from '../../src/modules/limits/limit-store.js';
import { dayWindow, minuteWindow, monthWindow } from '../../src/modules/limits/limit-tables.js';
import { expectError, http, startApp, type Running } from '../support/harness.js';
import { createKey, sessionFor } from '../support/keys.js';
import { burst } from '../support/burst.js';
import { jsonClient } from '../support/json-client.js';
import { toNextMinute } from '../support/limits.js';

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
  // One app for the file. Trusted proxy addresses give the ENTERPRISE test's batches their own
  // client IPs; metering is on for the quota tests (the other tests' rules do not depend on it);
  // each test has its own key, and starts on the next whole minute (toNextMinute).
  const store = new PreloadedStore();
  let svc: Running;
  let clock: ManualClock;
  beforeAll(async () => {
    svc = await startApp({
      now: NOON,
      limitStore: store,
      env: {
        TRUSTED_PROXIES: '127.0.0.1',
        DATA_API_USAGE_METERING_ENABLED: 'true',
        LOG_LEVEL: 'warn',
      },
    });
    clock = svc.clock as ManualClock;
  });
  // A lean keep-alive client for the bursts, and no info line per request: the test shares its
  // CPU with the app it calls.
  const client = jsonClient(32);
  afterAll(async () => {
    client.close();
    await svc.close();
  });
  beforeEach(() => toNextMinute(clock));

  it('an ENTERPRISE key gets exactly 6,000 requests a minute', async () => {
    const key = await keyOfTier(svc, 'ENTERPRISE');
    // The minute's first 5,700 were made earlier (the store starts the key's minute there, as
    // for the quotas below): the app serves the last 300 of the 6,000, all at once, and refuses
    // the next. A ceiling other than 6,000, or requests not counted, fails either way.
    const earlier = 5700;
    store.preset(`key:${key.id}:${minuteWindow(clock.now())[0]}`, earlier);
    // Spread over client IPs whose per-IP ceilings are not the limit: each batch of 50 comes
    // from its own client IP (the auth category allows 60 per IP). Which lands first does not
    // matter.
    const results = await burst(
      6000 - earlier,
      async (i) => {
        const res = await client.send(`${svc.api}/auth/me`, 'GET', {
          'x-api-key': key.key,
          'x-forwarded-for': `198.51.100.${Math.floor(i / 50)}`,
        });
        return {
          status: res.status,
          limit: res.headers['x-ratelimit-limit'],
          remaining: Number(res.headers['x-ratelimit-remaining']),
        };
      },
      32,
    );
    expect(results.filter((r) => r.status === 200).length).toBe(6000 - earlier);
    expect(new Set(results.map((r) => r.limit))).toEqual(new Set(['6000']));
    // Each of them counted once: together they read every count from 299 left down to 0 left.
    expect(results.map((r) => r.remaining).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 6000 - earlier }, (_, i) => i),
    );
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
    const key =
      tier === 'FREE'
        ? await createKey(svc.api, await sessionFor(svc.api))
        : await keyOfTier(svc, tier);
    const now = clock.now();
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
    const key = await keyOfTier(svc, 'ENTERPRISE', ['webhooks:write', 'webhooks:read']);
    const h = { 'x-api-key': key.key };
    const created = await burst(
      25,
      async (i) =>
        (
          await http(`${svc.api}/webhooks`, {
            method: 'POST',
            headers: h,
            json: { url: `http://127.0.0.1:9/hook/${i}`, events: ['*'] },
          })
        ).status,
    );
    expect(created).toEqual(new Array(25).fill(201));
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
