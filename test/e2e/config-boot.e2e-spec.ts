import { beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ManualClock } from '../../src/common/clock/clock.js';
import { ConfigError, loadConfig } from '../../src/config/app-config.js';
import { fillFromTemplate } from '../support/data-dir-template.js';
import { http, testScryptCost } from '../support/harness.js';
import {
  ROOT,
  ensureBuilt,
  freePort,
  killGroup,
  runToExit,
  spawnService,
  startService,
  type Exit,
  type ServiceProcess,
} from '../support/process.js';
import { openDatabaseOf } from '../support/test-database.js';

const BUILD_TIMEOUT = 180_000;
// A start is ~1 s, but the machine may be busy, and the tests below run several processes at once.
const PROCESS_TIMEOUT = 180_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once the process itself has exited (not its pipes: an orphan may hold those). */
function processExit(svc: ServiceProcess, timeoutMs: number): Promise<Exit | 'still running'> {
  const { proc } = svc;
  if (proc.exitCode !== null || proc.signalCode !== null) {
    return Promise.resolve({ code: proc.exitCode, signal: proc.signalCode });
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('still running'), timeoutMs);
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Asserts a boot that stopped with exit 78 and one line matching `line` on stderr. */
function expectListenRefused(run: Exit & { stdout: string; stderr: string }, line: RegExp): void {
  expect(run.signal).toBeNull();
  expect(run.code).toBe(78);
  expect(run.stderr).toMatch(line);
  expect(run.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
  expect(run.stdout).not.toContain('listening on');
}

/** The built service, as `npm start` runs it: node dist/main.js. */
describe('boot of the built service', () => {
  beforeAll(async () => {
    await ensureBuilt();
  }, BUILD_TIMEOUT);

  // What main.ts does with a refused configuration is one rule, checked on a real process below;
  // which values are refused, and how the message names them, is loadConfig's, checked here on the
  // environment such a process gets (the same function main.ts calls on process.env).
  const CHILD_ENV = {
    PATH: '/usr/bin:/bin',
    HOST: '127.0.0.1',
    PORT: '3000',
    LOG_LEVEL: 'info',
    DATA_DIR: join(tmpdir(), 'svc-boot-unused'),
  };

  /** The ConfigError message loadConfig gives for this environment (fails when none). */
  function refusal(env: Record<string, string>): string {
    try {
      loadConfig({ ...CHILD_ENV, ...testScryptCost(env), ...env });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).message;
    }
    throw new Error(`accepted: ${JSON.stringify(env)}`);
  }

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ APP_ENV: 'prod' }, 'APP_ENV'],
    [{ WEBHOOK_SECRET_GRACE_HOURS: 'a day' }, 'WEBHOOK_SECRET_GRACE_HOURS'],
    [{ APP_ENV: 'production', SANDBOX_CLOCK_CONTROL: 'true' }, 'SANDBOX_CLOCK_CONTROL'],
    [{ FIRST_PARTY_ORIGINS: 'app.example' }, 'FIRST_PARTY_ORIGINS'],
    [{ HOST: 'not..a..host' }, 'HOST'],
    [{ HOST: '256.1.1.1' }, 'HOST'],
    [{ DEVELOPER_TERMS_REQUIRED: 'maybe' }, 'DEVELOPER_TERMS_REQUIRED'],
    [{ WEBHOOK_SECRET_GRACE_HOURS: '100001' }, 'WEBHOOK_SECRET_GRACE_HOURS'],
    [{ FIRST_PARTY_ORIGINS: 'https://*.app.example' }, 'FIRST_PARTY_ORIGINS'],
    [{ SMTP_URL: 'smtp://' }, 'SMTP_URL'],
  ])('a bad value is refused with a one-line message naming the variable (%j)', (env, variable) => {
    const message = refusal(env);
    expect(message).toContain(`Invalid configuration: ${variable} `);
    expect(message).not.toContain('\n');
  });

  it.each(['10.0.0.0/33', '999.1.1.1', ':::', '::1/129'])(
    'TRUSTED_PROXIES holding %j is refused naming the variable and the entry',
    (entry) => {
      const message = refusal({ TRUSTED_PROXIES: `10.0.0.1,${entry}` });
      expect(message).toContain(`Invalid configuration: TRUSTED_PROXIES holds "${entry}"`);
      expect(message).not.toContain('\n');
    },
  );

  // Each of these is a process of its own (its own DATA_DIR and port): they run side by side.
  it.concurrent.each([
    [{ PORT: 'abc' }],
    [{ APP_ENV: 'production', SANDBOX_CLOCK_CONTROL: 'true' }],
  ])(
    'a refused configuration stops the boot: exit 78 (EX_CONFIG), its message alone on stderr (%j)',
    async (env) => {
      const { code, signal, stderr, stdout } = await runToExit({ env });
      expect(signal).toBeNull();
      expect(code).toBe(78); // EX_CONFIG
      expect(stderr).toBe(`${refusal(env)}\n`); // a message, not a stack trace
      expect(stdout).not.toContain('listening');
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent(
    'a port in use stops the boot with one line naming HOST and PORT, exit 78',
    async () => {
      const taken = createServer();
      const port = await freePort();
      await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
      try {
        expectListenRefused(
          await runToExit({ port }),
          new RegExp(
            `^Cannot listen on 127\\.0\\.0\\.1:${port} \\(HOST=127\\.0\\.0\\.1, PORT=${port}\\): the port is in use \\(EADDRINUSE\\)$`,
            'm',
          ),
        );
      } finally {
        await new Promise((resolve) => taken.close(resolve));
      }
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent.each([
    // .invalid never resolves (RFC 6761); without a name service the lookup fails another way.
    ['nonexistent.invalid', /\((ENOTFOUND|EAI_AGAIN|EAI_FAIL|EAI_NONAME)\)$/m],
    // A documentation address (RFC 5737): not this machine's.
    ['192.0.2.1', /: the host is not an address of this machine \(EADDRNOTAVAIL\)$/m],
  ])(
    'HOST=%s that cannot be listened on stops the boot with one line naming HOST and PORT, exit 78',
    async (host, cause) => {
      const port = await freePort();
      const run = await runToExit({ port, env: { HOST: host } });
      expectListenRefused(run, cause);
      expect(run.stderr).toContain(
        `Cannot listen on ${host}:${port} (HOST=${host}, PORT=${port}): `,
      );
    },
    PROCESS_TIMEOUT,
  );

  /**
   * One process serves the two cases that only read it (PORT=0, and no DATA_DIR, in a working
   * directory of its own): a boot less. Whichever of them finishes last stops it, and sees it exit 0.
   */
  let shared: Promise<{ svc: ServiceProcess; port: number | null; cwd: string }> | undefined;
  let sharedUsers = 2;
  const sharedBoot = () =>
    (shared ??= (async () => {
      const cwd = mkdtempSync(join(tmpdir(), 'svc-cwd-'));
      const svc = await spawnService({ port: 0, dataDir: null, cwd });
      const deadline = Date.now() + 120_000;
      let match: RegExpMatchArray | null = null;
      while (match === null && Date.now() < deadline && svc.proc.exitCode === null) {
        match = svc.stdout().match(/"listening on http:\/\/127\.0\.0\.1:(\d+)\/api\/v1"/);
        if (match === null) await sleep(100);
      }
      return { svc, port: match === null ? null : Number(match[1]), cwd };
    })());
  const releaseShared = async () => {
    if (--sharedUsers > 0) return;
    const { svc, cwd } = await shared!;
    try {
      expect(await svc.stop()).toEqual({ code: 0, signal: null });
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  };

  it.concurrent(
    'with PORT=0 it logs the port it was given, not 0',
    async () => {
      try {
        const { svc, port } = await sharedBoot();
        expect(port).not.toBeNull();
        expect(port).toBeGreaterThan(0);
        expect(svc.stdout()).toContain(`"port":${port},`);
        expect((await http(`http://127.0.0.1:${port}/api/v1/health/ready`)).status).toBe(200);
      } finally {
        await releaseShared();
      }
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent(
    "npm start's command hands SIGTERM to the service: it ends in exec node, not a shell that keeps it",
    async () => {
      const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
      const start: string = pkg.scripts.start;
      expect(start).toMatch(/^node scripts\/build-if-stale\.js && /);
      expect(start).toContain('--max-semi-space-size=64 dist/main.js');
      // npm runs the script with sh -c; the build is already done, so `true` stands in for the
      // build step (keeping the list, which is what stops sh from handing its process over by
      // itself).
      const svc = await startService({
        script: start.replace(/^node scripts\/build-if-stale\.js && /, 'true && '),
        env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}` },
      });
      try {
        svc.proc.kill('SIGTERM'); // what npm forwards to its script on SIGTERM
        expect(await processExit(svc, 15_000)).toEqual({ code: 0, signal: null });
        expect(await accepts(svc.port)).toBe(false);
        expect(svc.stdout()).toContain('listening on');
      } finally {
        killGroup(svc);
        rmSync(svc.dataDir, { recursive: true, force: true });
      }
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent(
    'a DATA_DIR that cannot be a directory, or that holds a broken secrets.json, stops the boot naming DATA_DIR',
    async () => {
      const base = mkdtempSync(join(tmpdir(), 'svc-boot-bad-'));
      try {
        const file = join(base, 'a-file');
        writeFileSync(file, 'x');
        const broken = join(base, 'broken');
        mkdirSync(broken);
        writeFileSync(join(broken, 'secrets.json'), '{not json');
        const runs = await Promise.all(
          [join(file, 'data'), broken].map((dataDir) => runToExit({ dataDir })),
        );
        for (const { code, signal, stderr, stdout } of runs) {
          expect(signal).toBeNull();
          expect(code).toBe(78);
          expect(stderr).toContain('Invalid configuration: DATA_DIR ');
          expect(stderr).not.toMatch(/\n\s+at /);
          expect(stdout).not.toContain('listening');
        }
        // The broken file was left as it was: nothing overwrote the operator's secrets.
        expect(readFileSync(join(broken, 'secrets.json'), 'utf8')).toBe('{not json');
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent(
    'a DATA_DIR a newer version migrated (a migration this code does not know) stops the boot naming it',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-boot-newer-'));
      try {
        // A DATA_DIR this version has migrated: the run's template copy (its three databases
        // migrated and seeded by the app's own code, data-dir-template.ts), or a first start.
        const env = { ...CHILD_ENV, ...testScryptCost(), DATA_DIR: dataDir };
        const copied = await fillFromTemplate(
          dataDir,
          loadConfig(env),
          new ManualClock('2026-11-22T12:00:00.000Z'),
        );
        if (!copied) await (await startService({ dataDir })).stop();
        const db = openDatabaseOf(dataDir, 'paper');
        db.prepare('INSERT INTO migrations (timestamp, name) VALUES (?, ?)').run(
          1893456000000,
          'FromTheFuture1893456000000',
        );
        db.close();
        const { code, signal, stderr, stdout } = await runToExit({ dataDir });
        expect(signal).toBeNull();
        expect(code).toBe(78);
        expect(stderr).toContain('Invalid configuration: DATA_DIR ');
        expect(stderr).toContain('paper.sqlite');
        expect(stderr).toContain('FromTheFuture1893456000000');
        expect(stderr).not.toMatch(/\n\s+at /);
        expect(stdout).not.toContain('listening');
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent(
    'first start on an empty data directory, then a second start: generates secrets.json (0600) once, reuses it, and serves the seeded markets without a key',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-boot-'));
      try {
        const first = await startService({ dataDir });
        let secrets: string;
        try {
          const file = join(dataDir, 'secrets.json');
          expect(statSync(file).mode & 0o777).toBe(0o600);
          secrets = readFileSync(file, 'utf8');
          const parsed = JSON.parse(secrets);
          expect(parsed.jwtSecret.length).toBeGreaterThanOrEqual(32);
          expect(parsed.encryptionKey).toMatch(/^[0-9a-f]{64}$/);

          const markets = await http(`${first.api}/markets?limit=200`);
          expect(markets.status).toBe(200);
          expect(markets.body.data.length).toBeGreaterThanOrEqual(24);
          // Secrets never reach the logs.
          expect(first.stdout()).not.toContain(parsed.jwtSecret);
          expect(first.stdout()).not.toContain(parsed.encryptionKey);
        } finally {
          expect(await first.stop()).toEqual({ code: 0, signal: null });
        }

        const second = await startService({ dataDir });
        try {
          expect(readFileSync(join(dataDir, 'secrets.json'), 'utf8')).toBe(secrets);
          expect(statSync(join(dataDir, 'secrets.json')).mode & 0o777).toBe(0o600);
          expect((await http(`${second.api}/health/ready`)).status).toBe(200);
        } finally {
          expect(await second.stop()).toEqual({ code: 0, signal: null });
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent(
    'with no DATA_DIR it keeps its data in ./data under the working directory',
    async () => {
      try {
        const { port, cwd } = await sharedBoot();
        expect(port).not.toBeNull();
        expect(statSync(join(cwd, 'data', 'secrets.json')).isFile()).toBe(true);
        for (const db of ['platform', 'live', 'paper']) {
          expect(statSync(join(cwd, 'data', `${db}.sqlite`)).isFile()).toBe(true);
        }
        expect((await http(`http://127.0.0.1:${port}/api/v1/markets`)).status).toBe(200);
      } finally {
        await releaseShared();
      }
    },
    PROCESS_TIMEOUT,
  );
});
