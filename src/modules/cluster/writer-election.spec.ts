import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformFileSync } from '@swc/core';
import pg from 'pg';
import { startPlatformServices, type PlatformServices } from '../../../test/support/services.js';
import { ROOT } from '../../../test/support/process.js';
import { FencedError } from './cluster-errors.js';
import { fence } from './fence.js';
import { WriterElection, type Role } from './writer-election.js';

/**
 * Writer election and fencing on a real PostgreSQL 15 (one throwaway cluster for the file, the
 * platform schema migrated as the service migrates it).
 */
let services: PlatformServices;
let admin: pg.Client;
let childDir: string;
const elections: WriterElection[] = [];
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  services = await startPlatformServices();
  admin = services.admin;
  await admin.query('CREATE TABLE public.fenced_writes (world text, note text)');
  childDir = electionChild();
}, 120_000);

afterEach(async () => {
  await Promise.all(elections.splice(0).map((e) => e.stop()));
});

afterAll(async () => {
  if (childDir !== undefined) rmSync(childDir, { recursive: true, force: true });
  await services?.stop();
}, 60_000);

/**
 * A directory from which a plain `node` process runs this module's election: its sources
 * compiled by SWC (as Jest compiles them), the repository's node_modules, and holder.js, which
 * campaigns for a world and prints HOLDING <epoch> once elected.
 */
function electionChild(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-election-child-'));
  // Laid out as in src/, so that imports between folders resolve (lock-session's pg-driver).
  const cluster = join(dir, 'modules', 'cluster');
  mkdirSync(cluster, { recursive: true });
  mkdirSync(join(dir, 'common', 'sql'), { recursive: true });
  for (const f of [
    'writer-election',
    'lease',
    'lock-key',
    'lock-session',
    '../../common/sql/pg-driver',
  ]) {
    const src = fileURLToPath(new URL(`./${f}.ts`, import.meta.url));
    const out = transformFileSync(src, {
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'es6' },
    });
    writeFileSync(join(cluster, `${f}.js`), out.code);
  }
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(
    join(dir, 'holder.js'),
    `import { WriterElection } from './modules/cluster/writer-election.js';
const [url, world] = process.argv.slice(2);
const quiet = { log() {}, warn() {}, error() {} };
const e = new WriterElection({ databaseUrl: url, instanceId: 'child-' + process.pid, retryMs: 200, log: quiet });
e.onRole(world, (r) => { if (r.writer) console.log('HOLDING ' + r.epoch); });
e.campaign(world);
e.start();
setInterval(() => {}, 1000);
`,
  );
  return dir;
}

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

  it('fails over within 5 s when the writer process is killed with SIGKILL, each time with a higher epoch', async () => {
    const world = 'wld_sigkill';
    const b = election('b');
    b.start();
    for (let round = 0; round < 3; round++) {
      await b.resign(world);
      // A writer in a process of its own: this module's WriterElection, elected for the world.
      const holder = spawn(
        process.execPath,
        [join(childDir, 'holder.js'), services.databaseUrl, world],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      const held = await new Promise<number>((resolve) =>
        holder.stdout!.on('data', (c: Buffer) => {
          const m = /HOLDING (\d+)/.exec(c.toString());
          if (m !== null) resolve(Number(m[1]));
        }),
      );
      expect(await storedEpoch(world)).toBe(held);
      b.campaign(world);
      await b.tick();
      expect(b.isWriter(world)).toBe(false);

      const gone = new Promise((r) => holder.once('exit', r));
      const killedAt = Date.now();
      holder.kill('SIGKILL');
      await gone;
      await until('b to take over', () => b.isWriter(world));
      expect(Date.now() - killedAt).toBeLessThan(5000);
      expect(b.epoch(world)).toBe(held + 1);
      expect(await storedEpoch(world)).toBe(held + 1);
    }
  }, 60_000);

  it('nextRound settles after a round that includes a world campaigned for during the round in progress', async () => {
    // Timer rounds a second apart: the worlds below are elected by nextRound's round, not one.
    const e = new WriterElection({
      databaseUrl: services.databaseUrl,
      instanceId: 'rounds',
      retryMs: 1000,
      log: quiet,
    });
    elections.push(e);
    e.campaign('test');
    e.start();
    const inProgress = e.tick();
    const worlds = Array.from({ length: 20 }, (_, i) => `wld_round${i}`);
    for (const w of worlds) e.campaign(w);
    await Promise.all(worlds.map(() => e.nextRound()));
    await inProgress;
    expect(worlds.filter((w) => !e.isWriter(w))).toEqual([]);
    expect(e.isWriter('test')).toBe(true);
  });

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
