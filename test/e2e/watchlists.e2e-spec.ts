import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { expectContractError, type Running } from '../support/harness.js';
import { operationDescription } from '../support/openapi.js';
import {
  expectValidation,
  keyFor,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { allPages } from '../support/wallet.js';
import {
  marketIdsOf,
  SEED_TITLES,
  UNKNOWN_MARKET,
  WATCH_SCOPES as SCOPES,
  watchlistClient,
  type Watchlist,
} from '../support/watchlists.js';

/**
 * Watchlists, what a list is and what it takes (POST/GET/PATCH/DELETE /watchlists[/{id}], POST
 * /watchlists/{id}/markets, DELETE /watchlists/{id}/markets/{market_id}): bodies, order, names,
 * the cap of 20 lists, market ids, validation. Worlds, prices, paging, reset and scopes are in
 * watchlists-worlds.e2e-spec.ts; the cap of 200 markets in watchlists-limits.e2e-spec.ts. The app
 * starts at 2026-11-22T12:00Z with the paper feed stopped: each paper book is the house ladder
 * around the market's reference price.
 */
describe('watchlists', () => {
  let svc: Running;
  let wl: ReturnType<typeof watchlistClient>;
  /** User a (a test key) and another user. */
  let a: Trader;
  let b: Trader;
  const [m1, m2, m3] = TRADABLE;
  const advance = (ms: number) => (svc.clock as ManualClock).advance(ms);
  const now = () => svc.clock.nowDate().toISOString();

  beforeAll(async () => {
    svc = await startOrdersApp();
    wl = watchlistClient(svc);
    a = await trader(svc, 'a@watch.test', { scopes: SCOPES });
    b = await trader(svc, 'b@watch.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('create, get, rename and replace, list, delete: exact bodies', async () => {
    const created = await wl.call(a, 'POST', '', { name: 'Crypto', market_ids: [m1.id, m2.id] });
    expect(created.status).toBe(201);
    expect(created.headers.get('svc-api-version')).toBe('v1');
    const at = now();
    expect(created.body).toEqual({
      id: expect.stringMatching(/^wl_[a-z0-9]+$/),
      name: 'Crypto',
      markets: [await wl.brief(a, m1), await wl.brief(a, m2)],
      created_at: at,
      updated_at: at,
      environment: 'test',
    });
    // The paper ladder around the reference price, no trade yet; the seed's slug and title.
    expect(created.body.markets[0]).toEqual({
      id: m1.id,
      slug: m1.slug,
      title: SEED_TITLES.get(m1.slug),
      status: 'OPEN',
      last_price: null,
      best_bid: m1.reference - 1,
      best_ask: m1.reference + 1,
    });
    const id = created.body.id as string;
    expect((await wl.get(a, id)).body).toEqual(created.body);

    advance(1000);
    const patched = await wl.call(a, 'PATCH', `/${id}`, {
      name: 'Crypto majors',
      market_ids: [m3.id, m1.id],
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...created.body,
      name: 'Crypto majors',
      markets: [await wl.brief(a, m3), await wl.brief(a, m1)],
      updated_at: now(),
    });
    expect((await wl.get(a, id)).body).toEqual(patched.body);
    const listed = await wl.call(a, 'GET', '');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toContainEqual(patched.body);

    // An empty PATCH changes nothing, updated_at included.
    advance(1000);
    expect((await wl.call(a, 'PATCH', `/${id}`, {})).body).toEqual(patched.body);

    const deleted = await wl.call(a, 'DELETE', `/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    const gone = expectContractError(await wl.get(a, id), 404, 'NOT_FOUND');
    expect(gone.details).toEqual({ watchlist_id: id });
    // A second DELETE (a retry) is 404: the list is gone; the operation says so.
    expectContractError(await wl.call(a, 'DELETE', `/${id}`), 404, 'NOT_FOUND');
    expect(await operationDescription(svc, 'delete', '/api/v1/watchlists/{id}')).toMatch(
      /second DELETE of the same id .* answers 404 NOT_FOUND/,
    );
    expect(((await wl.call(a, 'GET', '')).body.data as Watchlist[]).map((w) => w.id)).not.toContain(
      id,
    );
  });

  it('keeps the order given on create, on replace and on append; append of a member is 200 unchanged', async () => {
    const w = await wl.create(a, 'Order', [m3.id, m1.id, m2.id]);
    expect(marketIdsOf(w)).toEqual([m3.id, m1.id, m2.id]);
    const replaced = await wl.call(a, 'PATCH', `/${w.id}`, { market_ids: [m2.id, m3.id] });
    expect(marketIdsOf(replaced.body)).toEqual([m2.id, m3.id]);
    expect(replaced.body.name).toBe('Order');

    advance(1000);
    const appended = await wl.call(a, 'POST', `/${w.id}/markets`, { market_id: m1.id });
    expect(appended.status).toBe(200);
    expect(marketIdsOf(appended.body)).toEqual([m2.id, m3.id, m1.id]);
    expect(appended.body.updated_at).toBe(now());

    advance(1000);
    const again = await wl.call(a, 'POST', `/${w.id}/markets`, { market_id: m3.id });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(appended.body);

    const removed = await wl.call(a, 'DELETE', `/${w.id}/markets/${m3.id}`);
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    const after = (await wl.get(a, w.id)).body;
    expect(marketIdsOf(after)).toEqual([m2.id, m1.id]);
    expect(after.updated_at).toBe(now());
    // Not in the list (any more): 404 naming the market, the list unchanged.
    const notIn = expectContractError(
      await wl.call(a, 'DELETE', `/${w.id}/markets/${m3.id}`),
      404,
      'NOT_FOUND',
    );
    expect(notIn.details).toEqual({ watchlist_id: w.id, market_id: m3.id });
    expectContractError(await wl.call(a, 'DELETE', `/${w.id}/markets/nonsense`), 404, 'NOT_FOUND');
    expect((await wl.get(a, w.id)).body).toEqual(after);
    // Appended after a removal, a market goes last.
    const last = await wl.call(a, 'POST', `/${w.id}/markets`, { market_id: m3.id });
    expect(marketIdsOf(last.body)).toEqual([m2.id, m1.id, m3.id]);
    // [] empties the list.
    expect((await wl.call(a, 'PATCH', `/${w.id}`, { market_ids: [] })).body.markets).toEqual([]);
  });

  it('names are unique per user and world ignoring case, Unicode-aware', async () => {
    const u = await wl.newUser();
    const crypto = await wl.create(u, 'Crypto');
    const taken = expectContractError(
      await wl.call(u, 'POST', '', { name: 'cRYPTO' }),
      409,
      'WATCHLIST_NAME_TAKEN',
    );
    expect(taken.details).toEqual({ watchlist_id: crypto.id });
    await wl.create(u, 'Ärger');
    expectContractError(
      await wl.call(u, 'POST', '', { name: 'ärger' }),
      409,
      'WATCHLIST_NAME_TAKEN',
    );
    // The same name spelled with a combining diaeresis.
    expectContractError(
      await wl.call(u, 'POST', '', { name: 'a\u0308rger' }),
      409,
      'WATCHLIST_NAME_TAKEN',
    );
    // Names that differ in more than case are different names.
    expect((await wl.create(u, 'Arger')).name).toBe('Arger');
    // Renaming another list to a taken name is refused; a list may change its own name's case.
    const other = await wl.create(u, 'Other');
    expectContractError(
      await wl.call(u, 'PATCH', `/${other.id}`, { name: 'CRYPTO' }),
      409,
      'WATCHLIST_NAME_TAKEN',
    );
    const recased = await wl.call(u, 'PATCH', `/${crypto.id}`, { name: 'CRYPTO' });
    expect(recased.status).toBe(200);
    expect(recased.body.name).toBe('CRYPTO');
    // The same name is free in the other world and for another user.
    const uLive = await keyFor(svc, u.email, u.token, { environment: 'live', scopes: SCOPES });
    expect((await wl.create(uLive, 'crypto')).environment).toBe('live');
    expect((await wl.create(b, 'Crypto')).name).toBe('Crypto');
  });

  it('at most 20 watchlists per user and world (422, details.limit 20)', async () => {
    const u = await wl.newUser();
    for (let i = 1; i <= 20; i++) await wl.create(u, `List ${i}`);
    const refused = expectContractError(
      await wl.call(u, 'POST', '', { name: 'List 21' }),
      422,
      'WATCHLIST_LIMIT_REACHED',
    );
    expect(refused.details).toEqual({ limit: 20 });
    expect(await allPages(svc, u, '/watchlists')).toHaveLength(20);
    // The live world counts apart; a deletion makes room again.
    const uLive = await keyFor(svc, u.email, u.token, { environment: 'live', scopes: SCOPES });
    await wl.create(uLive, 'List 21');
    const first = (await wl.call(u, 'GET', '?limit=1')).body.data[0] as Watchlist;
    expect((await wl.call(u, 'DELETE', `/${first.id}`)).status).toBe(204);
    await wl.create(u, 'List 21');
  });

  it('the cap of 20 holds under concurrent creates', async () => {
    const u = await wl.newUser();
    const answers = await Promise.all(
      Array.from({ length: 26 }, (_, i) => wl.call(u, 'POST', '', { name: `Race ${i}` })),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(20);
    expect(statuses.filter((s) => s === 422)).toHaveLength(6);
    expect(await allPages(svc, u, '/watchlists')).toHaveLength(20);
  });

  it('an unknown market is 404 details.market_id, and nothing is written', async () => {
    const u = await wl.newUser();
    const create404 = expectContractError(
      await wl.call(u, 'POST', '', { name: 'Unknown', market_ids: [m1.id, UNKNOWN_MARKET] }),
      404,
      'NOT_FOUND',
    );
    expect(create404.details).toEqual({ market_id: UNKNOWN_MARKET });
    expect(await allPages(svc, u, '/watchlists')).toEqual([]);
    const w = await wl.create(u, 'Known', [m1.id]);
    const append404 = expectContractError(
      await wl.call(u, 'POST', `/${w.id}/markets`, { market_id: UNKNOWN_MARKET }),
      404,
      'NOT_FOUND',
    );
    expect(append404.details).toEqual({ market_id: UNKNOWN_MARKET });
    expect((await wl.get(u, w.id)).body).toEqual(w);
  });

  it('a PATCH is all or nothing', async () => {
    const u = await wl.newUser();
    const w = await wl.create(u, 'Before', [m1.id, m2.id]);
    await wl.create(u, 'Taken');
    advance(1000);
    const unknown = expectContractError(
      await wl.call(u, 'PATCH', `/${w.id}`, { name: 'After', market_ids: [m3.id, UNKNOWN_MARKET] }),
      404,
      'NOT_FOUND',
    );
    expect(unknown.details).toEqual({ market_id: UNKNOWN_MARKET });
    expect((await wl.get(u, w.id)).body).toEqual(w);
    expectContractError(
      await wl.call(u, 'PATCH', `/${w.id}`, { name: 'taken', market_ids: [m3.id] }),
      409,
      'WATCHLIST_NAME_TAKEN',
    );
    expect((await wl.get(u, w.id)).body).toEqual(w);
    expectValidation(
      await wl.call(u, 'PATCH', `/${w.id}`, { name: 'After', market_ids: [m3.id, m3.id] }),
      'market_ids',
    );
    expect((await wl.get(u, w.id)).body).toEqual(w);
  });

  it('market ids: a duplicate is 400 naming market_ids, a malformed one 400 naming market_ids[i]', async () => {
    const dup = expectValidation(
      await wl.call(a, 'POST', '', { name: 'Dup', market_ids: [m1.id, m2.id, m1.id] }),
      'market_ids',
    );
    expect(dup.details.fields).toEqual([
      {
        field: 'market_ids',
        message: `market_ids must not repeat an id: market_ids[2] repeats market_ids[0] (${m1.id})`,
      },
    ]);
    const malformed = expectValidation(
      await wl.call(a, 'POST', '', { name: 'Bad', market_ids: [m1.id, 'ord_123', 'MKT_X'] }),
      'market_ids[1]',
      'market_ids[2]',
    );
    expect(malformed.details.fields).toHaveLength(2);
    const w = await wl.create(a, 'Shapes');
    expectValidation(
      await wl.call(a, 'PATCH', `/${w.id}`, { market_ids: ['mkt_ok', 'x'] }),
      'market_ids[1]',
    );
    expectValidation(
      await wl.call(a, 'POST', `/${w.id}/markets`, { market_id: 'ord_1' }),
      'market_id',
    );
    const names = ((await wl.call(a, 'GET', '?limit=200')).body.data as Watchlist[]).map(
      (x) => x.name,
    );
    expect(names).not.toContain('Dup');
    expect(names).not.toContain('Bad');
  });

  it('names: 1..64 visible characters on one line, no control characters, separators, bidi overrides or BOM (400 naming name)', async () => {
    const u = await wl.newUser();
    const bad = [
      '',
      'x'.repeat(65),
      ' ',
      '\u200b\u200b',
      '\u3164',
      'tab\there',
      'nul\u0000byte',
      'evil\u202egnp.exe',
      'iso\u2066late',
      'line\u2028separator',
      'para\u2029separator',
      '\ufeffbom',
    ];
    for (const name of bad) {
      const err = expectValidation(await wl.call(u, 'POST', '', { name }), 'name');
      expect(err.details.fields).toHaveLength(1);
    }
    for (const name of bad) {
      expectValidation(await wl.call(u, 'PATCH', `/wl_anything`, { name }), 'name');
    }
    expect(await allPages(svc, u, '/watchlists')).toEqual([]);
    // 64 characters are counted as characters (code points): 64 emoji fit, as does markup,
    // returned exactly as stored.
    expect((await wl.create(u, 'x'.repeat(64))).name).toBe('x'.repeat(64));
    expect((await wl.create(u, '😀'.repeat(64))).name).toBe('😀'.repeat(64));
    const markup = '<b>Bold</b> & "quoted" 📈';
    const w = await wl.create(u, markup);
    expect((await wl.get(u, w.id)).body.name).toBe(markup);
  });

  it('unknown fields and wrong types are 400 naming the field', async () => {
    const w = await wl.create(a, 'Types');
    const cases: [string, string, unknown, string][] = [
      ['POST', '', { name: 'x', colour: 'red' }, 'colour'],
      ['POST', '', { market_ids: [] }, 'name'],
      ['POST', '', { name: 5 }, 'name'],
      ['POST', '', { name: null }, 'name'],
      ['POST', '', { name: 'x', market_ids: m1.id }, 'market_ids'],
      ['POST', '', { name: 'x', market_ids: [1] }, 'market_ids'],
      ['POST', '', { name: 'x', market_ids: null }, 'market_ids'],
      ['PATCH', `/${w.id}`, { name: null }, 'name'],
      ['PATCH', `/${w.id}`, { market_ids: {} }, 'market_ids'],
      ['PATCH', `/${w.id}`, { id: 'wl_other' }, 'id'],
      ['POST', `/${w.id}/markets`, {}, 'market_id'],
      ['POST', `/${w.id}/markets`, { market_id: 7 }, 'market_id'],
      ['POST', `/${w.id}/markets`, { market_id: m1.id, position: 0 }, 'position'],
    ];
    for (const [method, path, body, field] of cases) {
      expectValidation(await wl.call(a, method, path, body), field);
    }
    expectValidation(await wl.call(a, 'GET', '?limit=0'), 'limit');
    expectValidation(await wl.call(a, 'GET', '?cursor=forged'), 'cursor');
    expect((await wl.get(a, w.id)).body).toEqual(w);
  });
});
