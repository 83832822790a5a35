/**
 * bench:sql-port — what one synchronous statement costs through the SQL port: better-sqlite3 on
 * a file, and PgSyncConnection (a blocking round trip to the pg worker thread and a loopback
 * PostgreSQL from `npm run services`). Prints µs per call and writes bench/results/sql-port.json.
 */
import BetterSqlite3 from 'better-sqlite3';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServices } from '../test/support/services.js';
import { PgSyncConnection } from '../src/common/sql/pg-sync-connection.js';
import type { SqlConnection } from '../src/common/sql/sql-connection.js';
import { sqliteConnection } from '../src/common/sql/sqlite-dialect.js';

const N = 5_000;

function measure(db: SqlConnection): Record<string, number> {
  db.exec('CREATE TABLE IF NOT EXISTS t (id TEXT PRIMARY KEY, n INTEGER NOT NULL)');
  db.exec('DELETE FROM t');
  const insert = db.prepare('INSERT INTO t (id, n) VALUES (?, ?)');
  const byId = db.prepare('SELECT id, n FROM t WHERE id = ?');
  const tx = db.transaction((i: number) => {
    insert.run(`tx${i}a`, i);
    insert.run(`tx${i}b`, i);
  });
  const time = (fn: (i: number) => void): number => {
    for (let i = 0; i < 200; i++) fn(-i - 1);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) fn(i);
    return Number(process.hrtime.bigint() - t0) / 1000 / N;
  };
  return {
    insert_us: time((i) => insert.run(`r${i}`, i)),
    get_by_id_us: time((i) => byId.get(`r${Math.abs(i)}`)),
    transaction_of_2_inserts_us: time((i) => tx(i)),
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sql-port-'));
  const services = await startServices(90_000, process.cwd());
  try {
    const lite = new BetterSqlite3(join(dir, 'b.sqlite'));
    lite.pragma('journal_mode = WAL');
    lite.pragma('synchronous = NORMAL');
    const sqlite = measure(sqliteConnection(lite));
    lite.close();
    const admin = new PgSyncConnection(services.databaseUrl);
    admin.exec('CREATE SCHEMA IF NOT EXISTS bench');
    admin.close();
    const pg = new PgSyncConnection(services.databaseUrl, 'bench');
    const postgres = measure(pg);
    pg.close();
    const out = { calls: N, sqlite, postgres };
    console.log(JSON.stringify(out, null, 2));
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/sql-port.json', `${JSON.stringify(out, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await services.stop();
  }
}

void main();
