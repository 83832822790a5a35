import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { expectContractError, http, startApp, type Running } from '../support/harness.js';
import { createKey, sessionFor } from '../support/keys.js';
import { openDatabaseOf, testDatabaseIsPostgres } from '../support/test-database.js';

/** The PostgreSQL pass runs on PostgreSQL + Redis: readiness checks Redis too. */
const REDIS_CHECK = testDatabaseIsPostgres() ? { redis: 'ok' } : {};

describe('health', () => {
  let svc: Running;
  beforeAll(async () => {
    // The paper feed stopped: a tick would commit on the paper engine and make it unavailable as
    // soon as its database is gone, before the readiness check this file makes.
    svc = await startApp({ env: { SANDBOX_FEED_INTERVAL_MS: '0' } });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('GET /api/v1/health is liveness: 200 {status: ok}', async () => {
    const res = await http(`${svc.api}/health`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers.get('svc-api-version')).toBe('v1');
  });

  it('GET /api/v1/health/ready checks the three databases', async () => {
    const res = await http(`${svc.api}/health/ready`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ready',
      checks: {
        platform: 'ok',
        live: 'ok',
        paper: 'ok',
        live_engine: 'ok',
        paper_engine: 'ok',
        ...REDIS_CHECK,
      },
    });
  });

  it('needs no credential, and a bogus one does not change the answer', async () => {
    const bogus: Record<string, string>[] = [
      { 'x-api-key': 'svc_live_bogus' },
      { authorization: 'Bearer nope' },
    ];
    for (const headers of bogus) {
      const res = await http(`${svc.api}/health/ready`, { headers });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('ready');
    }
  });

  // Last: it takes the paper database down for good.
  it('readiness reads each database file: a live database whose tables are gone is unavailable', async () => {
    const db = openDatabaseOf(svc.dataDir, 'live');
    try {
      db.exec('ALTER TABLE migrations RENAME TO migrations_hidden_by_test');
      const err = expectContractError(
        await http(`${svc.api}/health/ready`),
        503,
        'SERVICE_UNAVAILABLE',
      );
      expect(err.details.checks).toMatchObject({
        live: 'unavailable',
        platform: 'ok',
        paper: 'ok',
      });
    } finally {
      db.exec('ALTER TABLE migrations_hidden_by_test RENAME TO migrations');
      db.close();
    }
    expect((await http(`${svc.api}/health/ready`)).status).toBe(200);
  });

  it('readiness answers 503 SERVICE_UNAVAILABLE naming the database, then the engine, that is down', async () => {
    const key = await createKey(svc.api, await sessionFor(svc.api), {
      scopes: ['orders:write', 'markets:read'],
      acknowledge_write_scopes: true,
    });
    const market = (await http(`${svc.api}/markets?limit=1&status=OPEN`)).body.data[0].id as string;
    await svc.app.get<DataSource>(getDataSourceToken('paper'), { strict: false }).destroy();
    const res = await http(`${svc.api}/health/ready`);
    const err = expectContractError(res, 503, 'SERVICE_UNAVAILABLE');
    expect(err.details).toEqual({
      checks: {
        platform: 'ok',
        live: 'ok',
        paper: 'unavailable',
        live_engine: 'ok',
        paper_engine: 'ok',
        ...REDIS_CHECK,
      },
    });
    // A paper order cannot commit, and the engine cannot be rebuilt from a database that is gone:
    // the order is refused with 500 and the paper engine reports itself unavailable.
    const order = await http(`${svc.api}/orders`, {
      method: 'POST',
      headers: { 'x-api-key': key.key },
      json: { market_id: market, action: 'BUY', side: 'YES', type: 'LIMIT', price: 5, quantity: 1 },
    });
    expectContractError(order, 500, 'INTERNAL');
    const after = await http(`${svc.api}/health/ready`);
    expect(expectContractError(after, 503, 'SERVICE_UNAVAILABLE').details.checks).toMatchObject({
      paper: 'unavailable',
      paper_engine: 'unavailable',
      live_engine: 'ok',
    });
    // Liveness is about the process, not its dependencies.
    expect((await http(`${svc.api}/health`)).status).toBe(200);
  });
});
