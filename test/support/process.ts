import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testScryptCost } from './scrypt-cost.js';
import { assertNotSqlitePassOnly } from './pass-guard.js';

/** The repository root (this file sits in test/support/). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MAIN = join(ROOT, 'dist', 'main.js');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function newestSourceMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSourceMtime(p));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
      newest = Math.max(newest, statSync(p).mtimeMs);
    }
  }
  return newest;
}

function isFresh(): boolean {
  return existsSync(MAIN) && statSync(MAIN).mtimeMs >= newestSourceMtime(join(ROOT, 'src'));
}

function run(cmd: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    p.stdout.on('data', (c: Buffer) => (output += c.toString()));
    p.stderr.on('data', (c: Buffer) => (output += c.toString()));
    p.on('close', (code) => resolve({ code, output }));
  });
}

/**
 * Makes sure dist/ holds a build of the current sources. The test command builds before Jest, so
 * this is a no-op there; when Jest runs alone it compiles once (test files running in parallel
 * share one build through a lock directory). Type errors elsewhere do not stop tsc from emitting,
 * so only a missing dist/main.js is fatal.
 */
export async function ensureBuilt(): Promise<void> {
  if (isFresh()) return;
  const tag = createHash('sha256').update(ROOT).digest('hex').slice(0, 12);
  const lock = join(tmpdir(), `svc-e2e-build-${tag}.lock`);
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Someone else is building; a lock older than 3 minutes is left over from a crash.
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 180_000)
        rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for the build lock ${lock}`);
      // Not done until the lock is free: tsc writes dist/main.js before the files it imports, so
      // a fresh main.js alone let a waiting test start a half-written build.
      await sleep(250);
    }
  }
  try {
    if (isFresh()) return;
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const { output } = await run(process.execPath, [tsc, '-p', 'tsconfig.build.json']);
    if (!existsSync(MAIN)) throw new Error(`build produced no dist/main.js:\n${output}`);
    // The build is incremental (tsBuildInfoFile): a main.js whose output did not change is not
    // written again, so it stayed older than the sources and every later call built again.
    const now = new Date();
    utimesSync(MAIN, now, now);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** A TCP port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = addr !== null && typeof addr === 'object' ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  proc: ChildProcess;
  port: number;
  baseUrl: string;
  api: string;
  dataDir: string;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<Exit>;
  /** Sends the signal and waits for the exit (SIGKILL after timeoutMs). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit>;
}

export interface SpawnOptions {
  /**
   * Extra environment; the child sees only PATH plus these (and DATA_DIR, HOST, PORT, and
   * PASSWORD_SCRYPT_COST=1024 unless set here or APP_ENV is production: see scrypt-cost.ts).
   */
  env?: Record<string, string>;
  /** Omitted: a fresh temporary directory. Set to null to leave DATA_DIR unset. */
  dataDir?: string | null;
  cwd?: string;
  port?: number;
  /**
   * A shell command line run with `sh -c`, as npm runs a package script, instead of
   * `node dist/main.js`. The shell leads a new process group, so a test can end everything it
   * started (see killGroup).
   */
  script?: string;
  /**
   * In the PostgreSQL pass (TEST_DATABASE=postgres), runs the process on the harness's
   * PostgreSQL + Redis as startApp does: DATABASE_URL of this DATA_DIR's database (made on first
   * use, the same one again on a restart on the same DATA_DIR) and the run's REDIS_URL, unless
   * `env` sets DATABASE_URL itself. Without it a process stays on SQLite files in both passes.
   * Nothing changes in the SQLite pass.
   */
  testDatabase?: boolean;
}

type TestDatabaseEnv = (dataDir: string) => Promise<Record<string, string>>;
let testDatabaseEnvOf: TestDatabaseEnv | null = null;

/**
 * @internal Called by test-database.ts when it loads: how a process reaches the PostgreSQL pass's
 * database and Redis. Handed over rather than imported, since test-database.ts registers Jest
 * hooks and this module also serves code that runs outside Jest (bench/).
 */
export function provideTestDatabaseEnv(env: TestDatabaseEnv): void {
  testDatabaseEnvOf = env;
}

/** DATABASE_URL and REDIS_URL of {@link SpawnOptions.testDatabase} in the PostgreSQL pass. */
async function testDatabaseEnv(
  opts: SpawnOptions,
  dataDir: string | null,
): Promise<Record<string, string>> {
  if (opts.testDatabase === true) {
    assertNotSqlitePassOnly('it starts a process with testDatabase (on the pass database)');
  }
  if (
    opts.testDatabase !== true ||
    process.env.TEST_DATABASE !== 'postgres' ||
    dataDir === null ||
    opts.env?.DATABASE_URL !== undefined
  ) {
    return {};
  }
  if (testDatabaseEnvOf === null) {
    throw new Error('testDatabase: import test/support/test-database.ts in the test file');
  }
  return testDatabaseEnvOf(dataDir);
}

/** Starts `node dist/main.js` as the README's start command does (without the build step). */
export async function spawnService(opts: SpawnOptions = {}): Promise<ServiceProcess> {
  await ensureBuilt();
  const port = opts.port ?? (await freePort());
  const dataDir =
    opts.dataDir === undefined ? mkdtempSync(join(tmpdir(), 'svc-proc-')) : opts.dataDir;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'info',
    ...(dataDir !== null ? { DATA_DIR: dataDir } : {}),
    ...testScryptCost(opts.env),
    ...(await testDatabaseEnv(opts, dataDir)),
    ...opts.env,
  };
  const proc =
    opts.script === undefined
      ? spawn(process.execPath, [MAIN], {
          cwd: opts.cwd ?? ROOT,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      : spawn('/bin/sh', ['-c', opts.script], {
          cwd: opts.cwd ?? ROOT,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true,
        });
  let out = '';
  let err = '';
  proc.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<Exit>((resolve) =>
    // 'close' comes after the output streams have ended, so stdout() is complete by then.
    proc.on('close', (code, signal) => resolve({ code, signal })),
  );
  const host = env.HOST;
  const baseUrl = `http://${host}:${env.PORT}`;
  return {
    proc,
    port: Number(env.PORT),
    baseUrl,
    api: `${baseUrl}/api/v1`,
    dataDir: dataDir ?? join(opts.cwd ?? ROOT, 'data'),
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 10_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return exited;
      proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/** SIGKILLs the process group a `script` service leads (whatever its shell left running). */
export function killGroup(svc: ServiceProcess): void {
  if (svc.proc.pid === undefined) return;
  try {
    process.kill(-svc.proc.pid, 'SIGKILL');
  } catch {
    // the group is gone already
  }
}

/**
 * Polls GET /api/v1/health/ready until it answers 200; fails fast if the process exits. A first
 * start takes a second or two, but suites start several at once on a busy 2-core machine.
 */
export async function waitReady(svc: ServiceProcess, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void svc.exited.then(() => (exited = true));
  while (Date.now() < deadline) {
    if (exited) {
      throw new Error(`service exited before ready:\n${svc.stderr()}\n${svc.stdout()}`);
    }
    try {
      const res = await fetch(`${svc.api}/health/ready`);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`service not ready in ${timeoutMs} ms:\n${svc.stderr()}\n${svc.stdout()}`);
}

/** Starts the service and waits until it is ready. */
export async function startService(opts: SpawnOptions = {}): Promise<ServiceProcess> {
  const svc = await spawnService(opts);
  try {
    await waitReady(svc);
  } catch (e) {
    await svc.stop('SIGKILL');
    throw e;
  }
  return svc;
}

/** Runs `node dist/main.js` expecting it to stop by itself (e.g. on bad configuration). */
export async function runToExit(
  opts: SpawnOptions & { timeoutMs?: number } = {},
): Promise<Exit & { stdout: string; stderr: string }> {
  const svc = await spawnService(opts);
  const timer = setTimeout(() => svc.proc.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
  const exit = await svc.exited;
  clearTimeout(timer);
  if (opts.dataDir === undefined) rmSync(svc.dataDir, { recursive: true, force: true });
  return { ...exit, stdout: svc.stdout(), stderr: svc.stderr() };
}

/**
 * RACE_DIST=<another checkout>/dist: the instance-race spec's processes run that build instead of
 * this one (test/support/instance-race-child.js reads it), to see the rules fail on an older one.
 */
export function raceDist(): string | undefined {
  return process.env.RACE_DIST;
}
