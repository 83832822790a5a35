import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import type { WorldId } from '../../common/environment.js';
import { PgSyncConnection } from '../../common/sql/pg-sync-connection.js';
import type { SqlConnection } from '../../common/sql/sql-connection.js';
import { ConfigService } from '../../config/config.service.js';
import { connectionOf, ENGINE_DB } from '../../database/databases.js';
import {
  looksWhole,
  openWorldFile,
  WORLD_FILE_SUFFIXES,
  worldFile,
  worldFilesIn,
  worldIdOfFile,
} from './world-files.js';

/** Something stored under a world's name that a boot may find without a registry row. */
export interface WorldLeftover {
  /** What it is called where it lives (a file name, a schema name). */
  name: string;
  id: WorldId;
  /** A create cut short (a `.part` file): removed even when the world has a row. */
  partial: boolean;
}

/**
 * Where an ephemeral world's engine database lives: a SQLite file in DATA_DIR/worlds, or (with
 * DATABASE_URL) a PostgreSQL schema named after the world in the service's database. The template
 * copy that creates one is WorldTemplate's.
 */
@Injectable()
export class WorldStorage {
  readonly postgres: boolean;

  constructor(
    private readonly config: ConfigService,
    @InjectDataSource(ENGINE_DB.test) private readonly paper: DataSource,
  ) {
    this.postgres = config.values.databaseUrl !== null;
  }

  /** The world's connection, or null when its database is gone. */
  open(id: WorldId): SqlConnection | null {
    if (this.postgres) {
      return this.schemaExists(id)
        ? new PgSyncConnection(this.config.values.databaseUrl!, id)
        : null;
    }
    const file = worldFile(this.config.values.dataDir, id);
    return existsSync(file) ? openWorldFile(file) : null;
  }

  /**
   * Whether the world's database is all there: a file's header and size (world-files.ts); a
   * schema exists whole or not at all (its copy is one transaction).
   */
  isWhole(id: WorldId): boolean {
    if (this.postgres) return this.schemaExists(id);
    return looksWhole(worldFile(this.config.values.dataDir, id));
  }

  /** Deletes the world's database (its file and SQLite's companions, or its schema). */
  async remove(id: WorldId): Promise<void> {
    if (this.postgres) {
      await this.paper.query(`DROP SCHEMA IF EXISTS "${id}" CASCADE`);
      return;
    }
    const file = worldFile(this.config.values.dataDir, id);
    for (const suffix of WORLD_FILE_SUFFIXES) rmSync(`${file}${suffix}`, { force: true });
  }

  /** Every world database present, by the name it is stored under. */
  async leftovers(): Promise<WorldLeftover[]> {
    if (this.postgres) {
      const rows = (await this.paper.query(
        `SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE 'wld\\_%'`,
      )) as { name: string }[];
      return rows.map((r) => ({ name: r.name, id: r.name as WorldId, partial: false }));
    }
    return worldFilesIn(this.dir()).map((name) => ({
      name,
      id: worldIdOfFile(name)! as WorldId,
      partial: name.endsWith('.part'),
    }));
  }

  /** Deletes one leftover by its stored name. */
  async removeLeftover(leftover: WorldLeftover): Promise<void> {
    if (this.postgres) {
      await this.remove(leftover.id);
      return;
    }
    rmSync(join(this.dir(), leftover.name), { force: true });
  }

  private dir(): string {
    return join(this.config.values.dataDir, 'worlds');
  }

  private schemaExists(id: WorldId): boolean {
    const row = connectionOf(this.paper)
      .prepare('SELECT 1 AS found FROM pg_namespace WHERE nspname = ?')
      .get(id);
    return row !== undefined;
  }
}
