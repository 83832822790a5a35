import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { DataSource } from 'typeorm';
import {
  sqliteDatabaseOf,
  ENGINE_DB,
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  sqliteOptions,
} from '../../database/databases.js';
import { nameKey } from './watchlist-rules.js';
import { WatchlistsRepository, type WatchlistRow } from './watchlists.repository.js';

const AT = '2026-11-22T12:00:00.000Z';
const row = (id: string, name: string): WatchlistRow => ({
  id,
  name,
  created_at: AT,
  updated_at: AT,
});

/** The repository against a migrated engine database (the schema of migration 1763769600017). */
describe('watchlists in an engine database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-watchlists-'));
  const ds = new DataSource(sqliteOptions(ENGINE_DB.test, dir, ENGINE_ENTITIES, ENGINE_MIGRATIONS));
  let db: Database;
  let repo: WatchlistsRepository;
  const markets = ['mkt_a1', 'mkt_b2', 'mkt_c3'];

  beforeAll(async () => {
    await ds.initialize();
    db = sqliteDatabaseOf(ds);
    const insert = db.prepare(
      `INSERT INTO markets (id, slug, title, description, category, status, close_time,
         reference_price, volume, created_at, updated_at)
       VALUES (?, ?, ?, '', 'CULTURE', 'OPEN', '2027-01-01T00:00:00.000Z', 50, 0, ?, ?)`,
    );
    for (const m of markets) insert.run(m, `slug-${m}`, `Title ${m}`, AT, AT);
    repo = new WatchlistsRepository(db);
  });
  afterAll(async () => {
    await ds.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the order of the markets, appends last, and lists them per list', () => {
    repo.insert('usr_1', row('wl_1', 'One'), nameKey('One'));
    repo.insert('usr_1', row('wl_2', 'Two'), nameKey('Two'));
    repo.replaceMarkets('wl_1', ['mkt_c3', 'mkt_a1']);
    repo.appendMarket('wl_1', 'mkt_b2');
    repo.appendMarket('wl_2', 'mkt_a1');
    expect(repo.memberIds('wl_1')).toEqual(['mkt_c3', 'mkt_a1', 'mkt_b2']);
    expect(repo.removeMarket('wl_1', 'mkt_a1')).toBe(true);
    expect(repo.removeMarket('wl_1', 'mkt_a1')).toBe(false);
    repo.appendMarket('wl_1', 'mkt_a1');
    expect(repo.listed(['wl_1', 'wl_2']).map((m) => [m.watchlist_id, m.id])).toEqual([
      ['wl_1', 'mkt_c3'],
      ['wl_1', 'mkt_b2'],
      ['wl_1', 'mkt_a1'],
      ['wl_2', 'mkt_a1'],
    ]);
  });

  it('the unique index holds one name key per user, whatever reaches it', () => {
    expect(() => repo.insert('usr_1', row('wl_3', 'ONE'), nameKey('ONE'))).toThrow(/UNIQUE/);
    repo.insert('usr_2', row('wl_4', 'One'), nameKey('One'));
    expect(repo.nameOwner('usr_1', nameKey('oNe'))).toBe('wl_1');
    expect(repo.nameOwner('usr_2', nameKey('one'))).toBe('wl_4');
  });

  it('refuses a market this world does not have (foreign key)', () => {
    expect(() => repo.appendMarket('wl_2', 'mkt_elsewhere')).toThrow(/FOREIGN KEY/);
  });

  it('scopes reads and deletes to the owner; a list takes its markets with it', () => {
    expect(repo.one('usr_2', 'wl_1')).toBeUndefined();
    expect(repo.delete('usr_2', 'wl_1')).toBe(false);
    expect(repo.page('usr_1', '', 10).map((w) => w.id)).toEqual(['wl_1', 'wl_2']);
    expect(repo.page('usr_1', 'wl_1', 10).map((w) => w.id)).toEqual(['wl_2']);
    expect(repo.deleteAll('usr_1')).toBe(2);
    expect(repo.count('usr_1')).toBe(0);
    expect(repo.count('usr_2')).toBe(1);
    const left = db.prepare('SELECT watchlist_id FROM watchlist_markets').all();
    expect(left).toEqual([]);
  });
});
