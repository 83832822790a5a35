import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { SqlConnection } from '../../src/common/sql/sql-connection.js';
import {
  connectionOf,
  ENGINE_DB,
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  sqliteOptions,
} from '../../src/database/databases.js';

/** One migrated engine database (SQLite) and its synchronous connection. */
export interface EngineDb {
  readonly ds: DataSource;
  readonly db: SqlConnection;
}

/**
 * Migrated engine databases (SQLite, the engine's migrations) in a temporary directory, for
 * specs of the SQL stores: `open` makes one, `close` closes them all and removes the directory.
 */
export class TempEngineDbs {
  private readonly dirs: string[] = [];
  private readonly sources: DataSource[] = [];

  constructor(private readonly prefix: string) {}

  /**
   * A database named `name` (paper's by default, `paper.sqlite`) in its own directory, or in
   * `withDb`'s (live beside paper, as in a data directory).
   */
  async open(name: string = ENGINE_DB.test, withDb?: EngineDb): Promise<EngineDb> {
    let dir: string;
    if (withDb === undefined) {
      dir = mkdtempSync(join(tmpdir(), this.prefix));
      this.dirs.push(dir);
    } else {
      const file = String(withDb.ds.options.database);
      dir = file.slice(0, file.lastIndexOf('/'));
    }
    const ds = new DataSource(sqliteOptions(name, dir, ENGINE_ENTITIES, ENGINE_MIGRATIONS));
    await ds.initialize();
    this.sources.push(ds);
    return { ds, db: connectionOf(ds) };
  }

  async close(): Promise<void> {
    for (const ds of this.sources.splice(0)) if (ds.isInitialized) await ds.destroy();
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

/** Open CULTURE markets with these ids (slug `slug-<id>`, title `Title <id>`), created at `at`. */
export function insertMarkets(db: SqlConnection, ids: readonly string[], at: string): void {
  const insert = db.prepare(
    `INSERT INTO markets (id, slug, title, description, category, status, close_time,
       reference_price, volume, created_at, updated_at)
     VALUES (?, ?, ?, '', 'CULTURE', 'OPEN', '2027-01-01T00:00:00.000Z', 50, 0, ?, ?)`,
  );
  for (const id of ids) insert.run(id, `slug-${id}`, `Title ${id}`, at, at);
}
