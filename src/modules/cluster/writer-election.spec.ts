import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { startServices, type Services } from '../../../test/support/services.js';
import { ROOT } from '../../../test/support/process.js';
import {
  PLATFORM_ENTITIES,
  PLATFORM_MIGRATIONS,
  openDatabase,
  postgresOptions,
} from '../../database/databases.js';
import { FencedError } from './cluster-errors.js';
import { fence } from './fence.js';
import { WRITER_NAMESPACE, lockKey } from './lock-key.js';
import { WriterElection, type Role } from './writer-election.js';

/**
 * Writer election and fencing on a real PostgreSQL 15 (one throwaway cluster for the file, the
 * platform schema migrated as the service migrates it).
 */
let services: Services;
let platform: DataSource;
let admin: pg.Client;
const elections: WriterElection[] = [];
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  services = await startServices();
  platform = await openDatabase(
    postgresOptions('platform', services.databaseUrl, PLATFORM_ENTITIES, PLATFORM_MIGRATIONS),
  );
  admin = new pg.Client({ connectionString: services.databaseUrl });
  await admin.connect();
  await admin.query('CREATE TABLE public.fenced_writes (world text, note text)');
}, 120_000);

afterEach(async () => {
  await Promise.all(elections.splice(0).map((e) => e.stop()));
});

afterAll(async () => {
  await admin?.end();
  await platform?.destroy();
  await services?.stop();
}, 60_000);

function election(instanceId: string): WriterElection {
  const e = new WriterElection({
    databaseUrl: services.databaseUrl,
    instanceId,
    retryMs: 200,
    log: quiet,
  });
  elections.push(e);
  return e;
}

async function until(what: string, ok: () => boolean, ms = 5000): Promise<number> {
  const start = Date.now();
  while (!ok()) {
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - start;
}

async function storedEpoch(world: string): Promise<number> {
  const r = await admin.query<{ epoch: string }>(
    'SELECT epoch FROM platform.cluster_writers WHERE world = $1',
    [world],
  );
  return Number(r.rows[0].epoch);
}

/** A fenced commit as the runtime makes it: the fence first, then the writes, one transaction. */
async function fencedWrite(world: string, epoch: number, note: string): Promise<void> {
  const c = new pg.Client({ connectionString: services.databaseUrl });
  await c.connect();
  try {
    await c.query('BEGIN');
    await fence(c, world, epoch);
    await c.query('INSERT INTO public.fenced_writes VALUES ($1, $2)', [world, note]);
    await c.query('COMMIT');
  } catch (err) {
    await c.query('ROLLBACK');
    throw err;
  } finally {
    await c.end();
  }
}

async function notes(world: string): Promise<string[]> {
  const r = await admin.query<{ note: string }>(
    'SELECT note FROM public.fenced_writes WHERE world = $1 ORDER BY note',
    [world],
  );
  return r.rows.map((x) => x.note);
}

describe('writer election', () => {
  it('makes exactly one of two campaigning instances the writer, with epoch 1 on a new world', async () => {
    const a = election('a');
    const b = election('b');
    for (const e of [a, b]) e.campaign('test');
    await Promise.all([a.tick(), b.tick()]);
    await Promise.all([a.tick(), b.tick()]);
    expect([a.isWriter('test'), b.isWriter('test')].filter(Boolean)).toHaveLength(1);
    const writer = a.isWriter('test') ? a : b;
    expect(writer.epoch('test')).toBe(1);
    expect(await storedEpoch('test')).toBe(1);
    // Another world is elected on its own: each has its lock and its epoch.
    a.campaign('live');
    await a.tick();
    expect(a.isWriter('live')).toBe(true);
  });

  it('steps the holder down at once when its session is terminated; the other takes over with a higher epoch', async () => {
    const a = election('a');
    a.campaign('wld_term');
    await a.tick();
    expect(a.isWriter('wld_term')).toBe(true);
    const first = a.epoch('wld_term')!;
    const b = election('b');
    const roles: Role[] = [];
    a.onRole('wld_term', (r) => roles.push(r));
    b.campaign('wld_term');
    b.start();
    await b.tick();
    expect(b.isWriter('wld_term')).toBe(false);

    const killedAt = Date.now();
    await admin.query('SELECT pg_terminate_backend($1)', [a.session.backendPid]);
    await until('a to step down', () => !a.isWriter('wld_term'), 2000);
    await until('b to take over', () => b.isWriter('wld_term'));
    expect(Date.now() - killedAt).toBeLessThan(5000);
    expect(b.epoch('wld_term')).toBe(first + 1);
    expect(roles).toEqual([
      { world: 'wld_term', writer: true, epoch: first },
      { world: 'wld_term', writer: false, epoch: first },
    ]);
    // a campaigns again on a fresh session, but b holds the lock now.
    a.start();
    await a.tick();
    expect(a.isWriter('wld_term')).toBe(false);
  });

  it('fails over within 5 s when the holding process is killed with SIGKILL, each time with a higher epoch', async () => {
    const world = 'wld_sigkill';
    const b = election('b');
    b.campaign(world);
    b.start();
    const [ns, key] = lockKey(WRITER_NAMESPACE, world);
    for (let round = 0; round < 3; round++) {
      await b.resign(world);
      // Another process takes the world as a writer does: the advisory lock, then the epoch.
      const holder = spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import pg from 'pg';
           const c = new pg.Client({ connectionString: process.argv[1] });
           await c.connect();
           const r = await c.query('SELECT pg_try_advisory_lock($1, $2) AS ok', [${ns}, ${key}]);
           await c.query("UPDATE platform.cluster_writers SET epoch = epoch + 1, holder = 'child' WHERE world = $1", [${JSON.stringify(world)}]);
           console.log(r.rows[0].ok ? 'HOLDING' : 'REFUSED');
           setInterval(() => undefined, 1000);`,
          services.databaseUrl,
        ],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const said = await new Promise<string>((resolve) =>
        holder.stdout!.once('data', (c: Buffer) => resolve(c.toString().trim())),
      );
      expect(said).toBe('HOLDING');
      const before = await storedEpoch(world).catch(() => 0);
      b.campaign(world);
      await b.tick();
      expect(b.isWriter(world)).toBe(false);

      const gone = new Promise((r) => holder.once('exit', r));
      const killedAt = Date.now();
      holder.kill('SIGKILL');
      await gone;
      await until('b to take over', () => b.isWriter(world));
      expect(Date.now() - killedAt).toBeLessThan(5000);
      expect(b.epoch(world)).toBeGreaterThan(before);
      expect(await storedEpoch(world)).toBe(b.epoch(world));
    }
  }, 60_000);

  it('gives a lease to one instance, and to the next one when the holder session dies', async () => {
    const a = election('a');
    const b = election('b');
    expect(await a.lease('worlds-sweep').tryHold()).toBe(true);
    expect(await b.lease('worlds-sweep').tryHold()).toBe(false);
    let ran = 0;
    expect(await b.lease('worlds-sweep').run(() => ran++)).toBe(false);
    expect(await a.lease('worlds-sweep').run(() => ran++)).toBe(true);
    expect(ran).toBe(1);
    // Another lease's name is another lock.
    expect(await b.lease('exports-sweep').tryHold()).toBe(true);
    await admin.query('SELECT pg_terminate_backend($1)', [a.session.backendPid]);
    await until('a to lose the lease', () => !a.lease('worlds-sweep').held, 2000);
    expect(await b.lease('worlds-sweep').tryHold()).toBe(true);
  });
});

describe('fencing', () => {
  it("refuses a deposed writer's commit and changes nothing; the new writer's commits land", async () => {
    const world = 'wld_fence';
    const a = election('a');
    a.campaign(world);
    await a.tick();
    const old = a.epoch(world)!;
    await fencedWrite(world, old, '1 by a');

    const b = election('b');
    b.campaign(world);
    // a's session drops, but a's engine has not heard yet: it still commits with its epoch.
    await admin.query('SELECT pg_terminate_backend($1)', [a.session.backendPid]);
    await until('b to take over', () => (void b.tick(), b.isWriter(world)));
    await expect(fencedWrite(world, old, '2 by a, deposed')).rejects.toBeInstanceOf(FencedError);
    await fencedWrite(world, b.epoch(world)!, '3 by b');
    expect(await notes(world)).toEqual(['1 by a', '3 by b']);
  });

  it('orders a commit in flight before the takeover: the new term waits for it, and no later one of the old term lands', async () => {
    const world = 'wld_inflight';
    const a = election('a');
    a.campaign(world);
    await a.tick();
    const old = a.epoch(world)!;
    // a's commit passed its fence and is still open when a's session is lost.
    const c = new pg.Client({ connectionString: services.databaseUrl });
    await c.connect();
    await c.query('BEGIN');
    await fence(c, world, old);
    await c.query('INSERT INTO public.fenced_writes VALUES ($1, $2)', [world, 'in flight']);
    await admin.query('SELECT pg_terminate_backend($1)', [a.session.backendPid]);

    const b = election('b');
    b.campaign(world);
    const takeover = b.tick();
    // b holds the lock, but its epoch increment waits on the fence's row lock.
    await new Promise((r) => setTimeout(r, 300));
    expect(b.isWriter(world)).toBe(false);
    await c.query('COMMIT');
    await takeover;
    await c.end();
    expect(b.isWriter(world)).toBe(true);
    expect(b.epoch(world)).toBe(old + 1);
    // The new writer restores from a database that holds the old term's last commit.
    expect(await notes(world)).toEqual(['in flight']);
    await expect(fencedWrite(world, old, 'late')).rejects.toBeInstanceOf(FencedError);
    expect(await notes(world)).toEqual(['in flight']);
  });
});
