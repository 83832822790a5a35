import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { assertStatementsListed, watchStatements } from '../../../test/support/statement-log.js';
import {
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  connectionOf,
  openDatabase,
  sqliteOptions,
} from '../../database/databases.js';
import { DATASETS, DATASET_DEFS, DatasetReader } from '../../modules/data-exports/datasets.js';
import { RankRepository } from '../../modules/rank/rank.repository.js';
import { LedgerStore } from '../../modules/trading/stores/ledger.store.js';
import { OrderStore } from '../../modules/trading/stores/order.store.js';
import { PositionStore } from '../../modules/trading/stores/position.store.js';

/**
 * The statements built per filter combination (one prepared statement per combination of the
 * list, export and page filters present), every combination of each: the e2e tests exercise
 * only some, and each must be in src/common/sql/statements.json, the list checked on
 * PostgreSQL. `npm run sql:statements` runs this file to add them.
 */
let dir: string;
let ds: DataSource;

beforeAll(async () => {
  watchStatements();
  dir = mkdtempSync(join(tmpdir(), 'svc-sql-combos-'));
  ds = await openDatabase(sqliteOptions('paper', dir, ENGINE_ENTITIES, ENGINE_MIGRATIONS));
});

afterAll(async () => {
  await ds.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** Every subset of `keys` as an object giving each present key `value`. */
function subsets<K extends string>(
  keys: readonly K[],
  value: string,
): Partial<Record<K, string>>[] {
  const out: Partial<Record<K, string>>[] = [];
  for (let mask = 0; mask < 1 << keys.length; mask++) {
    const present = keys.filter((_, i) => (mask & (1 << i)) !== 0);
    out.push(Object.fromEntries(present.map((k) => [k, value])) as Partial<Record<K, string>>);
  }
  return out;
}

describe('statements per filter combination', () => {
  it('every combination runs on SQLite and is in the checked list', () => {
    const db = connectionOf(ds);
    const orders = new OrderStore(db, 'usr_house');
    for (const f of subsets(['status', 'marketId', 'beforeId'] as const, 'x')) {
      expect(orders.listOrders('usr_a', { ...f, limit: 10 })).toEqual([]);
    }
    for (const f of subsets(['status', 'marketId', 'from', 'to'] as const, 'x')) {
      expect(orders.exportChunk({ userId: 'usr_a', throughId: 'z', ...f }, '', 10)).toEqual([]);
      expect(orders.countExport({ userId: 'usr_a', throughId: 'z', ...f })).toBe(0);
    }
    const ledger = new LedgerStore(db, 'test', 'usr_house', () => 'led_1');
    for (const f of subsets(['beforeId', 'type'] as const, 'DEPOSIT')) {
      expect(ledger.page('usr_a', { ...(f as { beforeId?: string }), limit: 10 })).toEqual([]);
    }
    const positions = new PositionStore(db);
    for (const includeFlat of [false, true]) {
      for (const f of subsets(['afterMarketId'] as const, 'x')) {
        expect(positions.page('usr_a', { ...f, includeFlat, limit: 10 })).toEqual([]);
      }
    }
    const rank = new RankRepository(db);
    for (const f of subsets(['after', 'from', 'to'] as const, '2026-01-01T00:00:00.000Z')) {
      expect(rank.page('usr_a', { ...f, limit: 10 })).toEqual([]);
    }
    const datasets = new DatasetReader(db);
    for (const name of DATASETS) {
      const def = DATASET_DEFS[name];
      expect(datasets.lastRowid(def)).toBe(0);
      for (const marketIds of [null, ['mkt_a']]) {
        const scope = { def, userId: 'usr_a', start: '', end: '9999', marketIds };
        expect(datasets.countRange(scope, 0, 10)).toBe(0);
        expect(datasets.page(scope, 0, 10, 10)).toEqual([]);
      }
    }
    assertStatementsListed();
  });
});
