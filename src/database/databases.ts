import { chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { SqlConnection } from '../common/sql/sql-connection.js';
import { sqliteConnection } from '../common/sql/sqlite-dialect.js';
import { PgSyncConnection } from '../common/sql/pg-sync-connection.js';
import { DataSource, type DataSourceOptions, type MigrationInterface } from 'typeorm';
import { ConfigError } from '../config/app-config.js';
import type { Environment } from '../common/environment.js';
import { MarketEntity } from '../modules/markets/entities/market.entity.js';
import { IdempotencyRecordEntity } from '../modules/access/entities/idempotency-record.entity.js';
import { ApiKeyEntity } from '../modules/api-keys/entities/api-key.entity.js';
import { TierRequestEntity } from '../modules/api-keys/entities/tier-request.entity.js';
import { EmailVerificationEntity } from '../modules/auth/entities/email-verification.entity.js';
import { TermsAcceptanceEntity } from '../modules/auth/entities/terms-acceptance.entity.js';
import { CancelOnDisconnectEntity } from '../modules/realtime/cancel-on-disconnect.entity.js';
import { OutboxMailEntity } from '../modules/mail/entities/outbox-mail.entity.js';
import { UserEntity } from '../modules/users/entities/user.entity.js';
import { Access1763769600002 } from './migrations/1763769600002-access.js';
import { Realtime1763769600004 } from './migrations/1763769600004-realtime.js';
import { Webhooks1763769600005 } from './migrations/1763769600005-webhooks.js';
import { MfaLockouts1763769600008 } from './migrations/1763769600008-mfa-lockouts.js';
import { TierRequestPending1763769600009 } from './migrations/1763769600009-tier-request-pending.js';
import { WebhookAttemptStart1763769600010 } from './migrations/1763769600010-webhook-attempt-start.js';
import { WebhookWorkbench1763769600026 } from './migrations/1763769600026-webhook-workbench.js';
import { ActiveKeysIndex1763769600011 } from './migrations/1763769600011-active-keys-index.js';
import { MfaLockoutEntity } from '../modules/security/entities/mfa-lockout.entity.js';
import { PlatformInit1763769600000 } from './migrations/1763769600000-platform-init.js';
import { EngineInit1763769600001 } from './migrations/1763769600001-engine-init.js';
import { Trading1763769600003 } from './migrations/1763769600003-trading.js';
import { WebhookSpool1763769600006 } from './migrations/1763769600006-webhook-spool.js';
import { IdempotencyEffects1763769600007 } from './migrations/1763769600007-idempotency-effects.js';
import { IndexPoints1763769600012 } from './migrations/1763769600012-index-points.js';
import { RankHistory1763769600013 } from './migrations/1763769600013-rank-history.js';
import { UserProfiles1763769600014 } from './migrations/1763769600014-user-profiles.js';
import { NotificationWorlds1763769600015 } from './migrations/1763769600015-notification-worlds.js';
import { Comments1763769600016 } from './migrations/1763769600016-comments.js';
import { Watchlists1763769600017 } from './migrations/1763769600017-watchlists.js';
import { Rfq1763769600025 } from './migrations/1763769600025-rfq.js';
import { LedgerResetsIndex1763769600018 } from './migrations/1763769600018-ledger-resets-index.js';
import { SportsEvents1763769600020 } from './migrations/1763769600020-sports-events.js';
import { CryptoPrices1763769600021 } from './migrations/1763769600021-crypto-prices.js';
import { MarketCreators1763769600022 } from './migrations/1763769600022-market-creators.js';
import { RfqEngine1763769600024 } from './migrations/1763769600024-rfq-engine.js';
import { Worlds1763769600029 } from './migrations/1763769600029-worlds.js';
import { ClusterWriters1763769600030 } from './migrations/1763769600030-cluster-writers.js';
import { IdempotencyClaims1763769600032 } from './migrations/1763769600032-idempotency-claims.js';
import { WorldColumnWidths1763769600033 } from './migrations/1763769600033-world-column-widths.js';
import { PlatformColumnWidths1763769600037 } from './migrations/1763769600037-platform-column-widths.js';
import { Scenarios1763769600027 } from './migrations/1763769600027-scenarios.js';
import { DataExports1763769600023 } from './migrations/1763769600023-data-exports.js';
import { SelfTradePrevention1763769600028 } from './migrations/1763769600028-self-trade-prevention.js';
import { ExportRowOrder1763769600031 } from './migrations/1763769600031-export-row-order.js';

/** Names of the TypeORM data sources: the platform, and one engine database per environment. */
export const PLATFORM_DB = 'platform';
export const ENGINE_DB: Record<Environment, string> = { live: 'live', test: 'paper' };

type Ctor = new () => MigrationInterface;

/** The synchronous connections opened on PostgreSQL data sources, closed with them. */
const pgConnections = new WeakMap<DataSource, PgSyncConnection>();

/**
 * The synchronous SQL connection of a data source, for the prepared statements of hot paths
 * (TypeORM owns the schema; these run plain SQL beside it): on SQLite the better-sqlite3
 * connection under TypeORM itself, on PostgreSQL a PgSyncConnection to the same database with the
 * data source's schema as its search_path (opened on first use, closed by closeConnectionOf).
 */
export function connectionOf(ds: DataSource): SqlConnection {
  if (ds.options?.type !== 'postgres') return sqliteConnection(sqliteDatabaseOf(ds));
  let conn = pgConnections.get(ds);
  if (conn === undefined) {
    conn = new PgSyncConnection(String(ds.options.url), ds.options.schema);
    pgConnections.set(ds, conn);
    // It lives as long as the data source, as better-sqlite3's connection under TypeORM does.
    const destroy = ds.destroy.bind(ds);
    ds.destroy = () => {
      closeConnectionOf(ds);
      return destroy();
    };
  }
  return conn;
}

/** Closes the PostgreSQL connection connectionOf opened for `ds` (none on SQLite). */
export function closeConnectionOf(ds: DataSource): void {
  pgConnections.get(ds)?.close();
  pgConnections.delete(ds);
}

/** The better-sqlite3 connection itself, for SQLite-only machinery (checkpoints, pragmas). */
export function sqliteDatabaseOf(ds: DataSource): BetterSqlite3.Database {
  return (ds.driver as unknown as { databaseConnection: BetterSqlite3.Database })
    .databaseConnection;
}

/** A unique index refused the write (SQLite here; PostgreSQL's 23505 once it runs there). */
export function isUniqueViolation(err: unknown): boolean {
  const driver = (err as { driverError?: { code?: string } } | null)?.driverError;
  const code = driver?.code ?? (err as { code?: string } | null)?.code;
  return (
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    code === '23505'
  );
}

export const PLATFORM_ENTITIES = [
  UserEntity,
  ApiKeyEntity,
  TierRequestEntity,
  OutboxMailEntity,
  EmailVerificationEntity,
  TermsAcceptanceEntity,
  IdempotencyRecordEntity,
  CancelOnDisconnectEntity,
  MfaLockoutEntity,
];
export const PLATFORM_MIGRATIONS: Ctor[] = [
  PlatformInit1763769600000,
  Access1763769600002,
  Realtime1763769600004,
  Webhooks1763769600005,
  MfaLockouts1763769600008,
  TierRequestPending1763769600009,
  WebhookAttemptStart1763769600010,
  ActiveKeysIndex1763769600011,
  UserProfiles1763769600014,
  NotificationWorlds1763769600015,
  WebhookWorkbench1763769600026,
  Worlds1763769600029,
  ClusterWriters1763769600030,
  IdempotencyClaims1763769600032,
  WorldColumnWidths1763769600033,
  PlatformColumnWidths1763769600037,
];
export const ENGINE_ENTITIES = [MarketEntity];
export const ENGINE_MIGRATIONS: Ctor[] = [
  EngineInit1763769600001,
  Trading1763769600003,
  WebhookSpool1763769600006,
  IdempotencyEffects1763769600007,
  IndexPoints1763769600012,
  RankHistory1763769600013,
  Comments1763769600016,
  Watchlists1763769600017,
  LedgerResetsIndex1763769600018,
  SportsEvents1763769600020,
  CryptoPrices1763769600021,
  MarketCreators1763769600022,
  DataExports1763769600023,
  RfqEngine1763769600024,
  Rfq1763769600025,
  Scenarios1763769600027,
  SelfTradePrevention1763769600028,
  ExportRowOrder1763769600031,
];

/** better-sqlite3 in WAL mode with synchronous=NORMAL; schema by migrations, never synchronize. */
export function sqliteOptions(
  name: string,
  dataDir: string,
  entities: DataSourceOptions['entities'],
  migrations: Ctor[],
): DataSourceOptions {
  return {
    type: 'better-sqlite3',
    database: join(dataDir, `${name}.sqlite`),
    enableWAL: true,
    prepareDatabase: (db: { pragma(s: string): unknown }) => {
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      db.pragma('busy_timeout = 5000');
    },
    entities,
    migrations,
    migrationsRun: true,
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
  };
}

/**
 * The same database on PostgreSQL (`pg`): one schema per data source (`platform`, `live`,
 * `paper`) in the database of `url`, created if missing, with the same migrations. The schema is
 * the connection's search_path too, so migrations' raw SQL lands there as the schema API does.
 */
export function postgresOptions(
  name: string,
  url: string,
  entities: DataSourceOptions['entities'],
  migrations: Ctor[],
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    schema: name,
    extra: { options: `-c search_path=${name}` },
    entities,
    migrations,
    migrationsRun: true,
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
  };
}

/**
 * Opens a database: its schema is brought up to date by this version's migrations, but one that
 * a newer version migrated (it lists migrations this code does not know) is refused, as a
 * configuration error (exit 78), before anything runs on it: older code would misread the newer
 * schema (a unique index it does not expect answered 500s).
 */
export async function openDatabase(options: DataSourceOptions): Promise<DataSource> {
  const postgres = options.type === 'postgres';
  const file = postgres ? null : String(options.database);
  const created = file !== null && !existsSync(file);
  const ds = new DataSource({ ...options, migrationsRun: false } as DataSourceOptions);
  await ds.initialize();
  // Password and key hashes, ledgers: readable by the service's user only (its -wal and -shm
  // files take the database file's permissions). Existing files keep what the operator set.
  if (created && existsSync(file)) chmodSync(file, 0o600);
  try {
    if (postgres) await ds.query(`CREATE SCHEMA IF NOT EXISTS "${options.schema ?? 'public'}"`);
    const known = new Set(ds.migrations.map((m) => m.name ?? m.constructor.name));
    const table = ds.options.migrationsTableName ?? 'migrations';
    const runner = ds.createQueryRunner();
    const migrated = await runner.hasTable(table).finally(() => runner.release());
    let applied = 0;
    if (migrated) {
      const rows = (await ds.query(`SELECT name FROM ${table}`)) as { name: string }[];
      const unknown = rows.map((r) => r.name).filter((n) => !known.has(n));
      if (unknown.length > 0) {
        throw new ConfigError(
          postgres ? 'DATABASE_URL' : 'DATA_DIR',
          `holds a database (${postgres ? `schema ${options.schema}` : String(options.database)}) migrated by a newer version of this service (${unknown.join(', ')}); run that version, or restore a backup made before it`,
        );
      }
      applied = new Set(rows.map((r) => r.name)).size;
    }
    // Every migration of this version applied already (TypeORM tells them by name, as above): a
    // restart, or a copy of a migrated database, has nothing to run, and TypeORM's own check
    // (the table looked up again, every row read again) is skipped.
    if (applied < known.size) await ds.runMigrations({ transaction: 'each' });
    return ds;
  } catch (err) {
    await ds.destroy();
    throw err;
  }
}
