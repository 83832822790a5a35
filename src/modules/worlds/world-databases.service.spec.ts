import { describe, expect, it } from '@jest/globals';
import type { Database } from 'better-sqlite3';
import type { DataSource } from 'typeorm';
import { WorldDatabases } from './world-databases.service.js';

/** A data source whose driver holds `db` as its better-sqlite3 connection (as TypeORM's does). */
const source = (db: object): DataSource =>
  ({ driver: { databaseConnection: db } }) as unknown as DataSource;

describe('WorldDatabases.perWorld', () => {
  it("makes one value per world on that world's connection", () => {
    const live = { name: 'live.db' };
    const paper = { name: 'paper.db' };
    const worlds = new WorldDatabases(source(live), source(paper));
    const made = worlds.perWorld((db: Database, world) => ({ db, world }));
    expect(made.live).toEqual({ db: live, world: 'live' });
    expect(made.test).toEqual({ db: paper, world: 'test' });
    expect(Object.keys(made).sort()).toEqual(['live', 'test']);
  });
});
