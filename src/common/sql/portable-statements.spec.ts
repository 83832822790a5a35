import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startServices, type Services } from '../../../test/support/services.js';
import {
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  PLATFORM_ENTITIES,
  PLATFORM_MIGRATIONS,
  openDatabase,
  postgresOptions,
  sqliteOptions,
} from '../../database/databases.js';
import { toPostgres } from './postgres-dialect.js';
import {
  DATASETS,
  DATASET_DEFS,
  ROW_ORDER_COLUMN,
  readerSql,
} from '../../modules/data-exports/datasets.js';

/**
 * Every SQL statement the service runs (src/common/sql/statements.json, which the e2e tests keep
 * current: test/support/statement-log.ts fails a run that meets a statement missing from it) is
 * valid on PostgreSQL 15 once toPostgres has carried it over. PREPARE parses it and resolves its
 * tables, columns, functions, operators and parameter types against the migrated schemas without
 * running it; a query's result columns must also be named as on SQLite (PostgreSQL folds an
 * unquoted alias to lower case and names an unaliased expression differently), which running it
 * once with NULL parameters on the empty tables shows.
 */
interface Listed {
  site: string;
  sql: string;
}
const LIST = JSON.parse(
  readFileSync(new URL('./statements.json', import.meta.url), 'utf8'),
) as Listed[];

/**
 * SQL that is SQLite's own and never runs on PostgreSQL, each with why: the DATA_DIR lock (an
 * exclusive lock on a SQLite file of its own), and the data exports' row reader, which walks a
 * table's rowid ranges (on PostgreSQL it walks row_seq instead: its statements are checked below,
 * written for PostgreSQL by the reader itself).
 */
const SQLITE_ONLY: ((s: Listed) => boolean)[] = [
  (s) => s.site === 'src/config/data-dir-lock.ts',
  (s) => s.site === 'src/modules/data-exports/datasets.ts' && /\browid\b/.test(s.sql),
];

/** The statements PREPARE accepts; any other runs inside a rolled-back transaction. */
const PREPARABLE = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|VALUES)\b/i;
const QUERY = /^\s*(SELECT|WITH)\b/i;

let services: Services;
let client: pg.Client;
let sqliteDir: string;
/** The migrated SQLite databases (platform, engine), opened directly: their column names. */
const sqlite: Database.Database[] = [];

beforeAll(async () => {
  sqliteDir = mkdtempSync(join(tmpdir(), 'svc-sql-statements-'));
  services = await startServices();
  const sources = [
    { name: 'platform', entities: PLATFORM_ENTITIES, migrations: PLATFORM_MIGRATIONS },
    { name: 'paper', entities: ENGINE_ENTITIES, migrations: ENGINE_MIGRATIONS },
  ];
  for (const s of sources) {
    const ds = await openDatabase(
      postgresOptions(s.name, services.databaseUrl, s.entities, s.migrations),
    );
    await ds.destroy();
    const lite = await openDatabase(sqliteOptions(s.name, sqliteDir, s.entities, s.migrations));
    await lite.destroy();
    sqlite.push(new Database(join(sqliteDir, `${s.name}.sqlite`), { readonly: true }));
  }
  client = new pg.Client({ connectionString: services.databaseUrl });
  await client.connect();
  // The platform's and an engine's tables have distinct names: one search path resolves both.
  await client.query('SET search_path = platform, paper');
}, 120_000);

afterAll(async () => {
  await client?.end();
  for (const db of sqlite) db.close();
  await services?.stop();
  rmSync(sqliteDir, { recursive: true, force: true });
}, 60_000);

/** The result column names of a query on SQLite (the platform's database or the engine's). */
function sqliteColumns(sql: string): string[] {
  let last: unknown;
  for (const db of sqlite) {
    try {
      return db
        .prepare(sql)
        .columns()
        .map((c) => c.name);
    } catch (err) {
      last = err;
    }
  }
  throw last;
}

/** Why PostgreSQL refuses the statement, or null when it accepts it. */
async function check(sql: string, columnsOf: 'sqlite' | 'none' = 'sqlite'): Promise<string | null> {
  let text: string;
  try {
    text = toPostgres(sql).text;
  } catch (err) {
    return (err as Error).message;
  }
  const shown = `\n    ${text.replace(/\s+/g, ' ').trim()}`;
  try {
    if (!PREPARABLE.test(text)) {
      await client.query('BEGIN');
      try {
        await client.query(text);
      } finally {
        await client.query('ROLLBACK');
      }
      return null;
    }
    await client.query(`PREPARE s AS ${text}`);
    try {
      if (QUERY.test(text) && columnsOf === 'sqlite') {
        const n = Math.max(0, ...[...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
        const args = n === 0 ? '' : `(${new Array<string>(n).fill('NULL').join(', ')})`;
        // An exported table's row_seq (PostgreSQL's row order for exports, migration 031) is the
        // one column SQLite has not: its rowid is implicit.
        const fields = (await client.query(`EXECUTE s${args}`)).fields
          .map((f) => f.name)
          .filter((name) => name !== ROW_ORDER_COLUMN);
        const expected = sqliteColumns(sql);
        if (fields.join() !== expected.join()) {
          return `result columns ${fields.join(', ')} where SQLite has ${expected.join(', ')}${shown}`;
        }
      }
    } finally {
      await client.query('DEALLOCATE s');
    }
    return null;
  } catch (err) {
    return `${(err as Error).message}${shown}`;
  }
}

describe('the service SQL on PostgreSQL', () => {
  it('the list holds statements, each once', () => {
    expect(LIST.length).toBeGreaterThan(100);
    expect(new Set(LIST.map((s) => s.sql)).size).toBe(LIST.length);
  });

  it('every listed statement PREPAREs on PostgreSQL 15 after toPostgres, its columns named as on SQLite', async () => {
    const failures: string[] = [];
    for (const s of LIST) {
      if (SQLITE_ONLY.some((only) => only(s))) continue;
      const why = await check(s.sql);
      if (why !== null) failures.push(`${s.site}: ${why}`);
    }
    expect(failures).toEqual([]);
  }, 60_000);

  it("the export reader's PostgreSQL statements (keyset on row_seq) PREPARE, for every dataset and filter", async () => {
    const failures: string[] = [];
    for (const dataset of DATASETS) {
      const def = DATASET_DEFS[dataset];
      for (const kind of ['last', 'count', 'page'] as const) {
        for (const markets of def.market === undefined ? [false] : [false, true]) {
          const why = await check(readerSql('postgres', kind, def, markets), 'none');
          if (why !== null) failures.push(`${dataset} ${kind}: ${why}`);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 60_000);
});
