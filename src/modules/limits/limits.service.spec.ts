import { stat } from 'node:fs/promises';
import { describe, expect, it } from '@jest/globals';
import type { FastifyReply } from 'fastify';
import type { RouteMeta } from '../../common/api/route-meta.js';
import { ManualClock } from '../../common/clock/clock.js';
import type { DomainError } from '../../common/errors/domain-error.js';
import type { Credential } from '../../common/http/request-context.js';
import { loadConfig } from '../../config/app-config.js';
import { ConfigService } from '../../config/config.service.js';
import { MemoryLimitStore, type Charge, type LimitStore } from './limit-store.js';
import { LimitsService, STORE_TIMEOUT_MS } from './limits.service.js';

function fakeReply(): FastifyReply & { headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  const reply = {
    headers,
    header(k: string, v: string) {
      headers[k] = v;
      return reply;
    },
  };
  return reply as unknown as FastifyReply & { headers: Record<string, string> };
}

const META: RouteMeta = {
  auth: 'key',
  scopes: [],
  lifecycle: { state: 'STABLE' },
  environment: 'any',
};

function service(
  clock: ManualClock,
  env: Record<string, string> = {},
  store: LimitStore = new MemoryLimitStore(),
): LimitsService {
  const config = new ConfigService(loadConfig(env), {
    jwtSecret: 'x'.repeat(32),
    encryptionKey: '0'.repeat(64),
  });
  return new LimitsService(store, clock, config);
}

/** Keeps the event loop busy (a burst of requests' synchronous work) for `ms`. */
function busyFor(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // spin
  }
}

describe('LimitsService', () => {
  const cred: Credential = {
    type: 'API_KEY',
    userId: 'usr_1',
    keyId: 'key_1',
    environment: 'test',
    world: 'test',
    scopes: [],
    tier: 'ENTERPRISE',
  };

  it('the monthly quota stops an ENTERPRISE key at 50,000,000 and lets it go on the 1st (UTC)', async () => {
    // Metering counts per key; the day quota would stop it first, so spread across the month.
    const clock = new ManualClock('2027-01-01T00:00:00.000Z');
    const limits = service(clock, { DATA_API_USAGE_METERING_ENABLED: 'true' });
    const store = (limits as unknown as { store: MemoryLimitStore }).store;
    // Pre-load the month counter as if 49,999,999 requests had happened earlier this month.
    const monthStart = Date.parse('2027-01-01T00:00:00.000Z');
    store.take(
      [
        {
          bucket: `quota:month:key_1:${monthStart}`,
          units: 49_999_999,
          limit: 50_000_000,
          windowEnd: Date.parse('2027-02-01T00:00:00Z'),
        },
      ],
      clock.now(),
    );
    clock.advance(20 * 86_400_000);
    const reply = fakeReply();
    await limits.checkCredential(cred, META, 'GET /x', reply);
    expect(reply.headers['X-Quota-Monthly-Remaining']).toBe('0');
    clock.advance(60_000);
    let refused: DomainError | undefined;
    try {
      await limits.checkCredential(cred, META, 'GET /x', fakeReply());
    } catch (e) {
      refused = e as DomainError;
    }
    expect(refused?.code).toBe('QUOTA_EXCEEDED');
    expect(refused?.details).toMatchObject({
      period: 'month',
      limit: 50_000_000,
      tier: 'ENTERPRISE',
    });
    const wait = Number(refused?.headers['Retry-After']);
    expect(clock.now() + wait * 1000).toBeGreaterThanOrEqual(Date.parse('2027-02-01T00:00:00Z'));
    clock.advance(wait * 1000);
    await expect(
      limits.checkCredential(cred, META, 'GET /x', fakeReply()),
    ).resolves.toBeUndefined();
  });

  it('per-route limits count per credential and answer limit_scope route', async () => {
    const clock = new ManualClock('2027-01-01T00:00:00.000Z');
    const limits = service(clock);
    const meta = { ...META, routeLimitPerMinute: 6 };
    for (let i = 0; i < 6; i++)
      await limits.checkCredential(cred, meta, 'GET /orders/export', fakeReply());
    await expect(
      limits.checkCredential(cred, meta, 'GET /orders/export', fakeReply()),
    ).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      details: { limit_scope: 'route', limit: 6 },
    });
    // Another credential has its own allowance; another route too.
    await limits.checkCredential(
      { ...cred, keyId: 'key_2' },
      meta,
      'GET /orders/export',
      fakeReply(),
    );
    await limits.checkCredential(cred, meta, 'GET /other', fakeReply());
  });

  it("a batch's legs are taken with the key's limits, all or nothing, whichever refuses", async () => {
    const clock = new ManualClock('2027-01-01T00:00:05.000Z');
    const limits = service(clock);
    const store = (limits as unknown as { store: MemoryLimitStore }).store;
    const minute = Date.parse('2027-01-01T00:00:00.000Z');
    const meta: RouteMeta = { ...META, routeLimitPerMinute: 10, ipCharge: 'legs' };
    const free: Credential = { ...cred, tier: 'FREE' };
    const req = (ip: string, legs: number) =>
      ({
        ip,
        url: '/api/v1/orders/batch',
        routeOptions: { url: '/api/v1/orders/batch' },
        body: { orders: Array.from({ length: legs }, () => ({})) },
      }) as unknown as Parameters<LimitsService['legCharge']>[0];
    const counts = (ip: string) => ({
      ip: store.count(`ip:orders:${ip}:${minute}`, clock.now()),
      key: store.count(`key:key_1:${minute}`, clock.now()),
      route: store.count(`route:POST /orders/batch:key_1:${minute}`, clock.now()),
    });
    const check = (ip: string, legs: number) => {
      return limits.checkCredential(
        free,
        meta,
        'POST /orders/batch',
        fakeReply(),
        limits.legCharge(req(ip, legs)),
      );
    };

    await check('10.0.0.1', 20);
    expect(counts('10.0.0.1')).toEqual({ ip: 20, key: 1, route: 1 });
    // Legs that do not fit (as when batches race past the gate) charge neither the key nor the route.
    store.take(
      [
        {
          bucket: `ip:orders:10.0.0.1:${minute}`,
          units: 95,
          limit: 1000,
          windowEnd: minute + 60_000,
        },
      ],
      clock.now(),
    );
    await expect(check('10.0.0.1', 6)).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      details: { limit_scope: 'ip', units: 6, category: 'orders' },
    });
    expect(counts('10.0.0.1')).toEqual({ ip: 115, key: 1, route: 1 });
    // A route refusal charges no legs.
    for (let i = 0; i < 9; i++) await check(`10.0.1.${i}`, 1);
    await expect(check('10.0.0.1', 5)).rejects.toMatchObject({
      details: { limit_scope: 'route', limit: 10 },
    });
    expect(counts('10.0.0.1')).toEqual({ ip: 115, key: 10, route: 10 });
  });

  describe('a shared store (Redis) that answers over I/O', () => {
    const meta: RouteMeta = { ...META, routeLimitPerMinute: 1 };

    /** The in-process store behind one I/O round trip (a stat), as a Redis answer arrives in one read. */
    function overIo(): LimitStore {
      const inner = new MemoryLimitStore();
      return {
        async take(charges: readonly Charge[], now: number) {
          await stat(import.meta.filename);
          return inner.take(charges, now);
        },
        async count(bucket: string, now: number) {
          await stat(import.meta.filename);
          return inner.count(bucket, now);
        },
      };
    }

    it('an answer that arrived while the event loop was busy past the timeout is used: a burst does not fail open', async () => {
      const clock = new ManualClock('2027-01-01T00:00:05.000Z');
      const limits = service(clock, {}, overIo());
      await limits.checkCredential(cred, meta, 'POST /x', fakeReply());
      // The store answers at once, but the loop is busy for longer than the timeout: the timer
      // and the answer are both due when it is free again. The answer (a refusal) counts.
      const second = limits.checkCredential(cred, meta, 'POST /x', fakeReply());
      busyFor(STORE_TIMEOUT_MS * 3);
      await expect(second).rejects.toMatchObject({
        code: 'RATE_LIMITED',
        details: { limit_scope: 'route', limit: 1 },
      });
    });

    it('a store that does not answer within the timeout fails open (the route limit holds locally)', async () => {
      const clock = new ManualClock('2027-01-01T00:00:05.000Z');
      const silent: LimitStore = { take: () => new Promise(() => {}), count: () => 0 };
      const limits = service(clock, {}, silent);
      const started = Date.now();
      await limits.checkHandshake('10.0.0.9');
      await limits.checkCredential(cred, meta, 'POST /x', fakeReply());
      expect(Date.now() - started).toBeGreaterThanOrEqual(2 * STORE_TIMEOUT_MS - 5);
      await expect(
        limits.checkCredential(cred, meta, 'POST /x', fakeReply()),
      ).rejects.toMatchObject({ details: { limit_scope: 'route' } });
    });
  });
});
