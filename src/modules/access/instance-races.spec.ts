import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt, raceDist } from '../../../test/support/process.js';
import { startPlatformServices, type PlatformServices } from '../../../test/support/services.js';
import { SecretBox } from '../../common/crypto/secret-box.js';
import { newTotpSecret, totpAt } from '../../common/crypto/totp.js';
import {
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  PLATFORM_ENTITIES,
  PLATFORM_MIGRATIONS,
  openDatabase,
  postgresOptions,
  sqliteOptions,
} from '../../database/databases.js';
import { MFA_MAX_FAILED_ATTEMPTS } from '../security/mfa.service.js';

/**
 * The rules that must hold when several instances share one database, each instance in a process of
 * its own (test/support/instance-race-child.js, running the compiled service from dist/) with its
 * own connections, all firing at once: so nothing held in one process's memory (a serializer, a
 * cache) can be what keeps them. A process runs one instance at a time and, once that one has
 * closed, the next (loading the service once for several rounds, not once per instance). On PostgreSQL (`npm run services`) and, where two processes can
 * share it, on one SQLite file. RACE_DIST=<another checkout>/dist runs the instances on that build
 * instead (how these tests were seen to fail on the version before them).
 */
const CHILD = fileURLToPath(
  new URL('../../../test/support/instance-race-child.js', import.meta.url),
);
const NOW = Date.parse('2026-11-22T12:00:10.000Z');
const ENCRYPTION_KEY = '0'.repeat(64);

let services: PlatformServices;
let sqliteDir: string;
let users = 0;

beforeAll(async () => {
  // The instances run the compiled service (RACE_DIST: another build's, to try an older version).
  if (raceDist() === undefined) await ensureBuilt();
  // Three hosts (the most instances a race runs at once) load the service while PostgreSQL starts.
  for (let i = 0; i < 3; i++) idle.push(spawnHost());
  services = await startPlatformServices();
  for (const name of ['live', 'paper']) {
    const ds = await openDatabase(
      postgresOptions(name, services.databaseUrl, ENGINE_ENTITIES, ENGINE_MIGRATIONS),
    );
    await ds.destroy();
  }
  sqliteDir = mkdtempSync(join(tmpdir(), 'svc-instance-races-'));
  const lite = await openDatabase(
    sqliteOptions('platform', sqliteDir, PLATFORM_ENTITIES, PLATFORM_MIGRATIONS),
  );
  await lite.destroy();
}, 120_000);

afterAll(async () => {
  await Promise.all([...hosts].map((host) => endHost(host)));
  await services?.stop();
  if (sqliteDir !== undefined) rmSync(sqliteDir, { recursive: true, force: true });
}, 60_000);

type Engine = 'postgres' | 'sqlite';

/**
 * A process that runs instances one after another (test/support/instance-race-child.js): it loads
 * the service's classes once, each instance it runs opens connections and builds services of its
 * own. Racing instances always run in different hosts.
 */
interface Host {
  child: ChildProcess;
  /** Its next line of output; rejects once it has exited without one. */
  next(): Promise<string>;
  exited: Promise<void>;
}

const idle: Host[] = [];
const hosts = new Set<Host>();

function spawnHost(): Host {
  const child = spawn(process.execPath, [CHILD], { stdio: ['pipe', 'pipe', 'pipe'] });
  // A host that ended (killed, or its instance failed) may leave a closed pipe behind.
  child.stdin!.on('error', () => undefined);
  let partial = '';
  let err = '';
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  child.stdout!.on('data', (c: Buffer) => {
    const parts = (partial + c.toString()).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    wake();
  });
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  void exited.then(wake);
  const host: Host = {
    child,
    exited,
    next: () =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          if (lines.length > 0) return resolve(lines.shift()!);
          if (child.exitCode !== null || child.signalCode !== null) {
            return reject(
              new Error(`instance host exited (${child.exitCode ?? child.signalCode}): ${err}`),
            );
          }
          waiters.push(check);
        };
        check();
      }),
  };
  hosts.add(host);
  void exited.then(() => hosts.delete(host));
  return host;
}

/** Ends a host (its running instance with it). */
async function endHost(host: Host, kill = false): Promise<void> {
  if (kill) host.child.kill('SIGKILL');
  else host.child.stdin!.end();
  await host.exited;
}

interface Instance {
  child: ChildProcess;
  ready: Promise<void>;
  /** Fires its operations; their outcomes. */
  go(): Promise<string[]>;
  /** Lets a holding instance close, and frees its host. */
  exit(): Promise<void>;
}

/** One instance, in a host of its own, booted on the engine's shared database. */
function instance(engine: Engine, job: Record<string, unknown>): Instance {
  const db = engine === 'postgres' ? { url: services.databaseUrl } : { dir: sqliteDir };
  const host = idle.pop() ?? spawnHost();
  host.child.stdin!.write(`job ${JSON.stringify({ ...job, db, nowMs: job.nowMs ?? NOW })}\n`);
  let answered = false;
  return {
    child: host.child,
    ready: host.next().then((l) => {
      if (l !== 'ready') throw new Error(`instance said ${l}`);
    }),
    go: async () => {
      host.child.stdin!.write('go\n');
      const outcomes = JSON.parse(await host.next()) as string[];
      answered = true;
      return outcomes;
    },
    exit: async () => {
      // An instance that never answered (its host killed, or a peer that failed to boot) ends
      // with its host; one that did closes, and its host runs the next.
      if (!answered) return endHost(host, true);
      if (job.hold === true) host.child.stdin!.write('exit\n');
      const done = await host.next().catch(() => undefined);
      if (done === 'done') idle.push(host);
      else await endHost(host, true);
    },
  };
}

/** Starts the instances, lets them all go at once, and returns every outcome. */
async function race(engine: Engine, jobs: Record<string, unknown>[]): Promise<string[]> {
  const all = jobs.map((j) => instance(engine, j));
  try {
    await Promise.all(all.map((i) => i.ready));
    return (await Promise.all(all.map((i) => i.go()))).flat();
  } finally {
    await Promise.all(all.map((i) => i.exit()));
  }
}

const count = (outcomes: string[], what: string) => outcomes.filter((o) => o === what).length;

/** SQL on the engine's shared database, from outside the instances. */
async function sql<R>(engine: Engine, text: string, params: unknown[]): Promise<R[]> {
  if (engine === 'postgres') {
    const pgText = text.replace(
      /\?/g,
      (() => {
        let n = 0;
        return () => `$${++n}`;
      })(),
    );
    await services.admin.query('SET search_path = platform');
    return (await services.admin.query(pgText, params)).rows as R[];
  }
  const db = new Database(join(sqliteDir, 'platform.sqlite'));
  try {
    const stmt = db.prepare(text);
    return (stmt.reader ? stmt.all(...params) : (stmt.run(...params), [])) as R[];
  } finally {
    db.close();
  }
}

/** A new account, MFA enrolled when `secret` is given (its last used time step 0). */
async function account(engine: Engine, secret: string | null = null): Promise<string> {
  const id = `usr_race${++users}`;
  const sealed = secret === null ? null : new SecretBox(ENCRYPTION_KEY).seal(secret);
  await sql(
    engine,
    `INSERT INTO users (id, email, password_hash, created_at, username, mfa_secret_enc)
     VALUES (?, ?, 'x', ?, ?, ?)`,
    [id, `${id}@race.test`, new Date(NOW).toISOString(), id, sealed],
  );
  return id;
}

const ENGINES: Engine[] = ['postgres', 'sqlite'];

describe.each(ENGINES)('on %s, two instances at once', (engine) => {
  it('accept one TOTP code once: one step-up of all its copies', async () => {
    // Several accounts: an interleaving that lets a copy through twice need not come every time.
    for (let round = 0; round < 3; round++) {
      const secret = newTotpSecret();
      const userId = await account(engine, secret);
      const code = totpAt(secret, Math.floor(NOW / 30_000));
      const job = { op: 'mfa-step-up', userId, codes: new Array<string>(6).fill(code) };
      const outcomes = await race(engine, [job, job]);
      expect(count(outcomes, 'ok')).toBe(1);
      // The rest: the code already used (or the budget its copies spent, locked).
      expect(
        outcomes.filter((o) => o !== 'ok' && o !== 'MFA_CODE_INVALID' && o !== 'MFA_LOCKED'),
      ).toEqual([]);
    }
  }, 60_000);

  it('check no more than MFA_MAX_FAILED_ATTEMPTS codes of a burst of wrong ones, then lock', async () => {
    const secret = newTotpSecret();
    const userId = await account(engine, secret);
    const step = Math.floor(NOW / 30_000);
    const right = totpAt(secret, step);
    // Wrong codes: any six digits but the accepted steps' codes.
    const accepted = new Set([-1, 0, 1].map((d) => totpAt(secret, step + d)));
    const wrong: string[] = [];
    for (let n = 100_000; wrong.length < 20; n += 7919) {
      if (!accepted.has(String(n))) wrong.push(String(n));
    }
    const outcomes = await race(engine, [
      { op: 'mfa-step-up', userId, codes: wrong.slice(0, 10) },
      { op: 'mfa-step-up', userId, codes: wrong.slice(10) },
    ]);
    expect(count(outcomes, 'MFA_CODE_INVALID')).toBeLessThanOrEqual(MFA_MAX_FAILED_ATTEMPTS);
    expect(count(outcomes, 'MFA_CODE_INVALID') + count(outcomes, 'MFA_LOCKED')).toBe(20);
    // Locked: even the right code is refused now, on either instance.
    const after = await race(engine, [{ op: 'mfa-step-up', userId, codes: [right] }]);
    expect(after).toEqual(['MFA_LOCKED']);
  }, 60_000);

  it('never create more API keys than MAX_API_KEYS_PER_USER', async () => {
    // Three instances, each creating one after another (so a window where another instance's
    // creations interleave with its count and insert is likely, not certain, in one round).
    const cap = 10;
    for (let round = 0; round < 2; round++) {
      const userId = await account(engine);
      const job = { op: 'api-key-create', userId, count: 8, env: { MAX_API_KEYS_PER_USER: '10' } };
      const outcomes = await race(engine, [job, job, job]);
      const [{ n }] = await sql<{ n: number | string }>(
        engine,
        'SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ?',
        [userId],
      );
      expect(Number(n)).toBe(cap);
      expect(count(outcomes, 'ok')).toBe(cap);
      expect(count(outcomes, 'API_KEY_LIMIT_REACHED')).toBe(24 - cap);
    }
  }, 60_000);
});

describe('Idempotency-Key on two instances at once (PostgreSQL)', () => {
  it('runs one of the identical requests; the others are told it runs, or get its answer', async () => {
    for (let round = 0; round < 2; round++) {
      const userId = await account('postgres');
      const job = { op: 'idempotent-request', userId, key: `race-${round}`, count: 5 };
      const outcomes = await race('postgres', [job, job]);
      expect(count(outcomes, 'ran')).toBe(1);
      expect(
        outcomes.filter(
          (o) => o !== 'ran' && o !== 'IDEMPOTENCY_KEY_IN_USE' && o !== 'replayed 201',
        ),
      ).toEqual([]);
    }
  }, 60_000);

  it('an instance that starts leaves a running peer its claim; a killed one is settled', async () => {
    const userId = await account('postgres');
    const key = 'peer-claim';
    const a = instance('postgres', { op: 'idempotent-claim', userId, key, hold: true });
    try {
      await a.ready;
      expect(await a.go()).toEqual(['claimed']);
      // B boots (settling what it takes for orphans) while A still runs the request: a retry on B
      // must not run it a second time.
      const retried = await race('postgres', [{ op: 'idempotent-request', userId, key, count: 1 }]);
      expect(retried).toEqual(['IDEMPOTENCY_KEY_IN_USE']);
      const [row] = await sql<{ state: string }>(
        'postgres',
        'SELECT state FROM idempotency_records WHERE idem_key = ?',
        [key],
      );
      expect(row.state).toBe('RUNNING');
    } finally {
      a.child.kill('SIGKILL');
      await a.exit();
    }
    // A died without answering (and changed no engine): the next instance to look releases the
    // key, and the retry runs.
    const after = await race('postgres', [{ op: 'idempotent-request', userId, key, count: 1 }]);
    expect(after).toEqual(['ran']);
  }, 60_000);
});
