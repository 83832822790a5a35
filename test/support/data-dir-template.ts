// A fresh DATA_DIR in a file copy: the three databases migrated and seeded once per Jest run (per
// seeding clock, APP_ENV and scrypt cost), copied into each test boot's new DATA_DIR, instead of every boot
// running 27 migrations and hashing the demo accounts' passwords again (scrypt; about half of
// a boot). The app then starts on an existing DATA_DIR, as on a restart: the migrations find
// nothing to do and the seeds find their rows. What the copy holds is what the app's own
// migrations and SeedService write, run through the same code at the same clock.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ManualClock, type Clock } from '../../src/common/clock/clock.js';
import { IdGenerator } from '../../src/common/ids/id-generator.js';
import type { AppConfig } from '../../src/config/app-config.js';
import { ConfigService } from '../../src/config/config.service.js';
import { ensureSecrets } from '../../src/config/secrets.js';
import {
  ENGINE_DB,
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  openDatabase,
  PLATFORM_DB,
  PLATFORM_ENTITIES,
  PLATFORM_MIGRATIONS,
  sqliteOptions,
} from '../../src/database/databases.js';
import { SeedService } from '../../src/database/seed.service.js';
import type { DataSourceOptions } from 'typeorm';
import { UsersService } from '../../src/modules/users/users.service.js';

/** Set by test/support/global-setup.js for the run (removed at its end); unset: no templates. */
export const TEMPLATE_ROOT_ENV = 'SVC_E2E_TEMPLATE_ROOT';

/** The run's template root (a directory; it also names the run's shared PostgreSQL databases), if any. */
export function templateRoot(): string | undefined {
  const root = process.env[TEMPLATE_ROOT_ENV];
  return root === undefined || root === '' ? undefined : root;
}

const DATABASES = [`${PLATFORM_DB}.sqlite`, `${ENGINE_DB.live}.sqlite`, `${ENGINE_DB.test}.sqlite`];

/**
 * Fills the new, empty `dataDir` with migrated and seeded databases when the boot's seeding is
 * reproducible: a ManualClock (what SeedService stamps depends on the clock: market and account
 * times, sports start times). Answers false when it did nothing (the app migrates and seeds).
 */
export async function fillFromTemplate(
  dataDir: string,
  config: AppConfig,
  clock: Clock,
): Promise<boolean> {
  const root = templateRoot();
  if (root === undefined || !(clock instanceof ManualClock)) return false;
  const now = clock.now();
  // The seeded accounts' password hashes are made at the app's PASSWORD_SCRYPT_COST.
  const dir = join(root, `${now}-${config.appEnv}-${config.passwordScryptCost}`);
  if (!hasDatabases(dir)) await buildTemplate(root, dir, config, now);
  // The copy's own secrets, made as the app makes them on a first start (before the databases
  // arrive: it refuses databases without the key that sealed their secrets; these hold none).
  ensureSecrets(dataDir, {
    jwtSecret: config.jwtSecret,
    encryptionKey: config.secretsEncryptionKey,
  });
  for (const db of DATABASES) copyFileSync(join(dir, db), join(dataDir, db));
  return true;
}

function hasDatabases(dir: string): boolean {
  try {
    const files = readdirSync(dir);
    return DATABASES.every((db) => files.includes(db));
  } catch {
    return false;
  }
}

/**
 * Migrates and seeds in a scratch directory, closes the databases (their WAL folded into the
 * files) and renames it into place, so a concurrent worker sees either no template or a whole one.
 */
async function buildTemplate(
  root: string,
  dir: string,
  config: AppConfig,
  now: number,
): Promise<void> {
  mkdirSync(root, { recursive: true });
  const scratch = mkdtempSync(join(root, 'building-'));
  await migrateAndSeed(
    (name, entities, migrations) => sqliteOptions(name, scratch, entities, migrations),
    config,
    scratch,
    now,
  );
  try {
    renameSync(scratch, dir);
  } catch {
    // Another worker put its copy there first: use that one.
    rmSync(scratch, { recursive: true, force: true });
  }
}

type Options = Parameters<typeof sqliteOptions>;
type OptionsOf = (name: string, entities: Options[2], migrations: Options[3]) => DataSourceOptions;

/**
 * The three databases migrated and seeded as the app's first boot does them (`optionsOf` says
 * where: SQLite files, or PostgreSQL schemas, see test-database.ts); then `more`, with the same
 * seeds, before the databases close.
 */
export async function migrateAndSeed(
  optionsOf: OptionsOf,
  config: AppConfig,
  dataDir: string,
  now: number,
  more?: (seed: SeedService) => Promise<void>,
): Promise<void> {
  const open = (name: string, entities: Options[2], migrations: Options[3]) =>
    openDatabase(optionsOf(name, entities, migrations));
  const platform = await open(PLATFORM_DB, PLATFORM_ENTITIES, PLATFORM_MIGRATIONS);
  const live = await open(ENGINE_DB.live, ENGINE_ENTITIES, ENGINE_MIGRATIONS);
  const paper = await open(ENGINE_DB.test, ENGINE_ENTITIES, ENGINE_MIGRATIONS);
  try {
    // Seeding reads no secret.
    const service = new ConfigService({ ...config, dataDir }, { jwtSecret: '', encryptionKey: '' });
    // The seeded accounts' ids one millisecond early: on a fresh boot they come first from the
    // app's own id generator, so every id the app mints after them sorts after them; a copy's
    // app starts its generator anew, and ids of the same millisecond would sort at random.
    const ids = new IdGenerator(() => now - 1);
    const seed = new SeedService(
      platform,
      live,
      paper,
      new ManualClock(new Date(now).toISOString()),
      ids,
      service,
      new UsersService(platform, service),
    );
    await seed.onModuleInit();
    await more?.(seed);
  } finally {
    await Promise.all([platform.destroy(), live.destroy(), paper.destroy()]);
  }
}
