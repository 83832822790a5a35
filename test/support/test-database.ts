import { afterAll } from '@jest/globals';
import Database from 'better-sqlite3';
import { createHash, randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PgSyncConnection, quoteIdent } from '../../src/common/sql/pg-sync-connection.js';
import type { SqlConnection } from '../../src/common/sql/sql-connection.js';
import { sqliteConnection } from '../../src/common/sql/sqlite-dialect.js';
import type { AppConfig } from '../../src/config/app-config.js';
import {
  ENGINE_DB,
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  openDatabase,
  PLATFORM_DB,
  PLATFORM_ENTITIES,
  PLATFORM_MIGRATIONS,
  postgresOptions,
} from '../../src/database/databases.js';
import {
  buildWorldTemplateSchema,
  WORLD_TEMPLATE_SCHEMA,
} from '../../src/modules/worlds/world-template.service.js';
import { migrateAndSeed, templateRoot } from './data-dir-template.js';
import { afterFile } from './jest-suite.js';
import { provideTestDatabaseEnv } from './process.js';
import { startServices, type Services } from './services.js';
import { assertNotSqlitePassOnly } from './pass-guard.js';

/**
 * The harness's database switch: `TEST_DATABASE=postgres` boots every test app on PostgreSQL
 * instead of SQLite files. One throwaway cluster and redis-server for the whole Jest run
 * (global-setup.js); without it (a file run by other means), one per suite file (Jest's module
 * registry: this module's state lives as long as the file), stopped when the Jest worker exits; a
 * database of its own per app boot (a copy of a migrated template, see databaseUrlFor), so cases
 * stay as isolated as with a fresh DATA_DIR. A boot
 * that reuses a DATA_DIR (a restart test) gets the database of that DATA_DIR back.
 */
export function testDatabaseIsPostgres(): boolean {
  return process.env.TEST_DATABASE === 'postgres';
}

/** The reasons given to {@link sqliteOnly} in this file's PostgreSQL pass, in order. */
export const sqliteOnlyReasons: string[] = [];

/**
 * The one way a case that checks SQLite itself (its files on disk, the WAL, a file lock) is left
 * out of the PostgreSQL pass: true on the SQLite pass (run it), false on the PostgreSQL pass,
 * where `reason` (what of SQLite it checks) is recorded. Prefer `startApp({ sqliteFiles: true })`,
 * which runs such a case on SQLite files in both passes; never for a case that is slow or flaky
 * on PostgreSQL.
 *
 *     (sqliteOnly('the -wal file is truncated by the checkpoint') ? it : it.skip)('...', ...);
 */
export function sqliteOnly(reason: string): boolean {
  if (reason.trim() === '') throw new Error('sqliteOnly: say what of SQLite the case checks');
  if (!testDatabaseIsPostgres()) return true;
  sqliteOnlyReasons.push(reason);
  return false;
}

let services: Promise<Services> | null = null;
/**
 * Names this module registry's databases: the worker's pid and a random part, since the suite
 * files a worker runs one after the other share the run's cluster and each counts from 1.
 */
const RUN_TAG = `${process.pid}_${randomBytes(4).toString('hex')}`;
let made = 0;
const byDataDir = new Map<string, string>();
/** DATA_DIR -> the URL of its database, for the synchronous readers below. */
const urls = new Map<string, string>();

/**
 * A connection to one database of the app booted on `dataDir`, from outside the app (what tests
 * read or plant): `platform`, `live`, `paper` or an ephemeral world's id. SQLite: the file in
 * DATA_DIR (DATA_DIR/worlds/ for a world); PostgreSQL: that schema of the boot's database, the
 * SQL carried over as the app's is. Close it after use.
 */
export function openDatabaseOf(
  dataDir: string,
  name: string,
  options: { readonly?: boolean; fileMustExist?: boolean } = {},
): SqlConnection {
  const url = urls.get(dataDir);
  if (url !== undefined) return pooledConnection(url, name);
  const file = name.startsWith('wld_')
    ? join(dataDir, 'worlds', `${name}.sqlite`)
    : join(dataDir, `${name}.sqlite`);
  const db = new Database(file, options);
  if (options.readonly !== true) db.pragma('busy_timeout = 5000');
  return sqliteConnection(db);
}

/**
 * PostgreSQL: the idle connections of each database and schema that tests opened and closed.
 * Opening one costs a connect and a backend start per read a test makes (paperQuery and the
 * like open one per call): about a third of the time the orders suite spent waiting on
 * PostgreSQL. A connection closed outside a transaction is kept here for the next open of the
 * same schema, and closed for good when its database is dropped.
 */
const idle = new Map<string, PgSyncConnection[]>();

/**
 * PostgreSQL: runs one statement on database `name` (`platform`, `live`, `paper`, a world id) of
 * the app booted on `dataDir` over an asynchronous connection of its own, so the event loop (and
 * the app running in this process) is never blocked while it runs. Answers false, running
 * nothing, when that app is on SQLite files (use openDatabaseOf).
 */
export async function runWithoutBlocking(
  dataDir: string,
  name: string,
  sql: string,
  params: unknown[],
): Promise<boolean> {
  const url = urls.get(dataDir);
  if (url === undefined) return false;
  const client = new pg.Client({
    connectionString: url,
    options: `-c search_path=${quoteIdent(name)}`,
  });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
  return true;
}

/** A connection to `schema` of the database at `url`, an idle one if there is one. */
function pooledConnection(url: string, schema: string): SqlConnection {
  const key = `${url}#${schema}`;
  const conn = idle.get(key)?.pop() ?? new PgSyncConnection(url, schema);
  let open = true;
  // The caller's close() puts it back (once) instead of closing it.
  const release = (): void => {
    if (!open) return;
    open = false;
    if (conn.inTransaction) {
      conn.close();
      return;
    }
    const list = idle.get(key) ?? [];
    list.push(conn);
    idle.set(key, list);
  };
  return new Proxy(conn, {
    get(target, prop) {
      if (prop === 'close') return release;
      if (!open && (prop === 'prepare' || prop === 'exec' || prop === 'transaction')) {
        throw new TypeError('The database connection is not open');
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** Closes the idle connections of the database at `url`. */
function closeIdle(url: string): void {
  for (const [key, list] of idle) {
    if (!key.startsWith(`${url}#`)) continue;
    idle.delete(key);
    for (const conn of list) conn.close();
  }
}

// The file's cluster stops with the file (registered once per module registry, so once per suite
// or case file); the exit hook below is the fallback for a worker that is killed.
afterAll(async () => {
  await settleBackground();
  const running = services;
  services = null;
  if (running !== null) await (await running).stop();
}, 60_000);

function cluster(): Promise<Services> {
  // The run's cluster (test/support/global-setup.js), shared by every suite file: stopped by the
  // global teardown, not here.
  const shared = process.env.SVC_E2E_DATABASE_URL;
  if (shared !== undefined && shared !== '') {
    services ??= Promise.resolve({
      databaseUrl: shared,
      redisUrl: process.env.SVC_E2E_REDIS_URL ?? '',
      child: null as unknown as Services['child'],
      stop: () => Promise.resolve(),
    });
    return services;
  }
  services ??= startServices().then((s) => {
    // The cluster outlives no worker: SIGTERM lets services.js stop PostgreSQL and remove its files.
    process.once('exit', () => s.child.kill('SIGTERM'));
    // Nor does it keep the worker alive once the tests are done.
    s.child.unref();
    (s.child.stdout as Socket | null)?.unref();
    (s.child.stderr as Socket | null)?.unref();
    return s;
  });
  return services;
}

// A spawned process asked to run on the test database (SpawnOptions.testDatabase) gets this
// DATA_DIR's database and the run's Redis, as startApp's boots do.
provideTestDatabaseEnv(async (dataDir) => ({
  DATABASE_URL: await databaseUrlFor(dataDir),
  REDIS_URL: await testRedisUrl(),
}));

/**
 * REDIS_URL of the cluster's redis-server: the PostgreSQL pass is the PostgreSQL + Redis pass.
 * The apps of one suite file share it; each boot's own database gives it its own default
 * REDIS_KEY_PREFIX (src/config/redis-key-prefix.ts), so their limits, event streams and signals
 * stay apart, and a restart on the same DATA_DIR finds its keys again, as a real restart does.
 */
export async function testRedisUrl(): Promise<string> {
  return (await cluster()).redisUrl;
}

/** Seeded template databases of this cluster, by seeding clock, APP_ENV and scrypt cost. */
const templates = new Map<string, Promise<string>>();

/**
 * DATABASE_URL for an app booting on `dataDir`: that DATA_DIR's database, made on first use. With
 * `seeded` (a ManualClock boot, as data-dir-template.ts), a copy (`CREATE DATABASE ... TEMPLATE`)
 * of a database migrated and seeded once per cluster for that clock and config, instead of every
 * boot running the migrations and hashing the demo passwords again. Without it, a copy of the
 * run's migrated database ({@link migratedBase}): the app seeds it as on a first start, and finds
 * its migrations applied, as on a database its own first start migrated (the migrations run by
 * the same code, openDatabase, once per run).
 */
export async function databaseUrlFor(
  dataDir: string,
  seeded?: { config: AppConfig; now: number },
): Promise<string> {
  const base = new URL((await cluster()).databaseUrl);
  let name = byDataDir.get(dataDir);
  if (name === undefined) {
    if (seeded === undefined) {
      name = await createCopy(base, await migratedBase(base));
    } else {
      name = await copyOfTemplate(base, await templateFor(base, seeded));
    }
    byDataDir.set(dataDir, name);
  }
  base.pathname = `/${name}`;
  urls.set(dataDir, base.toString());
  return base.toString();
}

function templateFor(base: URL, seeded: { config: AppConfig; now: number }): Promise<string> {
  const { config, now } = seeded;
  const key = `${now}-${config.appEnv}-${config.passwordScryptCost}`;
  let built = templates.get(key);
  if (built === undefined) {
    built = sharedTemplate(base, key, config, now);
    built.catch(() => templates.delete(key));
    templates.set(key, built);
  }
  return built;
}

/**
 * The template database of `key`, built once per Jest run on the run's cluster and shared by
 * every suite file of both workers (each file is a module registry of its own, so a per-module
 * template was migrated and seeded again by every suite file). It starts as a copy of the run's
 * migrated database ({@link migratedBase}), where the app's migrations find nothing to do, and is
 * seeded as the app's first boot seeds; then the ephemeral worlds' template schema is seeded and
 * stamped as the app builds it on a first world create at this clock, so a boot's first world is a
 * copy, not migrations and seeds again, with its spares. See {@link buildOnce} for how it is
 * shared.
 */
async function sharedTemplate(
  base: URL,
  key: string,
  config: AppConfig,
  now: number,
): Promise<string> {
  const migrated = await migratedBase(base);
  return buildOnce(base, `tpl_${runTag()}_${shortHash(key)}`, migrated, (url) =>
    migrateAndSeed(
      (schema, entities, migrations) => postgresOptions(schema, url, entities, migrations),
      config,
      mkdtempSync(join(tmpdir(), 'svc-pg-template-')),
      now,
      (seed) => buildWorldTemplateSchema(url, seed, WORLD_SPARES),
    ),
  );
}

/**
 * Spare copies of the worlds' template in each seeded template database (WorldTemplate): a boot's
 * first worlds are renamed spares, copied with the database, instead of a clone each (about
 * 180 ms of the server's CPU); a boot that makes more clones the rest, one spare kept ahead.
 */
const WORLD_SPARES = 2;

let migrated: Promise<string> | null = null;

/**
 * The run's database with every schema a seeded template holds (platform, live, paper and the
 * worlds' template) migrated by the app's own migrations and nothing seeded: what the migrations
 * of an empty database produce does not depend on the seeding clock or config, so they run once
 * per Jest run rather than once per template (3-5 s each on a busy machine, and a run builds a
 * template for each of some twenty seeding clocks and configs).
 */
function migratedBase(base: URL): Promise<string> {
  migrated ??= buildOnce(base, `tpl_${runTag()}_migrated`, null, async (url) => {
    const schemas = [
      [PLATFORM_DB, PLATFORM_ENTITIES, PLATFORM_MIGRATIONS],
      [ENGINE_DB.live, ENGINE_ENTITIES, ENGINE_MIGRATIONS],
      [ENGINE_DB.test, ENGINE_ENTITIES, ENGINE_MIGRATIONS],
      [WORLD_TEMPLATE_SCHEMA, ENGINE_ENTITIES, ENGINE_MIGRATIONS],
    ] as const;
    for (const [schema, entities, migrations] of schemas) {
      const ds = await openDatabase(postgresOptions(schema, url, [...entities], [...migrations]));
      await ds.destroy();
    }
  });
  migrated.catch(() => (migrated = null));
  return migrated;
}

/** What names this run's shared databases: the run's template root, else this module registry. */
function runTag(): string {
  const runRoot = templateRoot();
  return process.env.SVC_E2E_DATABASE_URL && runRoot !== undefined ? shortHash(runRoot) : RUN_TAG;
}

const shortHash = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 12);

/**
 * Database `name` of the run's cluster, built once (`build` on the URL of a new database, a copy
 * of `from` if given) by the first file of either worker to ask, under an advisory lock the others
 * wait on, into a scratch name renamed once complete, so a build cut short is never used.
 */
async function buildOnce(
  base: URL,
  name: string,
  from: string | null,
  build: (url: string) => Promise<void>,
): Promise<string> {
  const client = new pg.Client({ connectionString: base.toString() });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      const scratch = `${name}_building`;
      await client.query(`DROP DATABASE IF EXISTS "${scratch}" WITH (FORCE)`);
      await client.query(
        `CREATE DATABASE "${scratch}"${from === null ? '' : ` TEMPLATE "${from}"`}`,
      );
      const url = new URL(base);
      url.pathname = `/${scratch}`;
      await build(url.toString());
      await client.query(`ALTER DATABASE "${scratch}" RENAME TO "${name}"`);
    }
    return name;
  } finally {
    // Ending the session releases the lock.
    await client.end();
  }
}

/**
 * Copies of each template made ahead of need, one per template: a seeded boot takes the copy
 * made while the tests of the boot before it ran, and sets the next one going, instead of waiting
 * for its own `CREATE DATABASE ... TEMPLATE` (100-250 ms, over 500 ms on a loaded machine). A copy
 * nobody took is dropped when the file ends.
 */
const spares = new Map<string, Promise<string>>();

/** What runs beside the tests (the spares' copies, the drops of closed boots' databases). */
const background = new Set<Promise<unknown>>();

function inBackground<T>(work: Promise<T>): Promise<T> {
  background.add(work);
  const done = (): void => void background.delete(work);
  work.then(done, done);
  return work;
}

async function copyOfTemplate(base: URL, template: string): Promise<string> {
  const spare = spares.get(template);
  const next = inBackground(createCopy(base, template));
  spares.set(template, next);
  // A failed spare is tried again for this boot, where its error fails the boot if it recurs.
  const ready = spare === undefined ? null : await spare.catch(() => null);
  return ready ?? (await createCopy(base, template));
}

async function createCopy(base: URL, template: string): Promise<string> {
  const name = `e2e_${RUN_TAG}_${++made}`;
  await admin(base, `CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  return name;
}

/**
 * Drops the database of `dataDir` (its app closed, its data not kept) beside what runs next: the
 * next boot gets a database of its own, so it need not wait for this one to go. A failed drop
 * fails the file's end (see below).
 */
export function dropDatabaseLater(dataDir: string): void {
  const name = forget(dataDir);
  if (name !== undefined) void inBackground(dropNow(name));
}

/** Drops database `name` of this file's cluster, if it still runs (its databases go with it). */
async function dropNow(name: string): Promise<void> {
  if (services === null) return;
  const { databaseUrl } = await services;
  await admin(new URL(databaseUrl), `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

/**
 * Waits for what runs in the background, and drops the copies made ahead that no boot took;
 * throws the first failure.
 */
async function settleBackground(): Promise<void> {
  const left = [...spares.values()];
  spares.clear();
  const dropped = left.map((spare) => spare.then(dropNow, () => undefined));
  const results = await Promise.allSettled([...background, ...dropped]);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

// When the file ends (after every case file of a suite file, whose first one stopped the cluster
// above only if it was the file's own): the same again.
afterFile(settleBackground);

/**
 * What copying a stopped app's DATA_DIR to `toDataDir` copies on PostgreSQL: its database
 * (`CREATE DATABASE ... TEMPLATE`), which an app booting on `toDataDir` then gets. Nothing to do on
 * SQLite, where the files are the copy.
 */
export async function copyDatabaseOf(fromDataDir: string, toDataDir: string): Promise<void> {
  const from = byDataDir.get(fromDataDir);
  if (from === undefined) return;
  // A template must have no session: the test's own idle reads of the stopped app's database too.
  const url = urls.get(fromDataDir);
  if (url !== undefined) closeIdle(url);
  const name = `e2e_${RUN_TAG}_${++made}`;
  await admin(
    new URL((await cluster()).databaseUrl),
    `CREATE DATABASE "${name}" TEMPLATE "${from}"`,
  );
  byDataDir.set(toDataDir, name);
}

/** Drops the database of `dataDir` (its app closed, its data not kept). */
export async function dropDatabaseOf(dataDir: string): Promise<void> {
  const name = forget(dataDir);
  if (name === undefined) return;
  await admin(
    new URL((await cluster()).databaseUrl),
    `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`,
  );
}

/**
 * The database name of `dataDir`, no longer known as its (undefined: it has none); the idle
 * connections kept to it are closed.
 */
function forget(dataDir: string): string | undefined {
  const name = byDataDir.get(dataDir);
  byDataDir.delete(dataDir);
  const url = urls.get(dataDir);
  if (url !== undefined) closeIdle(url);
  urls.delete(dataDir);
  return name;
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

/** Whether an ephemeral world's database is stored: its file (SQLite) or its schema (PostgreSQL). */
export function worldDatabaseExists(dataDir: string, id: string): boolean {
  if (!urls.has(dataDir)) return existsSync(join(dataDir, 'worlds', `${id}.sqlite`));
  const db = openDatabaseOf(dataDir, 'paper');
  try {
    return (
      db.prepare('SELECT 1 AS found FROM pg_namespace WHERE nspname = ?').get(id) !== undefined
    );
  } finally {
    db.close();
  }
}

/**
 * What the ephemeral worlds' databases of the app booted on `dataDir` occupy, sorted: the files
 * under DATA_DIR/worlds (SQLite: each world's file and its -wal, -shm or .part), or the worlds'
 * schemas (PostgreSQL). For "creates nothing" checks.
 */
export function worldStorage(dataDir: string): string[] {
  if (!urls.has(dataDir)) {
    const dir = join(dataDir, 'worlds');
    return existsSync(dir) ? readdirSync(dir).sort() : [];
  }
  const db = openDatabaseOf(dataDir, 'paper');
  try {
    const rows = db
      .prepare(
        "SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE 'wld\\_%' ORDER BY nspname",
      )
      .all() as { name: string }[];
    return rows.map((r) => r.name);
  } finally {
    db.close();
  }
}

/**
 * Plants what a create cut short leaves for world `id`: an empty file (SQLite), or an empty schema
 * of its name (PostgreSQL).
 */
export function plantHalfWorld(dataDir: string, id: string): void {
  if (!urls.has(dataDir)) {
    mkdirSync(join(dataDir, 'worlds'), { recursive: true });
    writeFileSync(join(dataDir, 'worlds', `${id}.sqlite`), '');
    return;
  }
  const db = openDatabaseOf(dataDir, 'paper');
  try {
    db.exec(`CREATE SCHEMA "${id}"`);
  } finally {
    db.close();
  }
}

/**
 * The environment that puts a `node dist/main.js` process (test/support/process.ts) booting on
 * `dataDir` on the run's database, as startApp puts an in-process app: on PostgreSQL
 * DATABASE_URL of that DATA_DIR's database (made on first use, the same again for a restart on
 * it) and REDIS_URL of the run's redis-server; nothing on SQLite, where DATA_DIR is the database.
 * Spread it into startService's env; dropDatabaseOf(dataDir) when done.
 */
export async function serviceDatabaseEnv(dataDir: string): Promise<Record<string, string>> {
  assertNotSqlitePassOnly('it starts a process on the pass database (serviceDatabaseEnv)');
  if (!testDatabaseIsPostgres()) return {};
  return { DATABASE_URL: await databaseUrlFor(dataDir), REDIS_URL: await testRedisUrl() };
}

/** One place a booted app keeps data, as bytes to search (see {@link storedDataOf}). */
export interface StoredData {
  /** A path under DATA_DIR, or `postgres:<schema>` for a database schema on PostgreSQL. */
  label: string;
  bytes: Buffer;
}

/** The label {@link storedDataOf} gives the platform database on the engine in use. */
export function platformStoreLabel(dataDir: string): string {
  return urls.has(dataDir) ? 'postgres:platform' : 'platform.sqlite';
}

/**
 * Everything the app booted on `dataDir` has stored, as bytes to search for what must never be
 * stored (a secret in the clear): every file under DATA_DIR (SQLite databases, their WAL,
 * secrets.json, exports) and, on PostgreSQL, every row of every table of each of the boot's
 * schemas (platform, live, paper, the worlds'), each row as its text form.
 */
export function storedDataOf(dataDir: string): StoredData[] {
  const stored: StoredData[] = (readdirSync(dataDir, { recursive: true }) as string[])
    .filter((f) => statSync(join(dataDir, f)).isFile())
    .map((f) => ({ label: f, bytes: readFileSync(join(dataDir, f)) }));
  if (!urls.has(dataDir)) return stored;
  const probe = openDatabaseOf(dataDir, 'platform', { readonly: true });
  let schemas: string[];
  try {
    schemas = (
      probe
        .prepare(
          `SELECT nspname AS name FROM pg_namespace
           WHERE nspname IN ('platform', 'live', 'paper') OR nspname LIKE 'wld\\_%'`,
        )
        .all() as { name: string }[]
    ).map((r) => r.name);
  } finally {
    probe.close();
  }
  for (const schema of schemas) {
    const db = openDatabaseOf(dataDir, schema, { readonly: true });
    try {
      const tables = db
        .prepare(
          `SELECT table_name AS name FROM information_schema.tables
           WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
        )
        .all() as { name: string }[];
      const rows: string[] = [];
      for (const t of tables) {
        const all = db.prepare(`SELECT t::text AS row FROM "${t.name}" t`).all() as {
          row: string;
        }[];
        rows.push(...all.map((r) => r.row));
      }
      stored.push({ label: `postgres:${schema}`, bytes: Buffer.from(rows.join('\n'), 'utf8') });
    } finally {
      db.close();
    }
  }
  return stored;
}
