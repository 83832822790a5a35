import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { RedisServer } from '../../../test/support/redis-server.js';
import type { RouteMeta } from '../../common/api/route-meta.js';
import { ManualClock } from '../../common/clock/clock.js';
import type { Credential } from '../../common/http/request-context.js';
import { loadConfig } from '../../config/app-config.js';
import { ConfigService } from '../../config/config.service.js';
import { RedisConnection } from '../redis/redis-connection.js';
import { MemoryLimitStore, type Charge, type LimitStore } from './limit-store.js';
import { LimitsService } from './limits.service.js';
import { RedisLimitStore } from './redis-limit-store.js';

/**
 * One behaviour suite, run against both stores: the in-process default and Redis (a real
 * redis-server started here on a free port, killed after).
 */
let server: RedisServer;
const connections: RedisConnection[] = [];

function configFor(env: Record<string, string> = {}): ConfigService {
  return new ConfigService(loadConfig(env), {
    jwtSecret: 'x'.repeat(32),
    encryptionKey: '0'.repeat(64),
  });
}

/** A connection as the app makes it (no offline queue, endless reconnects), ready. */
async function connection(): Promise<RedisConnection> {
  const c = new RedisConnection(configFor({ REDIS_URL: server.url }));
  connections.push(c);
  await c.onModuleInit();
  expect(c.ready).toBe(true);
  return c;
}

beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(async () => {
  for (const c of connections) c.onApplicationShutdown();
  await server.stop();
});

let seq = 0;
/** A bucket no other test uses (the Redis server is shared by the whole file). */
const fresh = (name: string): string => `${name}:${process.pid}:${++seq}`;

const STORES: [string, () => Promise<LimitStore>][] = [
  ['memory', () => Promise.resolve(new MemoryLimitStore())],
  ['redis', async () => new RedisLimitStore((await connection()).client!)],
];

describe.each(STORES)('LimitStore contract: %s', (_name, make) => {
  let store: LimitStore;
  const now = 1_800_000_000_000;
  beforeAll(async () => {
    store = await make();
  });
  const charge = (bucket: string, units: number, limit: number, tag?: string): Charge => ({
    bucket,
    units,
    limit,
    windowEnd: now + 60_000,
    ...(tag === undefined ? {} : { tag }),
  });

  it('charges counters and answers the counts after charging', async () => {
    const a = fresh('a');
    expect(await store.take([charge(a, 1, 5)], now)).toEqual({ ok: true, counts: [1] });
    expect(await store.take([charge(a, 3, 5)], now)).toEqual({ ok: true, counts: [4] });
    expect(await store.count(a, now)).toBe(4);
    expect(await store.count(fresh('absent'), now)).toBe(0);
  });

  it('a batch is all or nothing: the first counter that cannot take its units refuses the lot', async () => {
    const [a, b, c] = [fresh('a'), fresh('b'), fresh('c')];
    expect(await store.take([charge(b, 2, 3)], now)).toEqual({ ok: true, counts: [2] });
    const refused = await store.take([charge(a, 1, 10), charge(b, 2, 3), charge(c, 1, 10)], now);
    expect(refused).toEqual({ ok: false, index: 1, count: 2 });
    expect([
      await store.count(a, now),
      await store.count(b, now),
      await store.count(c, now),
    ]).toEqual([0, 2, 0]);
    // Exactly at the limit fits.
    expect(await store.take([charge(a, 1, 10), charge(b, 1, 3)], now)).toEqual({
      ok: true,
      counts: [1, 3],
    });
  });

  it('a tagged counter is read back with its tag', async () => {
    const a = fresh('tagged');
    await store.take([charge(a, 2, 5, 'usr_1'), charge(fresh('ip'), 1, 5, 'ip:10.0.0.1')], now);
    expect(await store.count(a, now, 'usr_1')).toBe(2);
  });

  it('concurrent batches never charge past the limit', async () => {
    const a = fresh('race');
    const results = await Promise.all(
      Array.from({ length: 40 }, () => store.take([charge(a, 1, 25)], now)),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(25);
    expect(await store.count(a, now)).toBe(25);
  });

  it("a counter lives by the service clock's window, not by Redis's time", async () => {
    // The service clock stands still (a manual clock, or an instance behind Redis's clock) while
    // real time passes the window's remaining 150 ms: the counter still counts until the
    // service's now reaches the window's end.
    const a = fresh('still');
    const c = { bucket: a, units: 2, limit: 2, windowEnd: now + 150 };
    expect((await store.take([c], now)).ok).toBe(true);
    await new Promise((r) => setTimeout(r, 250));
    expect(await store.take([c], now)).toEqual({ ok: false, index: 0, count: 2 });
    expect(await store.count(a, now)).toBe(2);
    expect(await store.count(a, now + 150)).toBe(0);
  });

  it('a counter ends with its window', async () => {
    const a = fresh('short');
    const t0 = Date.now();
    const c = { bucket: a, units: 2, limit: 2, windowEnd: t0 + 150 };
    expect((await store.take([c], t0)).ok).toBe(true);
    expect((await store.take([c], t0)).ok).toBe(false);
    // Redis expires it in real time; the memory store by the `now` it is given.
    await new Promise((r) => setTimeout(r, 250));
    const later = Date.now();
    expect(await store.count(a, later)).toBe(0);
    expect(await store.take([{ ...c, windowEnd: later + 60_000 }], later)).toEqual({
      ok: true,
      counts: [2],
    });
  });
});

describe('RedisLimitStore through LimitsService', () => {
  const cred: Credential = {
    type: 'API_KEY',
    userId: 'usr_shared',
    keyId: 'key_shared',
    environment: 'test',
    world: 'test',
    scopes: [],
    tier: 'FREE',
  };
  const META: RouteMeta = {
    auth: 'key',
    scopes: [],
    lifecycle: { state: 'STABLE' },
    environment: 'any',
  };
  const reply = (): FastifyReply => {
    const r = { header: () => r };
    return r as unknown as FastifyReply;
  };
  /** 'ok' or the refusal's code. */
  async function check(limits: LimitsService, c: Credential = cred): Promise<string> {
    try {
      await limits.checkCredential(c, META, 'GET /x', reply());
      return 'ok';
    } catch (e) {
      return (e as { code: string }).code;
    }
  }

  it("two instances on one Redis share a key's per-minute window", async () => {
    const clock = new ManualClock('2027-03-01T10:00:00Z');
    const a = new LimitsService(
      new RedisLimitStore((await connection()).client!),
      clock,
      configFor(),
    );
    const b = new LimitsService(
      new RedisLimitStore((await connection()).client!),
      clock,
      configFor(),
    );
    const c = { ...cred, keyId: 'key_two_instances' };
    // FREE: 60 a minute, spread over both instances.
    const answers: string[] = [];
    for (let i = 0; i < 60; i++) answers.push(await check(i % 2 === 0 ? a : b, c));
    expect(answers.every((x) => x === 'ok')).toBe(true);
    expect(await check(a, c)).toBe('RATE_LIMITED');
    expect(await check(b, c)).toBe('RATE_LIMITED');
    expect((await a.usage(c)).per_minute.used).toBe(60);
    // The next minute is a new window on both.
    clock.advance(60_000);
    expect(await check(b, c)).toBe('ok');
  });

  it('fails open while Redis is down (one warning), and uses Redis again once it is back', async () => {
    const clock = new ManualClock('2027-03-01T11:00:00Z');
    const conn = await connection();
    const other = await connection();
    const limits = new LimitsService(new RedisLimitStore(conn.client!), clock, configFor());
    const peer = new LimitsService(new RedisLimitStore(other.client!), clock, configFor());
    const c = { ...cred, keyId: 'key_outage' };
    for (let i = 0; i < 10; i++) expect(await check(limits, c)).toBe('ok');
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      await server.stop();
      // Requests are served: the per-IP ceiling lets them through, the tier ceiling holds
      // locally (60 a minute on this instance alone), and nothing waits for Redis.
      const started = Date.now();
      for (let i = 0; i < 60; i++) {
        await limits.checkIp({ ip: '10.9.9.9', url: '/api/v1/markets' } as never, undefined);
        expect(await check(limits, c)).toBe('ok');
      }
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await check(limits, c)).toBe('RATE_LIMITED'); // the local 60
      const limitWarnings = warn.mock.calls.filter((args) =>
        String(args[0]).startsWith('limit store unavailable'),
      );
      expect(limitWarnings).toHaveLength(1);
      await waitFor(() => !conn.ready); // what GET /health/ready reports as redis: unavailable
    } finally {
      warn.mockRestore();
      await server.start();
    }
    // Reconnected (a fresh, empty server): the window is shared again, from zero.
    await waitFor(() => conn.ready && other.ready);
    clock.advance(60_000);
    for (let i = 0; i < 30; i++) expect(await check(limits, c)).toBe('ok');
    for (let i = 0; i < 30; i++) expect(await check(peer, c)).toBe('ok');
    expect(await check(limits, c)).toBe('RATE_LIMITED');
    expect((await peer.usage(c)).per_minute.used).toBe(60);
  });

  it('fails open, bounded, while Redis is frozen (connections open, no answers)', async () => {
    const clock = new ManualClock('2027-03-01T12:00:00Z');
    const conn = await connection();
    const limits = new LimitsService(new RedisLimitStore(conn.client!), clock, configFor());
    const c = { ...cred, keyId: 'key_frozen' };
    expect(await check(limits, c)).toBe('ok');
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    server.freeze();
    try {
      expect(conn.ready).toBe(true); // the status alone cannot tell
      const started = Date.now();
      for (let i = 0; i < 5; i++) expect(await check(limits, c)).toBe('ok');
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      server.thaw();
      warn.mockRestore();
    }
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
