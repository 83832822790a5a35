import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ConfigService } from '../config/config.service.js';
import {
  ENGINE_DB,
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  PLATFORM_DB,
  PLATFORM_ENTITIES,
  PLATFORM_MIGRATIONS,
  sqliteOptions,
} from './databases.js';
import { WalCheckpointService } from './wal-checkpoint.service.js';

const engineDb = (name: string) =>
  TypeOrmModule.forRootAsync({
    name,
    inject: [ConfigService],
    useFactory: (c: ConfigService) =>
      sqliteOptions(name, c.values.dataDir, ENGINE_ENTITIES, ENGINE_MIGRATIONS),
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
      useFactory: (c: ConfigService) =>
        sqliteOptions(PLATFORM_DB, c.values.dataDir, PLATFORM_ENTITIES, PLATFORM_MIGRATIONS),
    }),
    engineDb(ENGINE_DB.live),
    engineDb(ENGINE_DB.test),
  ],
  providers: [WalCheckpointService],
  exports: [WalCheckpointService],
})
export class DatabaseModule {}
