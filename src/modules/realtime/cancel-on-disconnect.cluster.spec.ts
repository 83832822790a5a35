import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { RedisServer } from '../../../test/support/redis-server.js';
import { ManualClock } from '../../common/clock/clock.js';
import type { Credential } from '../../common/http/request-context.js';
import { loadConfig } from '../../config/app-config.js';
import { ConfigService } from '../../config/config.service.js';
import type { EngineRegistry } from '../trading/engine-registry.js';
import { RedisClusterSignals } from '../redis/redis-cluster-signals.js';
import { RedisConnection } from '../redis/redis-connection.js';
import { CancelOnDisconnectService } from './cancel-on-disconnect.service.js';
import { RedisCodCounter } from './redis-cod-counter.js';

/**
 * Cancel-on-disconnect across instances, at the service level: two (or three) instances of the
 * service as the app builds them (RedisCodCounter, RedisClusterSignals) on one real redis-server,
 * each with its own fake engine that records the cancels it runs. The database holds one enabled
 * key (grace 5 s) with the websocket scope.
 */
const GRACE_MS = 5_000;
/** Short liveness so a killed instance is found dead quickly (the app uses 5 s / 1 s). */
const TTL_MS = 400;

let server: RedisServer;
const connections: RedisConnection[] = [];
const clock = new ManualClock('2027-03-01T10:00:00.000Z');

function config(): ConfigService {
  return new ConfigService(loadConfig({ REDIS_URL: server.url }), {
    jwtSecret: 'x'.repeat(32),
    encryptionKey: '0'.repeat(64),
  });
}

interface Instance {
  cod: CancelOnDisconnectService;
  counter: RedisCodCounter;
  signals: RedisClusterSignals;
  /** Keys whose orders this instance's engine cancelled. */
  cancels: string[];
  /** While set, this instance's reads of a setting (the reload) wait for it: a slow database. */
  reads: { gate: Promise<void> | null };
}

let seq = 0;

/**
 * Instances for the keys in `keyIds`, all listening before any boots (settings read, boot
 * arming), as instances of a running cluster would be.
 */
async function instances(n: number, keyIds: string[]): Promise<Instance[]> {
  const all: Instance[] = [];
  for (let i = 0; i < n; i++) all.push(await instance(keyIds));
  for (const i of all) await i.cod.onApplicationBootstrap();
  return all;
}

async function instance(keyIds: string[]): Promise<Instance> {
  const redis = new RedisConnection(config());
  connections.push(redis);
  await redis.onModuleInit();
  const signals = new RedisClusterSignals(redis.client!);
  const counter = new RedisCodCounter(redis.client!, signals.instanceId, TTL_MS, 100_000);
  const rows = keyIds.map((keyId) => ({
    keyId,
    userId: 'usr_1',
    environment: 'test',
    graceSeconds: GRACE_MS / 1000,
    enabledAt: clock.nowDate().toISOString(),
  }));
  const reads: Instance['reads'] = { gate: null };
  const repo = {
    find: () => Promise.resolve(rows),
    findOneBy: async ({ keyId }: { keyId: string }) => {
      await reads.gate;
      return rows.find((r) => r.keyId === keyId) ?? null;
    },
    upsert: (row: (typeof rows)[number]) => {
      rows.splice(
        rows.findIndex((r) => r.keyId === row.keyId),
        1,
        row,
      );
      return Promise.resolve();
    },
  };
  const keys = { find: () => Promise.resolve(keyIds.map((id) => ({ id, scopes: 'websocket' }))) };
  const db = { getRepository: (e: { name: string }) => (e.name === 'ApiKeyEntity' ? keys : repo) };
  const cancels: string[] = [];
  const commands = new Map<string, (world: string, args: unknown) => unknown>();
  const engines = {
    // One instance writing every world: a defined command runs here.
    defineCommand: (op: string, run: (world: string, args: unknown) => unknown) =>
      commands.set(op, run),
    onWriter: async (world: string, op: string, args: unknown) => commands.get(op)!(world, args),
    get: () => ({
      run: (f: (e: unknown) => unknown) =>
        f({
          cancelByTag: (_user: string, keyId: string) => {
            cancels.push(keyId);
            return { ok: true, cancelled: 1 };
          },
        }),
    }),
  };
  const cod = new CancelOnDisconnectService(
    db as unknown as DataSource,
    clock,
    engines as unknown as EngineRegistry,
    counter,
    signals,
  );
  await waitFor(() => signals.listening);
  await counter.refresh();
  return { cod, counter, signals, cancels, reads };
}

function cred(keyId: string): Credential {
  return {
    type: 'API_KEY',
    userId: 'usr_1',
    keyId,
    environment: 'test',
    world: 'test',
    scopes: ['websocket'],
    tier: 'FREE',
    expiresAt: null,
  };
}

async function waitFor(ok: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const t0 = Date.now();
  while (!(await ok())) {
    if (Date.now() - t0 > ms) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const settle = () => new Promise((r) => setTimeout(r, 100));

/** Runs both sweeps after the grace, and lets their asynchronous cancels finish. */
async function pastGrace(...all: Instance[]): Promise<void> {
  clock.advance(GRACE_MS + 1);
  for (const i of all) i.cod.sweep();
  await settle();
}

beforeAll(async () => {
  server = await RedisServer.start();
});
afterAll(async () => {
  for (const c of connections) c.onApplicationShutdown();
  await server.stop();
});

describe('cancel-on-disconnect over two instances on one Redis', () => {
  let a: Instance;
  let b: Instance;
  const key = `key_cluster${++seq}`;
  beforeAll(async () => {
    [a, b] = await instances(2, [key]);
  });
  afterAll(() => {
    for (const i of [a, b]) {
      i.cod.onModuleDestroy();
      i.counter.onModuleDestroy();
      i.signals.onApplicationShutdown();
    }
  });

  it('at boot one instance arms the key (claimed once), and the other hears when', async () => {
    const sa = await a.cod.status(cred(key));
    const sb = await b.cod.status(cred(key));
    expect(sa.cancels_at).not.toBeNull();
    await waitFor(async () => (await b.cod.status(cred(key))).cancels_at !== null);
    expect((await b.cod.status(cred(key))).cancels_at).toBe(sa.cancels_at);
    expect(sb.connections).toBe(0);
  });

  it('a connection on B disarms it on A too; the total counts both instances', async () => {
    b.cod.connected(cred(key));
    await waitFor(async () => (await a.cod.status(cred(key))).cancels_at === null);
    a.cod.connected(cred(key));
    await waitFor(async () => (await b.cod.status(cred(key))).connections === 2);
    expect((await a.cod.status(cred(key))).connections).toBe(2);
    await pastGrace(a, b);
    expect([...a.cancels, ...b.cancels]).toEqual([]);
  });

  it("A's connection closes: not armed, B still holds the key", async () => {
    a.cod.disconnected(cred(key));
    await waitFor(async () => (await a.cod.status(cred(key))).connections === 1);
    await settle();
    expect((await a.cod.status(cred(key))).cancels_at).toBeNull();
    expect((await b.cod.status(cred(key))).cancels_at).toBeNull();
    await pastGrace(a, b);
    expect([...a.cancels, ...b.cancels]).toEqual([]);
  });

  it("B's closes: armed by B alone, A reports the same deadline, the cancel runs once", async () => {
    const armedAt = clock.now();
    b.cod.disconnected(cred(key));
    await waitFor(async () => (await a.cod.status(cred(key))).cancels_at !== null);
    const expected = new Date(armedAt + GRACE_MS).toISOString();
    expect(await a.cod.status(cred(key))).toMatchObject({ connections: 0, cancels_at: expected });
    expect(await b.cod.status(cred(key))).toMatchObject({ connections: 0, cancels_at: expected });
    await pastGrace(a, b);
    expect(b.cancels).toEqual([key]);
    expect(a.cancels).toEqual([]);
    expect((await a.cod.status(cred(key))).cancels_at).toBeNull();
  });

  it('armed on B, a connection returning on A in the grace keeps the orders', async () => {
    b.cod.connected(cred(key));
    await waitFor(async () => (await a.cod.status(cred(key))).connections === 1);
    b.cod.disconnected(cred(key));
    await waitFor(async () => (await a.cod.status(cred(key))).cancels_at !== null);
    a.cod.connected(cred(key));
    await waitFor(async () => (await b.cod.status(cred(key))).cancels_at === null);
    await pastGrace(a, b);
    expect(b.cancels).toEqual([key]); // the earlier one only
    a.cod.disconnected(cred(key));
    await waitFor(async () => (await b.cod.status(cred(key))).cancels_at !== null);
    await pastGrace(a, b);
    expect(a.cancels).toEqual([key]);
    expect(b.cancels).toEqual([key]);
  });
});

describe('the grace changed while armed', () => {
  it('counts from the change, however late the reload of the setting reads it', async () => {
    const key = `key_cluster${++seq}`;
    const [a, b] = await instances(2, [key]);
    a.cod.connected(cred(key));
    await waitFor(async () => (await b.cod.status(cred(key))).cancels_at === null);
    a.cod.disconnected(cred(key));
    await waitFor(async () => (await b.cod.status(cred(key))).cancels_at !== null);
    // A armed it; its reload of the new setting (cod.settings) reads slowly, as on a loaded
    // PostgreSQL: the service clock moves on before the read answers.
    let release!: () => void;
    a.reads.gate = new Promise((r) => (release = r));
    const changedAt = clock.now();
    const on = await a.cod.enable(cred(key), 3);
    const expected = new Date(changedAt + 3000).toISOString();
    expect(on.cancels_at).toBe(expected);
    clock.advance(2000);
    release();
    a.reads.gate = null;
    await settle();
    expect((await a.cod.status(cred(key))).cancels_at).toBe(expected);
    // B hears the new deadline from A, which runs the cancel.
    await waitFor(async () => (await b.cod.status(cred(key))).cancels_at === expected);
    clock.advance(1001);
    for (const i of [a, b]) i.cod.sweep();
    await settle();
    expect(a.cancels).toEqual([key]);
    expect(b.cancels).toEqual([]);
    for (const i of [a, b]) {
      i.cod.onModuleDestroy();
      i.counter.onModuleDestroy();
      i.signals.onApplicationShutdown();
    }
  });
});

describe('an instance that dies', () => {
  it('is swept once its liveness expires: its connections stop counting, the key is armed', async () => {
    const key = `key_cluster${++seq}`;
    const [a, b] = await instances(2, [key]);
    a.cod.connected(cred(key));
    await waitFor(async () => (await b.cod.status(cred(key))).connections === 1);
    // Killed: no close, no decrement; its liveness stops being refreshed.
    a.counter.onModuleDestroy();
    a.cod.onModuleDestroy();
    a.signals.onApplicationShutdown();
    await b.counter.refresh();
    expect((await b.cod.status(cred(key))).connections).toBe(1); // not yet expired
    await new Promise((r) => setTimeout(r, TTL_MS + 100));
    await b.counter.refresh();
    const s = await b.cod.status(cred(key));
    expect(s.connections).toBe(0);
    expect(s.cancels_at).toBe(new Date(clock.now() + GRACE_MS).toISOString());
    await pastGrace(b);
    expect(b.cancels).toEqual([key]);
    expect(a.cancels).toEqual([]);
    b.cod.onModuleDestroy();
    b.counter.onModuleDestroy();
    b.signals.onApplicationShutdown();
  });
});

describe('an instance that stops cleanly', () => {
  it('leaves the key to another instance, which arms it at its next refresh', async () => {
    const key = `key_cluster${++seq}`;
    const [a, b] = await instances(2, [key]);
    a.cod.connected(cred(key));
    await waitFor(async () => (await b.cod.status(cred(key))).connections === 1);
    // As RealtimeHub.onModuleDestroy: shuttingDown, then its connections close.
    a.cod.shuttingDown();
    a.cod.disconnected(cred(key));
    await settle();
    expect((await a.cod.status(cred(key))).cancels_at).toBeNull(); // A will not be there
    await b.counter.refresh();
    const s = await b.cod.status(cred(key));
    expect(s).toMatchObject({ connections: 0 });
    expect(s.cancels_at).toBe(new Date(clock.now() + GRACE_MS).toISOString());
    await pastGrace(a, b);
    expect(b.cancels).toEqual([key]);
    expect(a.cancels).toEqual([]);
    for (const i of [a, b]) {
      i.cod.onModuleDestroy();
      i.counter.onModuleDestroy();
      i.signals.onApplicationShutdown();
    }
  });
});

describe('Redis down (fail-open)', () => {
  it("this instance's own count decides; nothing throws; counts are shared again after", async () => {
    const key = `key_cluster${++seq}`;
    const [a, b] = await instances(2, [key]);
    b.cod.connected(cred(key));
    a.cod.connected(cred(key));
    await waitFor(async () => (await a.cod.status(cred(key))).connections === 2);
    await server.stop();
    await waitFor(() => a.counter['redis'].status !== 'ready');
    // A counts its own connection only, and arms when it closes (the safe direction).
    expect((await a.cod.status(cred(key))).connections).toBe(1);
    a.cod.disconnected(cred(key));
    await waitFor(async () => (await a.cod.status(cred(key))).cancels_at !== null);
    expect((await a.cod.status(cred(key))).connections).toBe(0);
    await expect(a.counter.refresh()).resolves.toBeUndefined();
    await pastGrace(a);
    expect(a.cancels).toEqual([key]);
    // A fresh (empty) Redis: each instance writes its counts again.
    await server.start();
    await waitFor(() => b.counter['redis'].status === 'ready', 5000);
    await b.counter.refresh();
    expect((await a.cod.status(cred(key))).connections).toBe(1);
    for (const i of [a, b]) {
      i.cod.onModuleDestroy();
      i.counter.onModuleDestroy();
      i.signals.onApplicationShutdown();
    }
  });
});
