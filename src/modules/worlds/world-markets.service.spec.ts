import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ENGINE_DB } from '../../database/databases.js';
import { insertMarkets, TempEngineDbs, type EngineDb } from '../../../test/support/engine-dbs.js';
import type { WorldStorage } from './world-storage.js';
import { WorldDatabases } from './world-databases.service.js';
import { WorldMarkets } from './world-markets.service.js';

const AT = '2026-11-22T12:00:00.000Z';

/** "Is this market in this world", on two migrated engine databases holding different markets. */
describe('WorldMarkets', () => {
  const dbs = new TempEngineDbs('svc-world-markets-');
  let markets: WorldMarkets;

  beforeAll(async () => {
    const paper: EngineDb = await dbs.open(ENGINE_DB.test);
    const live: EngineDb = await dbs.open(ENGINE_DB.live, paper);
    insertMarkets(live.db, ['mkt_live1'], AT);
    insertMarkets(paper.db, ['mkt_paper1', 'mkt_paper2'], AT);
    markets = new WorldMarkets(new WorldDatabases(live.ds, paper.ds, {} as WorldStorage));
  });
  afterAll(() => dbs.close());

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
