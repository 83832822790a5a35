import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import {
  connectionOf,
  ENGINE_DB,
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  sqliteOptions,
} from '../../database/databases.js';
import type { WorldStorage } from './world-storage.js';
import { WorldDatabases } from './world-databases.service.js';
import { WorldMarkets } from './world-markets.service.js';

const AT = '2026-11-22T12:00:00.000Z';

/** "Is this market in this world", on two migrated engine databases holding different markets. */
describe('WorldMarkets', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-world-markets-'));
  const live = new DataSource(
    sqliteOptions(ENGINE_DB.live, dir, ENGINE_ENTITIES, ENGINE_MIGRATIONS),
  );
  const paper = new DataSource(
    sqliteOptions(ENGINE_DB.test, dir, ENGINE_ENTITIES, ENGINE_MIGRATIONS),
  );
  let markets: WorldMarkets;

  beforeAll(async () => {
    for (const [ds, ids] of [
      [live, ['mkt_live1']],
      [paper, ['mkt_paper1', 'mkt_paper2']],
    ] as const) {
      await ds.initialize();
      const insert = connectionOf(ds).prepare(
        `INSERT INTO markets (id, slug, title, description, category, status, close_time,
           reference_price, volume, created_at, updated_at)
         VALUES (?, ?, ?, '', 'CULTURE', 'OPEN', '2027-01-01T00:00:00.000Z', 50, 0, ?, ?)`,
      );
      for (const id of ids) insert.run(id, `slug-${id}`, `Title ${id}`, AT, AT);
    }
    markets = new WorldMarkets(new WorldDatabases(live, paper, {} as WorldStorage));
  });
  afterAll(async () => {
    await live.destroy();
    await paper.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const notFound = (fn: () => unknown, id: string): void => {
    let thrown: unknown;
    try {
      fn();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ code: 'NOT_FOUND', details: { market_id: id } });
  };

  it("answers a market's state in its own world only; unknown, other-world and malformed ids are 404 naming them", () => {
    expect(markets.require('test', 'mkt_paper1')).toEqual({ status: 'OPEN', resolved_at: null });
    expect(markets.require('live', 'mkt_live1')).toEqual({ status: 'OPEN', resolved_at: null });
    notFound(() => markets.require('live', 'mkt_paper1'), 'mkt_paper1');
    notFound(() => markets.require('test', 'mkt_nope'), 'mkt_nope');
    notFound(() => markets.require('test', "x' OR 1=1"), "x' OR 1=1");
  });

  it('requireAll names the first id the world lacks; an empty list passes', () => {
    expect(() => markets.requireAll('test', [])).not.toThrow();
    expect(() => markets.requireAll('test', ['mkt_paper2', 'mkt_paper1'])).not.toThrow();
    notFound(() => markets.requireAll('test', ['mkt_paper1', 'mkt_live1', 'mkt_x']), 'mkt_live1');
  });
});
