import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Database } from 'better-sqlite3';
import type { DataSource } from 'typeorm';
import type { Environment } from '../../common/environment.js';
import { connectionOf, ENGINE_DB } from '../../database/databases.js';

/**
 * The database of each world (its engine database): where the records of the world-scoped groups
 * live, beside the world's orders and positions, so a world's data stays in its own file.
 */
@Injectable()
export class WorldDatabases {
  private readonly sources: Record<Environment, DataSource>;

  constructor(
    @InjectDataSource(ENGINE_DB.live) live: DataSource,
    @InjectDataSource(ENGINE_DB.test) paper: DataSource,
  ) {
    this.sources = { live, test: paper };
  }

  dataSource(world: Environment): DataSource {
    return this.sources[world];
  }

  /** The better-sqlite3 connection, for prepared statements. */
  connection(world: Environment): Database {
    return connectionOf(this.sources[world]);
  }

  /**
   * One `T` per world, each made on that world's connection: how a module holds its per-world
   * repositories (`worlds.perWorld((db) => new CommentsRepository(db))`).
   */
  perWorld<T>(make: (db: Database, world: Environment) => T): Record<Environment, T> {
    return {
      live: make(this.connection('live'), 'live'),
      test: make(this.connection('test'), 'test'),
    };
  }
}
