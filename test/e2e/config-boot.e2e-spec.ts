import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http } from '../support/harness.js';
import { ensureBuilt, runToExit, startService } from '../support/process.js';

const BUILD_TIMEOUT = 180_000;
const PROCESS_TIMEOUT = 60_000; // a start is ~1 s, but the machine may be busy

/** The built service, as `npm start` runs it: node dist/main.js. */
describe('boot of the built service', () => {
  beforeAll(async () => {
    await ensureBuilt();
  }, BUILD_TIMEOUT);

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ APP_ENV: 'prod' }, 'APP_ENV'],
    [{ WEBHOOK_SECRET_GRACE_HOURS: 'a day' }, 'WEBHOOK_SECRET_GRACE_HOURS'],
    [{ APP_ENV: 'production', SANDBOX_CLOCK_CONTROL: 'true' }, 'SANDBOX_CLOCK_CONTROL'],
    [{ FIRST_PARTY_ORIGINS: 'app.example' }, 'FIRST_PARTY_ORIGINS'],
    [{ HOST: 'not..a..host' }, 'HOST'],
  ])(
    'a bad value stops the boot with a message naming the variable (%j)',
    async (env, variable) => {
      const { code, signal, stderr, stdout } = await runToExit({ env });
      expect(signal).toBeNull();
      expect(code).not.toBe(0);
      expect(code).toBe(78); // EX_CONFIG
      expect(stderr).toContain(`Invalid configuration: ${variable} `);
      expect(stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
      expect(stdout).not.toContain('listening');
    },
    PROCESS_TIMEOUT,
  );

  it(
    'a DATA_DIR that cannot be a directory, or that holds a broken secrets.json, stops the boot naming DATA_DIR',
    async () => {
      const base = mkdtempSync(join(tmpdir(), 'svc-boot-bad-'));
      try {
        const file = join(base, 'a-file');
        writeFileSync(file, 'x');
        const broken = join(base, 'broken');
        mkdirSync(broken);
        writeFileSync(join(broken, 'secrets.json'), '{not json');
        for (const dataDir of [join(file, 'data'), broken]) {
          const { code, signal, stderr, stdout } = await runToExit({ dataDir });
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

  it(
    'a DATA_DIR a newer version migrated (a migration this code does not know) stops the boot naming it',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-boot-newer-'));
      try {
        const first = await startService({ dataDir });
        await first.stop();
        const db = new Database(join(dataDir, 'paper.sqlite'));
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

  describe('first start on an empty data directory, then a second start', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-boot-'));
    afterAll(() => {
      rmSync(dataDir, { recursive: true, force: true });
    });

    it(
      'generates secrets.json (0600) once, reuses it, and serves the seeded markets without a key',
      async () => {
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
      },
      PROCESS_TIMEOUT,
    );
  });

  it(
    'with no DATA_DIR it keeps its data in ./data under the working directory',
    async () => {
      const cwd = mkdtempSync(join(tmpdir(), 'svc-cwd-'));
      try {
        const svc = await startService({ dataDir: null, cwd });
        try {
          expect(statSync(join(cwd, 'data', 'secrets.json')).isFile()).toBe(true);
          for (const db of ['platform', 'live', 'paper']) {
            expect(statSync(join(cwd, 'data', `${db}.sqlite`)).isFile()).toBe(true);
          }
          expect((await http(`${svc.api}/markets`)).status).toBe(200);
        } finally {
          await svc.stop();
        }
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    },
    PROCESS_TIMEOUT,
  );
});
