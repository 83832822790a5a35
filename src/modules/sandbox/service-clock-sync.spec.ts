import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RedisServer } from '../../../test/support/redis-server.js';
import { AdjustableClock } from '../../common/clock/clock.js';
import { loadConfig } from '../../config/app-config.js';
import { ConfigService } from '../../config/config.service.js';
import { RedisClusterSignals } from '../redis/redis-cluster-signals.js';
import { RedisConnection } from '../redis/redis-connection.js';
import { Redis } from 'ioredis';
import { CLOCK_OFFSET_KEY, ServiceClockSync } from './service-clock-sync.js';

/**
 * The service clock's moves on every instance (cluster mode), on a real redis-server: each
 * "instance" is a clock, a Redis connection, its signals and its ServiceClockSync.
 */
let server: RedisServer;
const closers: (() => void)[] = [];

beforeAll(async () => {
  server = await RedisServer.start();
}, 30_000);

afterAll(async () => {
  for (const close of closers) close();
  await server.stop();
});

async function instance(): Promise<{
  clock: AdjustableClock;
  sync: ServiceClockSync;
  redis: RedisConnection;
}> {
  const config = new ConfigService(
    loadConfig({ REDIS_URL: server.url, SANDBOX_CLOCK_CONTROL: 'true' }),
    { jwtSecret: 'x'.repeat(32), encryptionKey: '0'.repeat(64) },
  );
  const redis = new RedisConnection(config);
  await redis.onModuleInit();
  const signals = new RedisClusterSignals(redis.client!);
  closers.push(
    () => signals.onApplicationShutdown(),
    () => redis.onApplicationShutdown(),
  );
  const deadline = Date.now() + 3000;
  while (!signals.listening && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const clock = new AdjustableClock(() => 1_900_000_000_000);
  const sync = new ServiceClockSync(clock, config, signals, redis);
  closers.unshift(() => sync.onApplicationShutdown());
  await sync.onModuleInit();
  return { clock, sync, redis };
}

async function until(ok: () => boolean, ms = 3000): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('ServiceClockSync', () => {
  it('a move on one instance moves every instance’s clock; one starting later starts there', async () => {
    const a = await instance();
    const b = await instance();
    a.clock.advance(3_600_000);
    a.sync.advanced();
    await until(() => b.clock.offset === 3_600_000);
    expect(b.clock.now()).toBe(a.clock.now());
    // Offsets only grow: an older, smaller one heard late changes nothing.
    b.clock.advance(60_000);
    b.sync.advanced();
    await until(() => a.clock.offset === 3_660_000);
    expect(a.clock.follow(3_600_000)).toBe(false);
    expect(a.clock.offset).toBe(3_660_000);
    // An instance that starts now reads the offset Redis keeps.
    const raw = new Redis(server.url);
    closers.push(() => raw.disconnect());
    for (let i = 0; i < 100 && (await raw.get(CLOCK_OFFSET_KEY)) !== '3660000'; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const c = await instance();
    expect(c.clock.offset).toBe(3_660_000);
  });

  it('a move made while Redis is down reaches the other instances when Redis returns, without a restart', async () => {
    const a = await instance();
    const b = await instance();
    const c = await instance();
    expect(b.clock.offset).toBe(a.clock.offset);
    const start = a.clock.offset;
    await server.stop();
    await until(() => b.clock.offset === start && !isReady(a) && !isReady(b), 5000);
    // Moved on A while Redis is away: the signal is lost and the key cannot be written.
    a.clock.advance(7_200_000);
    a.sync.advanced();
    await new Promise((r) => setTimeout(r, 300));
    expect(b.clock.offset).toBe(start);
    // Redis comes back empty (no persistence): A writes its offset back, B and C read it within
    // one re-read period (5 s) of the reconnection.
    await server.start();
    await until(() => b.clock.offset === start + 7_200_000, 15_000);
    await until(() => c.clock.offset === start + 7_200_000, 10_000);
    expect(b.clock.now()).toBe(a.clock.now());
    // Offsets only grow: B, never behind, does not take anyone back.
    expect(a.clock.offset).toBe(start + 7_200_000);
  }, 60_000);
});

function isReady(i: { redis: RedisConnection }): boolean {
  return i.redis.client?.status === 'ready';
}
