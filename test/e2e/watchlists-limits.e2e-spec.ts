import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, type Running } from '../support/harness.js';
import { as, startOrdersApp, TRADABLE, trader, type Trader } from '../support/orders.js';
import { watchlistClient } from '../support/watchlists.js';
import { openDatabaseOf } from '../support/test-database.js';

const SCOPES = ['watchlist:read', 'watchlist:write', 'markets:read'];
/** Markets added to the paper world beside the 26 seeded ones, so a list can pass 200. */
const EXTRA = 220;

/** A market the seed does not have, id derived from its slug as the seeder derives them. */
const extraId = (i: number) =>
  `mkt_${createHash('sha256').update(`watch-extra-${i}`).digest('hex').slice(0, 20)}`;

/** Adds EXTRA open markets to DATA_DIR/paper.sqlite while the service is stopped. */
function addPaperMarkets(dataDir: string): void {
  const db = openDatabaseOf(dataDir, 'paper');
  try {
    const insert = db.prepare(
      `INSERT INTO markets (id, slug, title, description, category, status, outcome, close_time,
         reference_price, last_price, volume, created_at, updated_at)
       VALUES (?, ?, ?, '', 'CULTURE', 'OPEN', NULL, '2027-12-31T00:00:00.000Z', 50, NULL, 0,
         '2026-11-22T12:00:00.000Z', '2026-11-22T12:00:00.000Z')`,
    );
    db.transaction(() => {
      for (let i = 0; i < EXTRA; i++) {
        insert.run(extraId(i), `watch-extra-${i}`, `Extra market ${i}`);
      }
    })();
  } finally {
    db.close();
  }
}

/**
 * The cap of 200 markets per watchlist (422 WATCHLIST_LIMIT_REACHED, details.limit 200), which
 * needs more markets than the seed has: the service is started once to create its databases,
 * stopped, given 220 more paper markets, and started again on the same DATA_DIR (so the engine
 * restores them like any market).
 */
describe('watchlists: 200 markets per list', () => {
  let svc: Running;
  let t: Trader;
  const markets = Array.from({ length: EXTRA }, (_, i) => extraId(i));
  let wl: ReturnType<typeof watchlistClient>;
  const call = (method: string, path: string, json?: unknown) => wl.call(t, method, path, json);

  beforeAll(async () => {
    const first = await startOrdersApp();
    await first.close({ keepData: true });
    addPaperMarkets(first.dataDir);
    svc = await startOrdersApp({ dataDir: first.dataDir });
    wl = watchlistClient(svc);
    t = await trader(svc, 'limits@watch.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('the added markets are markets of the paper world', async () => {
    const res = await as(t, `${svc.api}/markets/${markets[0]}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: markets[0], status: 'OPEN', environment: 'test' });
  });

  it('market_ids: 200 are taken, 201 are 422 details.limit 200 and nothing is created', async () => {
    const full = await call('POST', '', { name: 'Full', market_ids: markets.slice(0, 200) });
    expect(full.status).toBe(201);
    expect((full.body.markets as { id: string }[]).map((m) => m.id)).toEqual(markets.slice(0, 200));
    const over = expectContractError(
      await call('POST', '', { name: 'Over', market_ids: markets.slice(0, 201) }),
      422,
      'WATCHLIST_LIMIT_REACHED',
    );
    expect(over.details).toEqual({ limit: 200 });
    const patched = expectContractError(
      await call('PATCH', `/${full.body.id as string}`, {
        name: 'Renamed',
        market_ids: markets.slice(1, 202),
      }),
      422,
      'WATCHLIST_LIMIT_REACHED',
    );
    expect(patched.details).toEqual({ limit: 200 });
    expect((await call('GET', `/${full.body.id as string}`)).body).toEqual(full.body);
    const names = ((await call('GET', '')).body.data as { name: string }[]).map((w) => w.name);
    expect(names).toEqual(['Full']);
  });

  it('append: the 201st market is 422 details.limit 200; one already in the list is 200 unchanged', async () => {
    const w = await call('POST', '', { name: 'Append', market_ids: markets.slice(0, 199) });
    expect(w.status).toBe(201);
    const id = w.body.id as string;
    const the200th = await call('POST', `/${id}/markets`, { market_id: TRADABLE[0].id });
    expect(the200th.status).toBe(200);
    expect(the200th.body.markets).toHaveLength(200);
    expect(the200th.body.markets[199].id).toBe(TRADABLE[0].id);
    const the201st = expectContractError(
      await call('POST', `/${id}/markets`, { market_id: markets[210] }),
      422,
      'WATCHLIST_LIMIT_REACHED',
    );
    expect(the201st.details).toEqual({ limit: 200 });
    const member = await call('POST', `/${id}/markets`, { market_id: markets[5] });
    expect(member.status).toBe(200);
    expect(member.body).toEqual(the200th.body);
    // Room again after a removal.
    expect((await call('DELETE', `/${id}/markets/${markets[5]}`)).status).toBe(204);
    const again = await call('POST', `/${id}/markets`, { market_id: markets[210] });
    expect(again.status).toBe(200);
    expect(again.body.markets).toHaveLength(200);
    expect(again.body.markets[199].id).toBe(markets[210]);
  });

  it('the cap of 200 holds under concurrent appends', async () => {
    const w = await call('POST', '', { name: 'Race', market_ids: markets.slice(0, 197) });
    expect(w.status).toBe(201);
    const id = w.body.id as string;
    const answers = await Promise.all(
      markets.slice(200, 208).map((m) => call('POST', `/${id}/markets`, { market_id: m })),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 422)).toHaveLength(5);
    const after = (await call('GET', `/${id}`)).body.markets as { id: string }[];
    expect(after).toHaveLength(200);
    expect(new Set(after.map((m) => m.id)).size).toBe(200);
  });
});
