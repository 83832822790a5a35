import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RedisServer } from '../../../test/support/redis-server.js';
import type { WorldName } from '../../common/environment.js';
import { loadConfig } from '../../config/app-config.js';
import { ConfigService } from '../../config/config.service.js';
import { RedisLimitStore } from '../limits/redis-limit-store.js';
import type { CommittedEvents } from '../trading/event-bus.js';
import { RedisClusterSignals } from './redis-cluster-signals.js';
import { RedisConnection } from './redis-connection.js';
import { RedisStreamsEventBus } from './redis-event-bus.js';

/**
 * REDIS_KEY_PREFIX: two deployments (two databases) on one redis-server see none of each other's
 * limit counters, event streams or signals; two instances of one deployment share them.
 */
let server: RedisServer;
const connections: RedisConnection[] = [];
const closers: (() => unknown)[] = [];

beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(async () => {
  for (const close of closers) await close();
  for (const c of connections) c.onApplicationShutdown();
  await server.stop();
});

/** An instance's connection, as the app makes it, of the deployment on `database`. */
async function instanceOf(database: string): Promise<RedisConnection> {
  const config = loadConfig({
    REDIS_URL: server.url,
    DATABASE_URL: `postgres://svc@127.0.0.1:5432/${database}`,
  });
  const c = new RedisConnection(
    new ConfigService(config, { jwtSecret: 'x'.repeat(32), encryptionKey: '0'.repeat(64) }),
  );
  connections.push(c);
  await c.onModuleInit();
  expect(c.ready).toBe(true);
  return c;
}

async function waitFor(cond: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const charge = (units: number) => ({
  bucket: 'key:minute:1',
  tag: 'usr_1',
  units,
  limit: 10,
  windowEnd: 1_800_000_060_000,
});

describe('REDIS_KEY_PREFIX', () => {
  it('keeps the limit counters of two deployments apart, and shares them within one', async () => {
    const [a1, a2, b] = [await instanceOf('one'), await instanceOf('one'), await instanceOf('two')];
    const now = 1_800_000_000_000;
    expect(await new RedisLimitStore(a1.client!).take([charge(8)], now)).toEqual({
      ok: true,
      counts: [8],
    });
    // The same bucket on the other deployment starts from nothing.
    expect(await new RedisLimitStore(b.client!).take([charge(8)], now)).toEqual({
      ok: true,
      counts: [8],
    });
    // Another instance of the first deployment sees its 8.
    expect(await new RedisLimitStore(a2.client!).take([charge(3)], now)).toEqual({
      ok: false,
      index: 0,
      count: 8,
    });
    const keys = await a1.client!.call('KEYS', '*');
    expect((keys as string[]).sort()).toEqual(
      [
        `${a1.client!.options.keyPrefix}lim:{usr_1}:key:minute:1`,
        `${b.client!.options.keyPrefix}lim:{usr_1}:key:minute:1`,
      ].sort(),
    );
  });

  it("hands an instance the events of its own deployment's worlds only", async () => {
    const [a1, a2, b] = [
      await instanceOf('three'),
      await instanceOf('three'),
      await instanceOf('four'),
    ];
    const busOf = (c: RedisConnection) => {
      const bus = new RedisStreamsEventBus(c.client!, { maxLen: 100 });
      closers.push(() => bus.onApplicationShutdown());
      const got: CommittedEvents[] = [];
      // Committed batches only: a follower's first read of a world also hands on a refresh
      // (`rebuilt`, no events), which says nothing about whose events reach it.
      bus.stream.subscribe((x) => {
        if (x.rebuilt !== true) got.push(x);
      });
      bus.follow('paper' as WorldName);
      return { bus, got };
    };
    const [onA1, onA2, onB] = [busOf(a1), busOf(a2), busOf(b)];
    await waitFor(() => [onA1, onA2, onB].every((x) => x.bus.following('paper' as WorldName)));
    const batch = (marketId: string): CommittedEvents => ({
      environment: 'test',
      world: 'paper' as WorldName,
      events: [{ type: 'book.level', marketId, side: 'BID', price: 1, quantity: 1 }],
      committedAt: 1_800_000_000_000,
    });
    onB.bus.publish(batch('from-b'));
    onA1.bus.publish(batch('from-a'));
    await waitFor(() => onA2.got.length === 1);
    const markets = (got: CommittedEvents[]) =>
      got.map((x) => (x.events[0] as { marketId: string }).marketId);
    expect(markets(onA2.got)).toEqual(['from-a']);
    // B's own batch went straight to its subscribers; A's never arrives there.
    await new Promise((r) => setTimeout(r, 200));
    expect(markets(onB.got)).toEqual(['from-b']);
    expect(markets(onA2.got)).toEqual(['from-a']);
  });

  it("sends a signal to the instances of the sender's deployment only", async () => {
    const [a1, a2, b] = [
      await instanceOf('five'),
      await instanceOf('five'),
      await instanceOf('six'),
    ];
    const signalsOf = (c: RedisConnection) => {
      const s = new RedisClusterSignals(c.client!);
      closers.push(() => s.onApplicationShutdown());
      const got: string[] = [];
      s.on('key.revoked', (x) => got.push(x.keyId));
      return { s, got };
    };
    const [s1, s2, s3] = [signalsOf(a1), signalsOf(a2), signalsOf(b)];
    await waitFor(() => s1.s.listening && s2.s.listening && s3.s.listening);
    s3.s.publish({ kind: 'key.revoked', keyId: 'key_b' });
    s1.s.publish({ kind: 'key.revoked', keyId: 'key_a' });
    await waitFor(() => s2.got.length === 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(s2.got).toEqual(['key_a']);
    expect(s3.got).toEqual(['key_b']);
  });
});
