import pg from 'pg';
import { startServices, type Services } from './services.js';

/**
 * The harness's database switch: `TEST_DATABASE=postgres` boots every test app on PostgreSQL
 * instead of SQLite files. One throwaway cluster per suite file (Jest's module registry: this
 * module's state lives as long as the file), stopped when the Jest worker exits; a fresh database
 * (`CREATE DATABASE`) per app boot, so cases stay as isolated as with a fresh DATA_DIR. A boot
 * that reuses a DATA_DIR (a restart test) gets the database of that DATA_DIR back.
 */
export function testDatabaseIsPostgres(): boolean {
  return process.env.TEST_DATABASE === 'postgres';
}

let services: Promise<Services> | null = null;
let made = 0;
const byDataDir = new Map<string, string>();

function cluster(): Promise<Services> {
  services ??= startServices().then((s) => {
    // The cluster outlives no worker: SIGTERM lets services.js stop PostgreSQL and remove its files.
    process.once('exit', () => s.child.kill('SIGTERM'));
    return s;
  });
  return services;
}

/** DATABASE_URL for an app booting on `dataDir`: that DATA_DIR's database, made on first use. */
export async function databaseUrlFor(dataDir: string): Promise<string> {
  const base = new URL((await cluster()).databaseUrl);
  let name = byDataDir.get(dataDir);
  if (name === undefined) {
    name = `e2e_${process.pid}_${++made}`;
    await admin(base, `CREATE DATABASE "${name}"`);
    byDataDir.set(dataDir, name);
  }
  base.pathname = `/${name}`;
  return base.toString();
}

/** Drops the database of `dataDir` (its app closed, its data not kept). */
export async function dropDatabaseOf(dataDir: string): Promise<void> {
  const name = byDataDir.get(dataDir);
  if (name === undefined) return;
  byDataDir.delete(dataDir);
  await admin(
    new URL((await cluster()).databaseUrl),
    `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`,
  );
}

async function admin(base: URL, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: base.toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
