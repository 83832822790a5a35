import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/common/clock/clock.js';
import { signedFetch } from '../support/access.js';
import { expectError, http, startApp, type Running } from '../support/harness.js';
import { createKey, sessionFor, type CreatedKey } from '../support/keys.js';
import { RedisServer } from '../support/redis-server.js';
import { copyDatabaseOf } from '../support/test-database.js';

/**
 * REDIS_URL: two app instances on one Redis (a real redis-server on a free port) share a key's
 * limit windows and the signature replay cache. Each instance has its own DATA_DIR (SQLite is
 * one process's), both copied from one directory (and on PostgreSQL its database), so the same
 * key exists in both.
 */
describe('two instances on one Redis', () => {
  let redis: RedisServer;
  let a: Running;
  let b: Running;
  let key: CreatedKey;
  const NOW = '2027-02-01T09:00:00.000Z';

  beforeAll(async () => {
    redis = await RedisServer.start();
    // One deployment: by default the key prefix is derived from DATA_DIR, which differs here.
    const env = {
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: 'svc-pair:',
      SANDBOX_FEED_INTERVAL_MS: '0',
    };
    const first = await startApp({ now: NOW, env });
    key = await createKey(first.api, await sessionFor(first.api), {
      scopes: ['markets:read'],
      signing_required: true,
    });
    const dir = first.dataDir;
    await first.close({ keepData: true });
    const copy = mkdtempSync(join(tmpdir(), 'svc-e2e-'));
    cpSync(dir, copy, { recursive: true });
    await copyDatabaseOf(dir, copy);
    // One clock for both, as two machines on NTP would share one time.
    const clock = new ManualClock(NOW);
    clock.advance(60_000);
    a = await startApp({ clock, env, dataDir: dir });
    b = await startApp({ clock, env, dataDir: copy });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis.stop();
  });

  let second = 0;
  /** GET /markets?limit=1 signed with a fresh timestamp (each signature is single-use). */
  const get = (svc: Running) =>
    signedFetch(svc, {
      key: key.key,
      secret: key.signing_secret!,
      path: '/api/v1/markets?limit=1',
      timestamp: svc.clock.nowSeconds() - 250 + second++,
    });

  it('reports Redis in readiness', async () => {
    for (const svc of [a, b]) {
      const ready = await http(`${svc.api}/health/ready`);
      expect(ready.status).toBe(200);
      expect(ready.body.checks.redis).toBe('ok');
    }
  });

  it("a key's per-minute limit (FREE: 60) holds across both instances", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await get(i % 2 === 0 ? a : b)).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    const refusedA = await get(a);
    expectError(refusedA, 429, 'RATE_LIMITED');
    expect(refusedA.body.error.details).toMatchObject({ limit_scope: 'key', limit: 60 });
    expectError(await get(b), 429, 'RATE_LIMITED');
    (a.clock as ManualClock).advance(60_000); // both instances share the clock
    expect((await get(b)).status).toBe(200);
  });

  it('a signature accepted by one instance is SIGNATURE_REPLAYED on the other', async () => {
    const ts = a.clock.nowSeconds();
    const send = (svc: Running) =>
      signedFetch(svc, {
        key: key.key,
        secret: key.signing_secret!,
        path: '/api/v1/markets?limit=2',
        timestamp: ts,
      });
    expect((await send(a)).status).toBe(200);
    expectError(await send(b), 401, 'SIGNATURE_REPLAYED');
    expectError(await send(a), 401, 'SIGNATURE_REPLAYED');
  });

  it('Redis down: requests are still served and readiness says so; back: shared again', async () => {
    (a.clock as ManualClock).advance(60_000);
    await redis.stop();
    for (let i = 0; i < 5; i++) expect((await get(a)).status).toBe(200);
    const ready = await http(`${b.api}/health/ready`);
    expect(ready.status).toBe(200);
    expect(ready.body.checks.redis).toBe('unavailable');
    await redis.start();
    await waitFor(async () => (await http(`${a.api}/health/ready`)).body.checks.redis === 'ok');
    await waitFor(async () => (await http(`${b.api}/health/ready`)).body.checks.redis === 'ok');
    (a.clock as ManualClock).advance(60_000);
    for (let i = 0; i < 60; i++) expect((await get(i % 2 === 0 ? b : a)).status).toBe(200);
    expectError(await get(a), 429, 'RATE_LIMITED');
  });
});

async function waitFor(cond: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
