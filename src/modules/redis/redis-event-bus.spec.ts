import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { RedisServer } from '../../../test/support/redis-server.js';
import type { WorldName } from '../../common/environment.js';
import { loadConfig } from '../../config/app-config.js';
import { ConfigService } from '../../config/config.service.js';
import type { CommittedEvents } from '../trading/event-bus.js';
import { encodeBatch, seqKey, streamKey } from './redis-event-bus-codec.js';
import { RedisStreamsEventBus } from './redis-event-bus.js';
import { RedisConnection } from './redis-connection.js';
import { keyPrefixOf } from './redis-key-prefix.js';

/**
 * The committed-event stream shared through Redis Streams, against a real redis-server (one for
 * this file, started on a free port): buses on one Redis play the instances.
 */
let server: RedisServer;
const connections: RedisConnection[] = [];
const buses: RedisStreamsEventBus[] = [];

beforeAll(async () => {
  server = await RedisServer.start();
});
afterEach(async () => {
  for (const b of buses.splice(0)) await b.onApplicationShutdown();
  for (const c of connections.splice(0)) c.onApplicationShutdown();
});
afterAll(async () => {
  await server.stop();
});

/** A bus on its own connection made as the app makes it (no offline queue, endless retries). */
async function bus(maxLen = 1_000): Promise<RedisStreamsEventBus> {
  const config = new ConfigService(loadConfig({ REDIS_URL: server.url }), {
    jwtSecret: 'x'.repeat(32),
    encryptionKey: '0'.repeat(64),
  });
  const c = new RedisConnection(config);
  connections.push(c);
  await c.onModuleInit();
  const b = new RedisStreamsEventBus(c.client!, { maxLen, now: () => 42 });
  buses.push(b);
  return b;
}

/** Everything a bus hands its local subscribers, in order. */
function collect(b: RedisStreamsEventBus): CommittedEvents[] {
  const got: CommittedEvents[] = [];
  b.stream.subscribe((x) => got.push(x));
  return got;
}

let worldSeq = 0;
/** A world no other test uses (the server is shared by the file). */
const freshWorld = (): WorldName => `wld_spec${++worldSeq}${process.pid}`;

/** A batch telling who published it (marketId) and its number (price). */
function batch(world: WorldName, from: string, n: number): CommittedEvents {
  return {
    environment: 'test',
    world,
    events: [{ type: 'book.level', marketId: from, side: 'BID', price: n, quantity: n + 1 }],
    committedAt: 1_800_000_000_000 + n,
  };
}

/** "A3" for A's third batch, "~A3" delivered from another instance, "resync" for a resync. */
function label(x: CommittedEvents): string {
  if (x.rebuilt === true) return x.lost === true ? 'resync' : 'rebuilt';
  const e = x.events[0] as { marketId: string; price: number };
  return `${x.remote === true ? '~' : ''}${e.marketId}${e.price}`;
}

async function waitFor(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const has = (got: CommittedEvents[], l: string) => () => got.map(label).includes(l);

describe('RedisStreamsEventBus', () => {
  it('two instances: each gets its own batches once at once, and the other one’s once, in order', async () => {
    const w = freshWorld();
    const [a, b] = [await bus(), await bus()];
    const [gotA, gotB] = [collect(a), collect(b)];
    a.follow(w);
    b.follow(w);
    await waitFor(() => a.following(w) && b.following(w));
    const expected: string[] = [];
    for (let n = 1; n <= 60; n++) {
      const from = n % 3 === 0 ? 'B' : 'A';
      (from === 'A' ? a : b).publish(batch(w, from, n));
      expected.push(`${from}${n}`);
      // Local delivery is synchronous: no Redis round trip on the committing instance.
      expect(label((from === 'A' ? gotA : gotB).at(-1)!)).toBe(`${from}${n}`);
    }
    // Markers published last: once each side has the other's, everything before it arrived too.
    a.publish(batch(w, 'A', 999));
    b.publish(batch(w, 'B', 999));
    await waitFor(has(gotA, '~B999'));
    await waitFor(has(gotB, '~A999'));
    const fromSelf = (got: CommittedEvents[]) =>
      got.map(label).filter((l) => !l.startsWith('~') && !l.endsWith('999') && l !== 'rebuilt');
    const fromOther = (got: CommittedEvents[]) =>
      got.map(label).filter((l) => l.startsWith('~') && !l.endsWith('999'));
    // Own batches unmarked, the other's marked remote; each exactly once, in publish order (a
    // remote batch arrives later than local ones published at the same time, so the two
    // sequences interleave differently on each side).
    expect(fromSelf(gotA)).toEqual(expected.filter((l) => l.startsWith('A')));
    expect(fromOther(gotA)).toEqual(expected.filter((l) => l.startsWith('B')).map((l) => `~${l}`));
    expect(fromSelf(gotB)).toEqual(expected.filter((l) => l.startsWith('B')));
    expect(fromOther(gotB)).toEqual(expected.filter((l) => l.startsWith('A')).map((l) => `~${l}`));
    expect(gotA.map(label).filter((l) => l === 'resync')).toEqual([]);
    expect(gotB.map(label).filter((l) => l === 'resync')).toEqual([]);
    // Following a world starts with a refresh (nothing lost): what it held before came in no
    // batch read here, so consumers' state (the followers' views) is rebuilt then.
    for (const got of [gotA, gotB]) {
      expect(got.map(label).filter((l) => l === 'rebuilt')).toEqual(['rebuilt']);
      expect(got.find((x) => x.rebuilt === true)).toEqual({
        environment: 'test',
        world: w,
        events: [],
        committedAt: expect.any(Number),
        rebuilt: true,
        remote: true,
      });
    }
    // A remote batch is the batch as committed (events, times, world).
    expect(gotB.find((x) => label(x) === '~A1')).toEqual({ ...batch(w, 'A', 1), remote: true });
  });

  it('a world nobody follows is not read; a third instance joining later starts from now', async () => {
    const w = freshWorld();
    const [a, c] = [await bus(), await bus()];
    const gotC = collect(c);
    for (let n = 1; n <= 5; n++) a.publish(batch(w, 'A', n));
    // Another world's follower sees nothing of this one.
    const other = freshWorld();
    c.follow(other);
    await waitFor(() => c.following(other));
    a.publish(batch(w, 'A', 6));
    const release = c.follow(w);
    await waitFor(() => c.following(w));
    for (let n = 7; n <= 9; n++) a.publish(batch(w, 'A', n));
    await waitFor(has(gotC, '~A9'));
    // A refresh as each world starts being followed (the other one, then this one).
    expect(gotC.map(label)).toEqual(['rebuilt', 'rebuilt', '~A7', '~A8', '~A9']);
    // Let go of: no more batches of that world.
    release();
    a.publish(batch(w, 'A', 10));
    c.follow(other);
    const probe = await bus();
    probe.publish(batch(other, 'P', 1));
    await waitFor(has(gotC, '~P1'));
    expect(gotC.map(label)).toEqual(['rebuilt', 'rebuilt', '~A7', '~A8', '~A9', '~P1']);
  });

  it('a stream trimmed past a reader: the reader hands on a resync, then the newer batches', async () => {
    const w = freshWorld();
    const [a, b] = [await bus(), await bus()];
    const gotB = collect(b);
    b.follow(w);
    await waitFor(() => b.following(w));
    a.publish(batch(w, 'A', 1));
    await waitFor(has(gotB, '~A1'));
    // 30 batches appended and the stream trimmed to its last 5 in one step, before B reads on.
    // Behind the bus's back, on the same deployment's keys (REDIS_KEY_PREFIX).
    const raw = new Redis(server.url, { keyPrefix: keyPrefixOf(connections[0].client!) });
    try {
      const bodies = Array.from({ length: 30 }, (_, i) => encodeBatch(batch(w, 'X', i + 2)));
      await raw.eval(
        `for i = 1, #ARGV do
           local seq = redis.call('INCR', KEYS[2])
           redis.call('XADD', KEYS[1], '*', 'i', 'ins_other', 's', seq, 'b', ARGV[i])
         end
         redis.call('XTRIM', KEYS[1], 'MAXLEN', 5)`,
        2,
        streamKey(w),
        seqKey(w),
        ...bodies,
      );
    } finally {
      raw.disconnect();
    }
    await waitFor(has(gotB, '~X31'));
    expect(gotB.map(label)).toEqual([
      'rebuilt',
      '~A1',
      'resync',
      '~X27',
      '~X28',
      '~X29',
      '~X30',
      '~X31',
    ]);
    expect(gotB[2]).toEqual({
      environment: 'test',
      world: w,
      events: [],
      committedAt: 42,
      rebuilt: true,
      remote: true,
      lost: true,
    });
  });

  it('Redis down: local delivery goes on, nothing throws, one warning each; back: the others resync, then new batches', async () => {
    const w = freshWorld();
    const [a, b] = [await bus(), await bus()];
    const [gotA, gotB] = [collect(a), collect(b)];
    b.follow(w);
    await waitFor(() => b.following(w));
    a.publish(batch(w, 'A', 1));
    await waitFor(has(gotB, '~A1'));
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      await server.stop();
      await waitFor(() => !connections.some((c) => c.ready));
      for (let n = 2; n <= 21; n++) expect(() => a.publish(batch(w, 'A', n))).not.toThrow();
      expect(gotA.map(label)).toEqual(Array.from({ length: 21 }, (_, i) => `A${i + 1}`));
      // Failures settle asynchronously: the publisher records the world it owes a marker for.
      await waitFor(() => a.owedMarkers.includes(w));
      const busWarnings = (): string[] => warn.mock.calls.map((c) => String(c[0]));
      const readerWarning = (m: string) =>
        m.startsWith('reading the event streams') || m.startsWith('the event stream reader lost');
      await waitFor(() => busWarnings().some(readerWarning));
      for (let n = 22; n <= 25; n++) a.publish(batch(w, 'A', n));
      await new Promise((r) => setImmediate(r));
      // One for the publisher's 20 failures, one for the reader: at most one per interval each.
      expect(busWarnings().filter((m) => m.startsWith('could not append'))).toHaveLength(1);
      // The reader notices either between two reads or in a failed read: one warning either way.
      expect(busWarnings().filter(readerWarning)).toHaveLength(1);
    } finally {
      warn.mockRestore();
      await server.start();
    }
    // A fresh, empty Redis: the publisher leaves a gap marker, the reader resyncs; then batches
    // flow again, and nothing of the outage arrives as if it were continuous.
    await waitFor(() => a.owedMarkers.length === 0);
    a.publish(batch(w, 'A', 26));
    await waitFor(has(gotB, '~A26'));
    const after = gotB.map(label).slice(2);
    expect(after.at(-1)).toBe('~A26');
    expect(after.slice(0, -1).length).toBeGreaterThanOrEqual(1);
    expect(new Set(after.slice(0, -1))).toEqual(new Set(['resync']));
  });

  it('a publisher whose own connection dropped leaves a gap marker once back: readers resync', async () => {
    const w = freshWorld();
    const [a, b] = [await bus(), await bus()];
    const gotB = collect(b);
    b.follow(w);
    await waitFor(() => b.following(w));
    a.publish(batch(w, 'A', 1));
    await waitFor(has(gotB, '~A1'));
    // A's own connection drops (the server and B's reader stay up): its batch goes nowhere.
    const aConn = connections[0];
    aConn.client!.disconnect(true);
    a.publish(batch(w, 'A', 2));
    await waitFor(() => a.owedMarkers.includes(w));
    await waitFor(() => a.owedMarkers.length === 0);
    a.publish(batch(w, 'A', 3));
    await waitFor(has(gotB, '~A3'));
    expect(gotB.map(label)).toEqual(['rebuilt', '~A1', 'resync', '~A3']);
  });
});
