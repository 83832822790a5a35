import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ConfigError } from '../config/app-config.js';
import { ConfigService } from '../config/config.service.js';
import {
  ENGINE_DB,
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  PLATFORM_DB,
  PLATFORM_ENTITIES,
  PLATFORM_MIGRATIONS,
  openDatabase,
  sqliteOptions,
} from './databases.js';
import { WalCheckpointService } from './wal-checkpoint.service.js';

/** A configuration error (a newer schema, see openDatabase) stops the boot at once. */
const noRetryOnConfig = {
  toRetry: (err: unknown) => !(err instanceof ConfigError),
};

const engineDb = (name: string) =>
  TypeOrmModule.forRootAsync({
    name,
    inject: [ConfigService],
    useFactory: (c: ConfigService) => ({
      ...sqliteOptions(name, c.values.dataDir, ENGINE_ENTITIES, ENGINE_MIGRATIONS),
      ...noRetryOnConfig,
    }),
    dataSourceFactory: (options) => openDatabase(options!),
  });

/**
 * Three SQLite databases: the platform (accounts, keys, webhooks), the live engine and the paper
 * engine, so the paper world can be reset or rebuilt without touching anything else.
 */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      name: PLATFORM_DB,
      inject: [ConfigService],
      useFactory: (c: ConfigService) => ({
        ...sqliteOptions(PLATFORM_DB, c.values.dataDir, PLATFORM_ENTITIES, PLATFORM_MIGRATIONS),
        ...noRetryOnConfig,
      }),
      dataSourceFactory: (options) => openDatabase(options!),
    }),
    engineDb(ENGINE_DB.live),
    engineDb(ENGINE_DB.test),
  ],
  providers: [WalCheckpointService],
  exports: [WalCheckpointService],
})
export class DatabaseModule {}
