import { Module, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource, TypeOrmModule } from '@nestjs/typeorm';
import type { DataSource, DataSourceOptions } from 'typeorm';
import { ConfigError } from '../config/app-config.js';
import { ConfigService } from '../config/config.service.js';
import {
  ENGINE_DB,
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  PLATFORM_DB,
  PLATFORM_ENTITIES,
  PLATFORM_MIGRATIONS,
  closeConnectionOf,
  openDatabase,
  postgresOptions,
  sqliteOptions,
} from './databases.js';
import { WalCheckpointService } from './wal-checkpoint.service.js';

/** A configuration error (a newer schema, see openDatabase) stops the boot at once. */
const noRetryOnConfig = {
  toRetry: (err: unknown) => !(err instanceof ConfigError),
};

/** SQLite files in DATA_DIR, or schemas of DATABASE_URL's PostgreSQL database when it is set. */
const optionsFor = (
  c: ConfigService,
  name: string,
  entities: DataSourceOptions['entities'],
  migrations: typeof PLATFORM_MIGRATIONS,
) => ({
  ...(c.values.databaseUrl === null
    ? sqliteOptions(name, c.values.dataDir, entities, migrations)
    : postgresOptions(name, c.values.databaseUrl, entities, migrations)),
  ...noRetryOnConfig,
});

const database = (
  name: string,
  entities: DataSourceOptions['entities'],
  migrations: typeof PLATFORM_MIGRATIONS,
) =>
  TypeOrmModule.forRootAsync({
    name,
    inject: [ConfigService],
    useFactory: (c: ConfigService) => optionsFor(c, name, entities, migrations),
    dataSourceFactory: (options) => openDatabase(options!),
  });

/**
 * Three databases: the platform (accounts, keys, webhooks), the live engine and the paper engine,
 * so the paper world can be reset or rebuilt without touching anything else. SQLite files by
 * default; with DATABASE_URL, three schemas of one PostgreSQL database.
 */
@Module({
  imports: [
    database(PLATFORM_DB, PLATFORM_ENTITIES, PLATFORM_MIGRATIONS),
    database(ENGINE_DB.live, ENGINE_ENTITIES, ENGINE_MIGRATIONS),
    database(ENGINE_DB.test, ENGINE_ENTITIES, ENGINE_MIGRATIONS),
  ],
  providers: [WalCheckpointService],
  exports: [WalCheckpointService],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    @InjectDataSource(PLATFORM_DB) private readonly platform: DataSource,
    @InjectDataSource(ENGINE_DB.live) private readonly live: DataSource,
    @InjectDataSource(ENGINE_DB.test) private readonly paper: DataSource,
  ) {}

  /** After every module's own shutdown work: the synchronous PostgreSQL connections close. */
  onApplicationShutdown(): void {
    for (const ds of [this.platform, this.live, this.paper]) closeConnectionOf(ds);
  }
}
