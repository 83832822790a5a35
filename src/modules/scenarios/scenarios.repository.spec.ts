import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { DataSource } from 'typeorm';
import {
  sqliteDatabaseOf,
  ENGINE_DB,
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  sqliteOptions,
} from '../../database/databases.js';
import { ScenariosRepository, type ScenarioRow } from './scenarios.repository.js';

const row = (id: string, over: Partial<ScenarioRow> = {}): ScenarioRow => ({
  id,
  operation: 'POST /orders',
  market_id: null,
  client_order_id_prefix: null,
  effect: JSON.stringify({ type: 'DISCONNECT' }),
  times: 1,
  remaining: 1,
  created_at: '2026-11-22T12:00:00.000Z',
  ...over,
});
const none = { marketIds: [], clientOrderIds: [] };

/** The repository against a migrated engine database (the schema of migration 1763769600027). */
describe('scenarios in an engine database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-scenarios-'));
  const ds = new DataSource(sqliteOptions(ENGINE_DB.test, dir, ENGINE_ENTITIES, ENGINE_MIGRATIONS));
  let db: Database;

  beforeAll(async () => {
    await ds.initialize();
    db = sqliteDatabaseOf(ds);
  });
  afterAll(async () => {
    await ds.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fires the oldest matching scenario, each only as often as its times, per user and operation', () => {
    const repo = new ScenariosRepository(db);
    repo.insert('usr_a', row('scn_1', { market_id: 'mkt_x' }));
    repo.insert('usr_a', row('scn_2', { times: 2, remaining: 2 }));
    repo.insert('usr_a', row('scn_3', { operation: 'GET /wallet' }));
    repo.insert('usr_b', row('scn_4'));
    const fired = () => repo.take('usr_a', 'POST /orders', none)?.id ?? null;
    // scn_1 wants market mkt_x: a request about no market skips it.
    expect([fired(), fired(), fired()]).toEqual(['scn_2', 'scn_2', null]);
    expect(
      repo.take('usr_a', 'POST /orders', { marketIds: ['mkt_x'], clientOrderIds: [] })?.id,
    ).toBe('scn_1');
    expect(repo.one('usr_a', 'scn_2')?.remaining).toBe(0);
    expect(repo.take('usr_b', 'POST /orders', none)?.id).toBe('scn_4');
    expect(repo.take('usr_c', 'POST /orders', none)).toBeNull();
  });

  it('matches a client_order_id prefix against any of the request ids', () => {
    const repo = new ScenariosRepository(db);
    repo.insert('usr_p', row('scn_p1', { client_order_id_prefix: 'ci-' }));
    expect(
      repo.take('usr_p', 'POST /orders', { marketIds: [], clientOrderIds: ['x-ci-1'] }),
    ).toBeNull();
    expect(
      repo.take('usr_p', 'POST /orders', { marketIds: [], clientOrderIds: ['a', 'ci-2'] })?.id,
    ).toBe('scn_p1');
  });

  it('a new repository on the same file knows who holds live scenarios; deleteAll forgets them', () => {
    new ScenariosRepository(db).insert('usr_r', row('scn_r1', { times: 3, remaining: 3 }));
    const reopened = new ScenariosRepository(db);
    expect(reopened.take('usr_r', 'POST /orders', none)?.id).toBe('scn_r1');
    expect(reopened.deleteAll('usr_r')).toBe(1);
    expect(reopened.take('usr_r', 'POST /orders', none)).toBeNull();
  });
});
