import { afterAll, describe, expect, it } from '@jest/globals';
import BetterSqlite3 from 'better-sqlite3';
import type { SqlConnection } from '../../common/sql/sql-connection.js';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import type { ConfigService } from '../../config/config.service.js';
import { WorldDatabases } from './world-databases.service.js';
import { worldFile } from './world-files.js';
import { WorldStorage } from './world-storage.js';

/** A data source whose driver holds `db` as its better-sqlite3 connection (as TypeORM's does). */
const source = (db: object): DataSource =>
  ({ driver: { databaseConnection: db } }) as unknown as DataSource;

describe('WorldDatabases', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'world-dbs-'));
  const config = { values: { dataDir, databaseUrl: null } } as unknown as ConfigService;
  const storage = new WorldStorage(config, source({}));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("makes one value per world on that world's connection, lazily for an ephemeral world", () => {
    const live = { name: 'live.db' };
    const paper = { name: 'paper.db' };
    const worlds = new WorldDatabases(source(live), source(paper), storage);
    const made = worlds.perWorld((db: SqlConnection, world) => ({ db, world }));
    expect(made.get('live')).toEqual({ db: live, world: 'live' });
    expect(made.get('test')).toEqual({ db: paper, world: 'test' });
    expect([...made.entries()].map(([w]) => w).sort()).toEqual(['live', 'test']);

    mkdirSync(join(dataDir, 'worlds'), { recursive: true });
    new BetterSqlite3(worldFile(dataDir, 'wld_a')).close();
    const a = made.get('wld_a');
    expect(a.world).toBe('wld_a');
    expect(worlds.isLoaded('wld_a')).toBe(true);
    // Unloading drops every holder's value and closes the connection; the next use reopens.
    worlds.unload('wld_a');
    expect(worlds.isLoaded('wld_a')).toBe(false);
    expect((a.db as unknown as BetterSqlite3.Database).open).toBe(false);
    expect(made.get('wld_a').db).not.toBe(a.db);
    worlds.onModuleDestroy();
  });

  it('refuses a world without a file, or one the registry says may not open', () => {
    const worlds = new WorldDatabases(source({}), source({}), storage);
    expect(() => worlds.connection('wld_missing')).toThrow('no longer exists');
    new BetterSqlite3(worldFile(dataDir, 'wld_b')).close();
    worlds.setOpenable(() => false);
    expect(() => worlds.connection('wld_b')).toThrow('no longer exists');
  });
});
