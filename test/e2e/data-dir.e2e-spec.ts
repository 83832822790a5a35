import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http } from '../support/harness.js';
import { ensureBuilt, runToExit, startService } from '../support/process.js';

const BUILD_TIMEOUT = 180_000;
const PROCESS_TIMEOUT = 60_000;

/**
 * One DATA_DIR, one service: a second process on it kept its own engine over the same databases,
 * each reserved the same money, and after a restart an account read available_cents -980000.
 */
describe('DATA_DIR belongs to one running service', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-data-dir-'));
  beforeAll(async () => {
    await ensureBuilt();
  }, BUILD_TIMEOUT);
  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(
    'a second process on it stops at once (exit 78 naming DATA_DIR); after the first stops, one starts',
    async () => {
      const first = await startService({ dataDir });
      try {
        const before = readFileSync(join(dataDir, 'secrets.json'), 'utf8');
        // What it created is the service user's alone: password and key hashes, ledgers.
        for (const db of ['platform.sqlite', 'live.sqlite', 'paper.sqlite']) {
          expect([db, statSync(join(dataDir, db)).mode & 0o777]).toEqual([db, 0o600]);
        }
        const second = await runToExit({ dataDir });
        expect(second.code).toBe(78);
        expect(second.stderr).toContain(
          'Invalid configuration: DATA_DIR is in use by another running instance of the service',
        );
        expect(second.stderr).not.toMatch(/\n\s+at /);
        expect(second.stdout).not.toContain('listening');
        // It touched nothing: the first one serves on, its secrets as they were.
        expect((await http(`${first.api}/health/ready`)).status).toBe(200);
        expect(readFileSync(join(dataDir, 'secrets.json'), 'utf8')).toBe(before);
      } finally {
        expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      }
      // Stopped (or killed: the lock goes with the process), the directory can be used again.
      const next = await startService({ dataDir });
      expect(await next.stop('SIGKILL')).toMatchObject({ signal: 'SIGKILL' });
      const after = await startService({ dataDir });
      expect((await http(`${after.api}/health/ready`)).status).toBe(200);
      expect(await after.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    },
    PROCESS_TIMEOUT,
  );
});
