import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { startServices, type Services } from '../../test/support/services.js';
import {
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  PLATFORM_ENTITIES,
  PLATFORM_MIGRATIONS,
  openDatabase,
  postgresOptions,
  sqliteOptions,
} from './databases.js';
import {
  EXPORTED_TABLES,
  ExportRowOrder1763769600031,
  ROW_ORDER_COLUMN,
} from './migrations/1763769600031-export-row-order.js';

/**
 * The same migrations on PostgreSQL 15 (a throwaway cluster from `npm run services`): the three
 * data sources as the schemas platform, live and paper of one database, each holding the tables
 * and indexes the SQLite databases hold.
 */
const SOURCES = [
  { name: 'platform', entities: PLATFORM_ENTITIES, migrations: PLATFORM_MIGRATIONS },
  { name: 'live', entities: ENGINE_ENTITIES, migrations: ENGINE_MIGRATIONS },
  { name: 'paper', entities: ENGINE_ENTITIES, migrations: ENGINE_MIGRATIONS },
];

let services: Services;
let databaseUrl: string;
let sqliteDir: string;

beforeAll(async () => {
  sqliteDir = mkdtempSync(join(tmpdir(), 'svc-pg-migrations-'));
  services = await startServices();
  databaseUrl = services.databaseUrl;
}, 120_000);

afterAll(async () => {
  rmSync(sqliteDir, { recursive: true, force: true });
  await services.stop();
}, 60_000);

/** Table name -> its index names, migrations' bookkeeping left out. */
async function shape(ds: DataSource, postgres: boolean, schema: string) {
  const rows = (
    postgres
      ? await ds.query(
          `SELECT tablename AS t, indexname AS i FROM pg_indexes WHERE schemaname = $1
           UNION ALL SELECT table_name, NULL FROM information_schema.tables WHERE table_schema = $1`,
          [schema],
        )
      : await ds.query(
          `SELECT tbl_name AS t, CASE type WHEN 'index' THEN name END AS i FROM sqlite_master
           WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%'`,
        )
  ) as { t: string; i: string | null }[];
  const tables = new Map<string, Set<string>>();
  for (const r of rows) {
    if (r.t === 'migrations' || r.t.startsWith('sqlite_')) continue;
    const set = tables.get(r.t) ?? new Set<string>();
    // Primary keys and unique columns: SQLite's automatic indexes, PostgreSQL's constraints,
    // named differently; the named indexes of the migrations are compared.
    if (r.i !== null && !/^(PK_|UQ_|REL_|sqlite_autoindex)/.test(r.i)) {
      set.add(r.i);
    }
    tables.set(r.t, set);
  }
  return Object.fromEntries([...tables].map(([t, i]) => [t, [...i].sort()]).sort());
}

describe('migrations on PostgreSQL', () => {
  it.each(SOURCES)(
    'schema $name: every migration runs, and the tables and indexes are those of SQLite',
    async ({ name, entities, migrations }) => {
      const pg = await openDatabase(postgresOptions(name, databaseUrl, entities, migrations));
      const lite = await openDatabase(sqliteOptions(name, sqliteDir, entities, migrations));
      try {
        const ran = (await pg.query(`SELECT name FROM "${name}".migrations ORDER BY id`)) as {
          name: string;
        }[];
        expect(ran.map((r) => r.name)).toEqual(migrations.map((m) => new m().name ?? m.name));
        const pgShape = await shape(pg, true, name);
        expect(Object.keys(pgShape).length).toBeGreaterThan(3);
        // The one difference by design: PostgreSQL's export row order (SQLite reads the rowid).
        const liteShape = await shape(lite, false, name);
        if (migrations.includes(ExportRowOrder1763769600031)) {
          for (const t of EXPORTED_TABLES) {
            liteShape[t] = [...liteShape[t], `idx_${t}_${ROW_ORDER_COLUMN}`].sort();
          }
        }
        expect(pgShape).toEqual(liteShape);
        // Nothing leaked into public: each data source keeps to its schema.
        const stray = (await pg.query(
          `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`,
        )) as unknown[];
        expect(stray).toEqual([]);
      } finally {
        await pg.destroy();
        await lite.destroy();
      }
      // Opening again runs nothing and refuses nothing.
      const again = await openDatabase(postgresOptions(name, databaseUrl, entities, migrations));
      expect(await again.showMigrations()).toBe(false);
      await again.destroy();
    },
    60_000,
  );
});
