import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { openDatabase, sqliteOptions } from './databases.js';

/** Counts its runs; its table makes a second run fail. */
function migration(name: string, table: string, runs: string[]) {
  return class implements MigrationInterface {
    name = name;
    async up(q: QueryRunner): Promise<void> {
      runs.push(name);
      await q.query(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY)`);
    }
    async down(): Promise<void> {}
  };
}

/**
 * openDatabase skips TypeORM's migration run when every migration of this version is applied,
 * and still runs the ones a database lacks.
 */
describe('openDatabase: the migrations a database lacks', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-open-db-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const runs: string[] = [];
  const first = migration('First1700000000001', 'first_table', runs);
  const second = migration('Second1700000000002', 'second_table', runs);
  const open = async (migrations: (typeof first)[]) =>
    (await openDatabase(sqliteOptions('db', dir, [], migrations))).destroy();

  it('runs each once: a new one on a migrated database, none on one migrated whole', async () => {
    await open([first]);
    expect(runs).toEqual(['First1700000000001']);
    await open([first, second]);
    expect(runs).toEqual(['First1700000000001', 'Second1700000000002']);
    await open([first, second]);
    expect(runs).toEqual(['First1700000000001', 'Second1700000000002']);
  });
});
