import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { bearer } from '../support/access.js';
import { expectContractError, http, type JsonResponse, type Running } from '../support/harness.js';
import {
  as,
  expectValidation,
  keyFor,
  paperQuery,
  SEED_MARKETS,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { allPages } from '../support/wallet.js';

/** Every scope the tests use: watchlists, and orders:write + wallet:write for the sandbox controls. */
const SCOPES = [
  'watchlist:read',
  'watchlist:write',
  'markets:read',
  'orders:write',
  'wallet:write',
];
const TITLES = new Map(
  (
    JSON.parse(readFileSync(new URL('../../seeds/markets.json', import.meta.url), 'utf8')) as {
      slug: string;
      title: string;
    }[]
  ).map((m) => [m.slug, m.title]),
);
const UNKNOWN_MARKET = 'mkt_00000000000000000000';

type Market = (typeof TRADABLE)[number];
// Response bodies are JSON of many shapes; tests read them field by field.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Watchlist = any;

/**
 * Watchlists (GET/POST /watchlists, GET/PATCH/DELETE /watchlists/{id}, POST
 * /watchlists/{id}/markets, DELETE /watchlists/{id}/markets/{market_id}). The app starts at
 * 2026-11-22T12:00Z with the paper feed stopped: each paper book is the house ladder around the
 * market's reference price and moves only when a test moves it. The caps that need more markets
 * than the seed has are in watchlists-limits.e2e-spec.ts.
 */
describe('watchlists', () => {
  let svc: Running;
  /** User a: a test key, a live key, a read-only key and a key without watchlist scopes. */
  let a: Trader;
  let aLive: Trader;
  let aRead: Trader;
  let aNone: Trader;
  /** Another user. */
  let b: Trader;
  const [m1, m2, m3] = TRADABLE;
  const advance = (ms: number) => (svc.clock as ManualClock).advance(ms);
  const now = () => svc.clock.nowDate().toISOString();

  const call = (t: Pick<Trader, 'key'>, method: string, path: string, json?: unknown) =>
    as(t, `${svc.api}/watchlists${path}`, { method, json });
  async function create(t: Trader, name: string, marketIds?: string[]): Promise<Watchlist> {
    const res = await call(t, 'POST', '', { name, market_ids: marketIds });
    expect(res.status).toBe(201);
    return res.body;
  }
  const get = (t: Trader, id: string) => call(t, 'GET', `/${id}`);
  const ids = (w: Watchlist) => (w.markets as { id: string }[]).map((m) => m.id);
  /** A fresh user's test key (each cap test needs an empty world). */
  let fresh = 0;
  const newUser = (body: Record<string, unknown> = {}) =>
    trader(svc, `u${++fresh}@watch.test`, { scopes: SCOPES, ...body });

  /** A market as a watchlist shows it, read from GET /markets/{id} with the same key. */
  async function brief(t: Trader, m: Market): Promise<Record<string, unknown>> {
    const res = await as(t, `${svc.api}/markets/${m.id}`);
    expect(res.status).toBe(200);
    const { id, slug, title, status, last_price, best_bid, best_ask } = res.body;
    return { id, slug, title, status, last_price, best_bid, best_ask };
  }

  beforeAll(async () => {
    svc = await startOrdersApp();
    a = await trader(svc, 'a@watch.test', { scopes: SCOPES });
    aLive = await keyFor(svc, a.email, a.token, { environment: 'live', scopes: SCOPES });
    aRead = await keyFor(svc, a.email, a.token, { scopes: ['watchlist:read'] });
    aNone = await keyFor(svc, a.email, a.token, { scopes: ['markets:read'] });
    b = await trader(svc, 'b@watch.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('create, get, rename and replace, list, delete: exact bodies', async () => {
    const created = await call(a, 'POST', '', { name: 'Crypto', market_ids: [m1.id, m2.id] });
    expect(created.status).toBe(201);
    expect(created.headers.get('svc-api-version')).toBe('v1');
    const at = now();
    expect(created.body).toEqual({
      id: expect.stringMatching(/^wl_[a-z0-9]+$/),
      name: 'Crypto',
      markets: [await brief(a, m1), await brief(a, m2)],
      created_at: at,
      updated_at: at,
      environment: 'test',
    });
    // The paper ladder around the reference price, no trade yet; the seed's slug and title.
    expect(created.body.markets[0]).toEqual({
      id: m1.id,
      slug: m1.slug,
      title: TITLES.get(m1.slug),
      status: 'OPEN',
      last_price: null,
      best_bid: m1.reference - 1,
      best_ask: m1.reference + 1,
    });
    const id = created.body.id as string;
    expect((await get(a, id)).body).toEqual(created.body);

    advance(1000);
    const patched = await call(a, 'PATCH', `/${id}`, {
      name: 'Crypto majors',
      market_ids: [m3.id, m1.id],
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...created.body,
      name: 'Crypto majors',
      markets: [await brief(a, m3), await brief(a, m1)],
      updated_at: now(),
    });
    expect((await get(a, id)).body).toEqual(patched.body);
    const listed = await call(a, 'GET', '');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toContainEqual(patched.body);

    // An empty PATCH changes nothing, updated_at included.
    advance(1000);
    expect((await call(a, 'PATCH', `/${id}`, {})).body).toEqual(patched.body);

    const deleted = await call(a, 'DELETE', `/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    const gone = expectContractError(await get(a, id), 404, 'NOT_FOUND');
    expect(gone.details).toEqual({ watchlist_id: id });
    expectContractError(await call(a, 'DELETE', `/${id}`), 404, 'NOT_FOUND');
    expect(((await call(a, 'GET', '')).body.data as Watchlist[]).map((w) => w.id)).not.toContain(
      id,
    );
  });

  it('keeps the order given on create, on replace and on append; append of a member is 200 unchanged', async () => {
    const w = await create(a, 'Order', [m3.id, m1.id, m2.id]);
    expect(ids(w)).toEqual([m3.id, m1.id, m2.id]);
    const replaced = await call(a, 'PATCH', `/${w.id}`, { market_ids: [m2.id, m3.id] });
    expect(ids(replaced.body)).toEqual([m2.id, m3.id]);
    expect(replaced.body.name).toBe('Order');

    advance(1000);
    const appended = await call(a, 'POST', `/${w.id}/markets`, { market_id: m1.id });
    expect(appended.status).toBe(200);
    expect(ids(appended.body)).toEqual([m2.id, m3.id, m1.id]);
    expect(appended.body.updated_at).toBe(now());

    advance(1000);
    const again = await call(a, 'POST', `/${w.id}/markets`, { market_id: m3.id });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(appended.body);

    const removed = await call(a, 'DELETE', `/${w.id}/markets/${m3.id}`);
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    const after = (await get(a, w.id)).body;
    expect(ids(after)).toEqual([m2.id, m1.id]);
    expect(after.updated_at).toBe(now());
    // Not in the list (any more): 404 naming the market, the list unchanged.
    const notIn = expectContractError(
      await call(a, 'DELETE', `/${w.id}/markets/${m3.id}`),
      404,
      'NOT_FOUND',
    );
    expect(notIn.details).toEqual({ watchlist_id: w.id, market_id: m3.id });
    expectContractError(await call(a, 'DELETE', `/${w.id}/markets/nonsense`), 404, 'NOT_FOUND');
    expect((await get(a, w.id)).body).toEqual(after);
    // Appended after a removal, a market goes last.
    const last = await call(a, 'POST', `/${w.id}/markets`, { market_id: m3.id });
    expect(ids(last.body)).toEqual([m2.id, m1.id, m3.id]);
    // [] empties the list.
    expect((await call(a, 'PATCH', `/${w.id}`, { market_ids: [] })).body.markets).toEqual([]);
  });

  it('names are unique per user and world ignoring case, Unicode-aware', async () => {
    const u = await newUser();
    const crypto = await create(u, 'Crypto');
    const taken = expectContractError(
      await call(u, 'POST', '', { name: 'cRYPTO' }),
      409,
      'WATCHLIST_NAME_TAKEN',
    );
    expect(taken.details).toEqual({ watchlist_id: crypto.id });
    await create(u, 'Ärger');
    expectContractError(await call(u, 'POST', '', { name: 'ärger' }), 409, 'WATCHLIST_NAME_TAKEN');
    // The same name spelled with a combining diaeresis.
    expectContractError(
      await call(u, 'POST', '', { name: 'a\u0308rger' }),
      409,
      'WATCHLIST_NAME_TAKEN',
    );
    // Names that differ in more than case are different names.
    expect((await create(u, 'Arger')).name).toBe('Arger');
    // Renaming another list to a taken name is refused; a list may change its own name's case.
    const other = await create(u, 'Other');
    expectContractError(
      await call(u, 'PATCH', `/${other.id}`, { name: 'CRYPTO' }),
      409,
      'WATCHLIST_NAME_TAKEN',
    );
    const recased = await call(u, 'PATCH', `/${crypto.id}`, { name: 'CRYPTO' });
    expect(recased.status).toBe(200);
    expect(recased.body.name).toBe('CRYPTO');
    // The same name is free in the other world and for another user.
    const uLive = await keyFor(svc, u.email, u.token, { environment: 'live', scopes: SCOPES });
    expect((await create(uLive, 'crypto')).environment).toBe('live');
    expect((await create(b, 'Crypto')).name).toBe('Crypto');
  });

  it('at most 20 watchlists per user and world (422, details.limit 20)', async () => {
    const u = await newUser();
    for (let i = 1; i <= 20; i++) await create(u, `List ${i}`);
    const refused = expectContractError(
      await call(u, 'POST', '', { name: 'List 21' }),
      422,
      'WATCHLIST_LIMIT_REACHED',
    );
    expect(refused.details).toEqual({ limit: 20 });
    expect(await allPages(svc, u, '/watchlists')).toHaveLength(20);
    // The live world counts apart; a deletion makes room again.
    const uLive = await keyFor(svc, u.email, u.token, { environment: 'live', scopes: SCOPES });
    await create(uLive, 'List 21');
    const first = (await call(u, 'GET', '?limit=1')).body.data[0] as Watchlist;
    expect((await call(u, 'DELETE', `/${first.id}`)).status).toBe(204);
    await create(u, 'List 21');
  });

  it('the cap of 20 holds under concurrent creates', async () => {
    const u = await newUser();
    const answers = await Promise.all(
      Array.from({ length: 26 }, (_, i) => call(u, 'POST', '', { name: `Race ${i}` })),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(20);
    expect(statuses.filter((s) => s === 422)).toHaveLength(6);
    expect(await allPages(svc, u, '/watchlists')).toHaveLength(20);
  });

  it('an unknown market is 404 details.market_id, and nothing is written', async () => {
    const u = await newUser();
    const create404 = expectContractError(
      await call(u, 'POST', '', { name: 'Unknown', market_ids: [m1.id, UNKNOWN_MARKET] }),
      404,
      'NOT_FOUND',
    );
    expect(create404.details).toEqual({ market_id: UNKNOWN_MARKET });
    expect(await allPages(svc, u, '/watchlists')).toEqual([]);
    const w = await create(u, 'Known', [m1.id]);
    const append404 = expectContractError(
      await call(u, 'POST', `/${w.id}/markets`, { market_id: UNKNOWN_MARKET }),
      404,
      'NOT_FOUND',
    );
    expect(append404.details).toEqual({ market_id: UNKNOWN_MARKET });
    expect((await get(u, w.id)).body).toEqual(w);
  });

  it('a PATCH is all or nothing', async () => {
    const u = await newUser();
    const w = await create(u, 'Before', [m1.id, m2.id]);
    await create(u, 'Taken');
    advance(1000);
    const unknown = expectContractError(
      await call(u, 'PATCH', `/${w.id}`, { name: 'After', market_ids: [m3.id, UNKNOWN_MARKET] }),
      404,
      'NOT_FOUND',
    );
    expect(unknown.details).toEqual({ market_id: UNKNOWN_MARKET });
    expect((await get(u, w.id)).body).toEqual(w);
    expectContractError(
      await call(u, 'PATCH', `/${w.id}`, { name: 'taken', market_ids: [m3.id] }),
      409,
      'WATCHLIST_NAME_TAKEN',
    );
    expect((await get(u, w.id)).body).toEqual(w);
    expectValidation(
      await call(u, 'PATCH', `/${w.id}`, { name: 'After', market_ids: [m3.id, m3.id] }),
      'market_ids',
    );
    expect((await get(u, w.id)).body).toEqual(w);
  });

  it('market ids: a duplicate is 400 naming market_ids, a malformed one 400 naming market_ids[i]', async () => {
    const dup = expectValidation(
      await call(a, 'POST', '', { name: 'Dup', market_ids: [m1.id, m2.id, m1.id] }),
      'market_ids',
    );
    expect(dup.details.fields).toEqual([
      { field: 'market_ids', message: `market_ids[2] repeats market_ids[0] (${m1.id})` },
    ]);
    const malformed = expectValidation(
      await call(a, 'POST', '', { name: 'Bad', market_ids: [m1.id, 'ord_123', 'MKT_X'] }),
      'market_ids[1]',
      'market_ids[2]',
    );
    expect(malformed.details.fields).toHaveLength(2);
    const w = await create(a, 'Shapes');
    expectValidation(
      await call(a, 'PATCH', `/${w.id}`, { market_ids: ['mkt_ok', 'x'] }),
      'market_ids[1]',
    );
    expectValidation(
      await call(a, 'POST', `/${w.id}/markets`, { market_id: 'ord_1' }),
      'market_id',
    );
    const names = ((await call(a, 'GET', '?limit=200')).body.data as Watchlist[]).map(
      (x) => x.name,
    );
    expect(names).not.toContain('Dup');
    expect(names).not.toContain('Bad');
  });

  it('names: 1..64 visible characters, no control characters or bidi overrides (400 naming name)', async () => {
    const u = await newUser();
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
    ];
    for (const name of bad) {
      const err = expectValidation(await call(u, 'POST', '', { name }), 'name');
      expect(err.details.fields).toHaveLength(1);
    }
    for (const name of bad) {
      expectValidation(await call(u, 'PATCH', `/wl_anything`, { name }), 'name');
    }
    expect(await allPages(svc, u, '/watchlists')).toEqual([]);
    // 64 characters are counted as characters (code points): 64 emoji fit, as does markup,
    // returned exactly as stored.
    expect((await create(u, 'x'.repeat(64))).name).toBe('x'.repeat(64));
    expect((await create(u, '😀'.repeat(64))).name).toBe('😀'.repeat(64));
    const markup = '<b>Bold</b> & "quoted" 📈';
    const w = await create(u, markup);
    expect((await get(u, w.id)).body.name).toBe(markup);
  });

  it('unknown fields and wrong types are 400 naming the field', async () => {
    const w = await create(a, 'Types');
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
      expectValidation(await call(a, method, path, body), field);
    }
    expectValidation(await call(a, 'GET', '?limit=0'), 'limit');
    expectValidation(await call(a, 'GET', '?cursor=forged'), 'cursor');
    expect((await get(a, w.id)).body).toEqual(w);
  });

  it('worlds and users are apart: the other world or another user gets 404', async () => {
    const paper = await create(a, 'Paper only', [m1.id]);
    const live = await create(aLive, 'Live only', [m1.id]);
    expect(paper.environment).toBe('test');
    expect(live.environment).toBe('live');
    for (const [t, foreign] of [
      [aLive, paper],
      [a, live],
      [b, paper],
    ] as [Trader, Watchlist][]) {
      const tries: JsonResponse[] = [
        await get(t, foreign.id),
        await call(t, 'PATCH', `/${foreign.id}`, { name: 'Mine now' }),
        await call(t, 'POST', `/${foreign.id}/markets`, { market_id: m2.id }),
        await call(t, 'DELETE', `/${foreign.id}/markets/${m1.id}`),
        await call(t, 'DELETE', `/${foreign.id}`),
      ];
      for (const res of tries) {
        expect(expectContractError(res, 404, 'NOT_FOUND').details).toEqual({
          watchlist_id: foreign.id,
        });
      }
    }
    expect((await get(a, paper.id)).body).toEqual(paper);
    expect((await get(aLive, live.id)).body).toEqual(live);
    const paperIds = (await allPages<Watchlist>(svc, a, '/watchlists')).map((w) => w.id);
    const liveIds = (await allPages<Watchlist>(svc, aLive, '/watchlists')).map((w) => w.id);
    expect(paperIds).toContain(paper.id);
    expect(paperIds).not.toContain(live.id);
    expect(liveIds).toEqual([live.id]);
    // A session is the live world too.
    const session = await http(`${svc.api}/watchlists`, { headers: bearer(a.token) });
    expect(session.status).toBe(200);
    expect(session.body.data).toEqual([live]);
  });

  it("prices are the caller's engine's: moving a paper price moves the paper list only", async () => {
    const m = TRADABLE[5];
    const paper = await create(a, 'Priced paper', [m.id]);
    const live = await create(aLive, 'Priced live', [m.id]);
    expect(paper.markets[0]).toMatchObject({
      best_bid: m.reference - 1,
      best_ask: m.reference + 1,
    });
    const moved = m.reference + 10;
    const res = await as(a, `${svc.api}/sandbox/markets/${m.id}/price`, {
      method: 'POST',
      json: { price: moved },
    });
    expect(res.status).toBe(200);
    const paperAfter = (await get(a, paper.id)).body;
    expect(paperAfter.markets).toEqual([await brief(a, m)]);
    expect(paperAfter.markets[0]).toMatchObject({ best_bid: moved - 1, best_ask: moved + 1 });
    expect((await get(aLive, live.id)).body).toEqual(live);
    expect((await get(aLive, live.id)).body.markets).toEqual([await brief(aLive, m)]);
  });

  it('pages with limit and cursor, oldest first, bound to its world', async () => {
    const u = await newUser();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await create(u, `Page ${i}`)).id);
    const first = await call(u, 'GET', '?limit=2');
    expect(first.status).toBe(200);
    expect((first.body.data as Watchlist[]).map((w) => w.id)).toEqual(made.slice(0, 2));
    expect(typeof first.body.next_cursor).toBe('string');
    const second = await call(u, 'GET', `?limit=2&cursor=${first.body.next_cursor as string}`);
    expect((second.body.data as Watchlist[]).map((w) => w.id)).toEqual(made.slice(2, 4));
    const third = await call(u, 'GET', `?limit=2&cursor=${second.body.next_cursor as string}`);
    expect((third.body.data as Watchlist[]).map((w) => w.id)).toEqual(made.slice(4));
    expect(third.body.next_cursor).toBeNull();
    // A paper cursor means nothing in the live world.
    const uLive = await keyFor(svc, u.email, u.token, { environment: 'live', scopes: SCOPES });
    expectValidation(
      await call(uLive, 'GET', `?limit=2&cursor=${first.body.next_cursor as string}`),
      'cursor',
    );
  });

  it('lists created while paging show up once, on a later page: no duplicate, no gap', async () => {
    const u = await newUser();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await create(u, `Early ${i}`)).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let page = 0;
    do {
      const res: JsonResponse = await call(
        u,
        'GET',
        `?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`,
      );
      expect(res.status).toBe(200);
      seen.push(...(res.body.data as Watchlist[]).map((w) => w.id));
      cursor = res.body.next_cursor as string | null;
      if (++page <= 2) made.push((await create(u, `Late ${page}`)).id);
    } while (cursor !== null);
    expect(seen).toEqual(made);
    expect(new Set(seen).size).toBe(7);
  });

  it('a sandbox reset deletes your paper watchlists only', async () => {
    const u = await newUser();
    const uLive = await keyFor(svc, u.email, u.token, { environment: 'live', scopes: SCOPES });
    const p1 = await create(u, 'Paper 1', [m1.id, m2.id]);
    await create(u, 'Paper 2', [m3.id]);
    const live = await create(uLive, 'Live', [m1.id]);
    const others = await create(b, 'Not yours', [m1.id]);
    const reset = await as(u, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(reset.status).toBe(200);
    expect(reset.body.cleared).toMatchObject({ watchlists: 2 });
    expect(await allPages(svc, u, '/watchlists')).toEqual([]);
    expectContractError(await get(u, p1.id), 404, 'NOT_FOUND');
    expect(await allPages(svc, uLive, '/watchlists')).toEqual([live]);
    expect((await get(b, others.id)).body).toEqual(others);
    // Their markets went with them.
    expect(
      paperQuery(svc, 'SELECT * FROM watchlist_markets WHERE watchlist_id = ?', p1.id),
    ).toEqual([]);
    // The name is free again.
    await create(u, 'Paper 1');
    const again = await as(u, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(again.body.cleared).toMatchObject({ watchlists: 1 });
  });

  it('needs watchlist:read to read and watchlist:write to change (403 INSUFFICIENT_SCOPE)', async () => {
    const w = await create(a, 'Scoped', [m1.id]);
    expect((await call(aRead, 'GET', '')).status).toBe(200);
    expect((await get(aRead, w.id)).body).toEqual(w);
    const writes: [string, string, unknown][] = [
      ['POST', '', { name: 'Nope' }],
      ['PATCH', `/${w.id}`, { name: 'Nope' }],
      ['DELETE', `/${w.id}`, undefined],
      ['POST', `/${w.id}/markets`, { market_id: m2.id }],
      ['DELETE', `/${w.id}/markets/${m1.id}`, undefined],
    ];
    for (const [method, path, body] of writes) {
      const err = expectContractError(
        await call(aRead, method, path, body),
        403,
        'INSUFFICIENT_SCOPE',
      );
      expect(err.details.required_scopes).toEqual(['watchlist:write']);
    }
    for (const path of ['', `/${w.id}`]) {
      const err = expectContractError(await call(aNone, 'GET', path), 403, 'INSUFFICIENT_SCOPE');
      expect(err.details.required_scopes).toEqual(['watchlist:read']);
    }
    expectContractError(await http(`${svc.api}/watchlists`), 401, 'UNAUTHENTICATED');
    expect((await get(a, w.id)).body).toEqual(w);
  });

  // Last: it moves the service clock past a close time.
  it('a market past its close time reads CLOSED in the lists of both worlds at once', async () => {
    const closing = SEED_MARKETS.find((m) => m.slug === 'us-midterms-2026-house-flip');
    if (closing === undefined) throw new Error('seed market missing');
    const paper = await create(a, 'Closing', [closing.id, m1.id]);
    const live = await create(aLive, 'Closing', [closing.id]);
    expect(paper.markets[0].status).toBe('OPEN');
    advance(Date.parse('2027-01-03T17:00:00.000Z') - svc.clock.now());
    const paperAfter = (await get(a, paper.id)).body;
    expect(paperAfter.markets.map((m: { status: string }) => m.status)).toEqual(['CLOSED', 'OPEN']);
    // The house withdrew its quotes.
    expect(paperAfter.markets[0]).toMatchObject({ best_bid: null, best_ask: null });
    expect((await get(aLive, live.id)).body.markets[0].status).toBe('CLOSED');
  });
});
