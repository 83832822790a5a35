import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startServices, type Services } from '../../../test/support/services.js';
import { freePort } from '../../../test/support/process.js';
import { ConfigError } from '../../config/app-config.js';
import { lockDatabase } from './database-lock.js';

let services: Services;

beforeAll(async () => {
  services = await startServices();
}, 120_000);

afterAll(async () => {
  await services.stop();
}, 60_000);

async function refusal(p: Promise<unknown>): Promise<ConfigError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return err as ConfigError;
}

describe('lockDatabase: one service instance per DATABASE_URL', () => {
  it('a second instance is refused naming DATABASE_URL; once the first releases, the next one starts', async () => {
    const first = await lockDatabase(services.databaseUrl);
    const started = Date.now();
    const err = await refusal(lockDatabase(services.databaseUrl, 300));
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(err.variable).toBe('DATABASE_URL');
    expect(err.message).toContain('in use by another running instance');
    // The refused attempt left no session behind; the holder's is there, named.
    const admin = new pg.Client({ connectionString: services.databaseUrl });
    await admin.connect();
    try {
      const held = await admin.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'svc-instance'`,
      );
      expect(Number(held.rows[0].n)).toBe(1);
      await first.release();
      const next = await lockDatabase(services.databaseUrl);
      await next.release();
    } finally {
      await admin.end();
    }
  }, 30_000);

  it('a holder killed with its session (kill -9 as PostgreSQL sees it) frees the database at once', async () => {
    const first = await lockDatabase(services.databaseUrl);
    const admin = new pg.Client({ connectionString: services.databaseUrl });
    await admin.connect();
    try {
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'svc-instance'`,
      );
      const next = await lockDatabase(services.databaseUrl);
      await next.release();
    } finally {
      await admin.end();
      await first.release();
    }
  }, 30_000);

  it('a database that cannot be reached is a configuration error naming DATABASE_URL', async () => {
    const url = `postgres://svc:x@127.0.0.1:${await freePort()}/nowhere`;
    const err = await refusal(lockDatabase(url, 0));
    expect(err.variable).toBe('DATABASE_URL');
    expect(err.message).toContain('instance lock could not be taken');
    expect(err.message).not.toContain('svc:x');
  }, 30_000);
});
