import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { ROOT } from '../support/process.js';

/**
 * `npm run services` (scripts/services.js): a throwaway PostgreSQL cluster and redis-server,
 * their URLs printed, both stopped and their files removed on SIGTERM.
 */
describe('npm run services', () => {
  it('prints DATABASE_URL and REDIS_URL that answer, and SIGTERM stops both and removes the files', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'scripts', 'services.js')], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    try {
      const deadline = Date.now() + 90_000;
      while (!/REDIS_URL=.*\n/.test(out)) {
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`services did not come up: ${out}\n${err}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      const databaseUrl = /^DATABASE_URL=(postgres:\/\/\S+)$/m.exec(out)?.[1];
      const redisUrl = /^REDIS_URL=(redis:\/\/\S+)$/m.exec(out)?.[1];
      const dir = /files in (\S+)\)/.exec(err)?.[1];
      expect(databaseUrl).toMatch(/^postgres:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/sandbox$/);
      expect(redisUrl).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
      expect(dir !== undefined && existsSync(dir)).toBe(true);

      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      const row = await db.query('SELECT 1 AS one, current_database() AS name');
      expect(row.rows[0]).toEqual({ one: 1, name: 'sandbox' });
      await db.end();
      // The password is required: the cluster does not trust local connections.
      const wrong = new pg.Client({
        connectionString: databaseUrl!.replace(/:[^:@]+@/, ':wrong@'),
      });
      await expect(wrong.connect()).rejects.toThrow(/password authentication failed/);

      const redis = new Redis(redisUrl!, { maxRetriesPerRequest: 0, retryStrategy: () => null });
      expect(await redis.ping()).toBe('PONG');
      redis.disconnect();

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const pgPort = Number(new URL(databaseUrl!).port);
      const redisPort = Number(new URL(redisUrl!).port);
      expect(await listening(pgPort)).toBe(false);
      expect(await listening(redisPort)).toBe(false);
      expect(existsSync(dir!)).toBe(false);
    } finally {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    }
  }, 150_000);
});

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
