import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ConfigService } from '../config/config.service.js';
import { sqliteDatabaseOf, ENGINE_DB, PLATFORM_DB } from './databases.js';
import { WalCheckpointer, type CheckpointResult } from './wal-checkpointer.js';

/** Runs the {@link WalCheckpointer} over the three databases while the app is up. */
@Injectable()
export class WalCheckpointService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('Database');
  private readonly checkpointer = new WalCheckpointer();

  constructor(
    private readonly config: ConfigService,
    @InjectDataSource(PLATFORM_DB) private readonly platform: DataSource,
    @InjectDataSource(ENGINE_DB.live) private readonly live: DataSource,
    @InjectDataSource(ENGINE_DB.test) private readonly paper: DataSource,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const interval = this.config.values.sqliteCheckpointIntervalMs;
    // PostgreSQL checkpoints itself: nothing of SQLite's log to fold back on that path.
    if (interval === 0 || this.config.values.databaseUrl !== null) return;
    const writers = [this.platform, this.live, this.paper].map((ds) => {
      const db = sqliteDatabaseOf(ds);
      return { file: String(ds.options.database), pragma: (sql: string) => db.pragma(sql) };
    });
    try {
      await this.checkpointer.start(writers, interval);
    } catch (err) {
      this.log.warn(
        `WAL checkpoints stay inside commits (the worker did not start): ${
          err instanceof Error ? err.message : String(err)
        }`,
      );
    }
  }

  get running(): boolean {
    return this.checkpointer.running;
  }

  /** How many times the writer finished a nearly copied log itself. */
  get finishedByWriter(): number {
    return this.checkpointer.finishedByWriter;
  }

  checkpointNow(): Promise<CheckpointResult[]> {
    return this.checkpointer.checkpointNow();
  }

  async onModuleDestroy(): Promise<void> {
    await this.checkpointer.stop();
  }
}
