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
import { WATCH_SCOPES as SCOPES, watchlistClient, type Watchlist } from '../support/watchlists.js';

/**
 * Watchlists and their world: each world's lists apart (and each user's), priced by the world's
 * engine, paged oldest first, cleared by a sandbox reset (paper only), guarded by the watchlist
 * scopes. The app starts at 2026-11-22T12:00Z with the paper feed stopped.
 */
describe('watchlists: worlds, prices, paging, reset, scopes', () => {
  let svc: Running;
  let wl: ReturnType<typeof watchlistClient>;
  /** User a: a test key, a live key, a read-only key and a key without watchlist scopes. */
  let a: Trader;
  let aLive: Trader;
  let aRead: Trader;
  let aNone: Trader;
  /** Another user. */
  let b: Trader;
  const [m1, m2, m3] = TRADABLE;
  const advance = (ms: number) => (svc.clock as ManualClock).advance(ms);

  beforeAll(async () => {
    svc = await startOrdersApp();
    wl = watchlistClient(svc);
    a = await trader(svc, 'a@watch.test', { scopes: SCOPES });
    aLive = await keyFor(svc, a.email, a.token, { environment: 'live', scopes: SCOPES });
    aRead = await keyFor(svc, a.email, a.token, { scopes: ['watchlist:read'] });
    aNone = await keyFor(svc, a.email, a.token, { scopes: ['markets:read'] });
    b = await trader(svc, 'b@watch.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('worlds and users are apart: the other world or another user gets 404', async () => {
    const paper = await wl.create(a, 'Paper only', [m1.id]);
    const live = await wl.create(aLive, 'Live only', [m1.id]);
    expect(paper.environment).toBe('test');
    expect(live.environment).toBe('live');
    for (const [t, foreign] of [
      [aLive, paper],
      [a, live],
      [b, paper],
    ] as [Trader, Watchlist][]) {
      const tries: JsonResponse[] = [
        await wl.get(t, foreign.id),
        await wl.call(t, 'PATCH', `/${foreign.id}`, { name: 'Mine now' }),
        await wl.call(t, 'POST', `/${foreign.id}/markets`, { market_id: m2.id }),
        await wl.call(t, 'DELETE', `/${foreign.id}/markets/${m1.id}`),
        await wl.call(t, 'DELETE', `/${foreign.id}`),
      ];
      for (const res of tries) {
        expect(expectContractError(res, 404, 'NOT_FOUND').details).toEqual({
          watchlist_id: foreign.id,
        });
      }
    }
    expect((await wl.get(a, paper.id)).body).toEqual(paper);
    expect((await wl.get(aLive, live.id)).body).toEqual(live);
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
    const paper = await wl.create(a, 'Priced paper', [m.id]);
    const live = await wl.create(aLive, 'Priced live', [m.id]);
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
    const paperAfter = (await wl.get(a, paper.id)).body;
    expect(paperAfter.markets).toEqual([await wl.brief(a, m)]);
    expect(paperAfter.markets[0]).toMatchObject({ best_bid: moved - 1, best_ask: moved + 1 });
    expect((await wl.get(aLive, live.id)).body).toEqual(live);
    expect((await wl.get(aLive, live.id)).body.markets).toEqual([await wl.brief(aLive, m)]);
  });

  it('pages with limit and cursor, oldest first, bound to its world', async () => {
    const u = await wl.newUser();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await wl.create(u, `Page ${i}`)).id);
    const first = await wl.call(u, 'GET', '?limit=2');
    expect(first.status).toBe(200);
    expect((first.body.data as Watchlist[]).map((w) => w.id)).toEqual(made.slice(0, 2));
    expect(typeof first.body.next_cursor).toBe('string');
    const second = await wl.call(u, 'GET', `?limit=2&cursor=${first.body.next_cursor as string}`);
    expect((second.body.data as Watchlist[]).map((w) => w.id)).toEqual(made.slice(2, 4));
    const third = await wl.call(u, 'GET', `?limit=2&cursor=${second.body.next_cursor as string}`);
    expect((third.body.data as Watchlist[]).map((w) => w.id)).toEqual(made.slice(4));
    expect(third.body.next_cursor).toBeNull();
    // A paper cursor means nothing in the live world.
    const uLive = await keyFor(svc, u.email, u.token, { environment: 'live', scopes: SCOPES });
    expectValidation(
      await wl.call(uLive, 'GET', `?limit=2&cursor=${first.body.next_cursor as string}`),
      'cursor',
    );
  });

  it('lists created while paging show up once, on a later page: no duplicate, no gap', async () => {
    const u = await wl.newUser();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await wl.create(u, `Early ${i}`)).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let page = 0;
    do {
      const res: JsonResponse = await wl.call(
        u,
        'GET',
        `?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`,
      );
      expect(res.status).toBe(200);
      seen.push(...(res.body.data as Watchlist[]).map((w) => w.id));
      cursor = res.body.next_cursor as string | null;
      if (++page <= 2) made.push((await wl.create(u, `Late ${page}`)).id);
    } while (cursor !== null);
    expect(seen).toEqual(made);
    expect(new Set(seen).size).toBe(7);
  });

  it('a sandbox reset deletes your paper watchlists only', async () => {
    const u = await wl.newUser();
    const uLive = await keyFor(svc, u.email, u.token, { environment: 'live', scopes: SCOPES });
    const p1 = await wl.create(u, 'Paper 1', [m1.id, m2.id]);
    await wl.create(u, 'Paper 2', [m3.id]);
    const live = await wl.create(uLive, 'Live', [m1.id]);
    const others = await wl.create(b, 'Not yours', [m1.id]);
    const reset = await as(u, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(reset.status).toBe(200);
    expect(reset.body.cleared).toMatchObject({ watchlists: 2 });
    expect(await allPages(svc, u, '/watchlists')).toEqual([]);
    expectContractError(await wl.get(u, p1.id), 404, 'NOT_FOUND');
    expect(await allPages(svc, uLive, '/watchlists')).toEqual([live]);
    expect((await wl.get(b, others.id)).body).toEqual(others);
    // Their markets went with them.
    expect(
      paperQuery(svc, 'SELECT * FROM watchlist_markets WHERE watchlist_id = ?', p1.id),
    ).toEqual([]);
    // The name is free again.
    await wl.create(u, 'Paper 1');
    const again = await as(u, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(again.body.cleared).toMatchObject({ watchlists: 1 });
  });

  it('needs watchlist:read to read and watchlist:write to change (403 INSUFFICIENT_SCOPE)', async () => {
    const w = await wl.create(a, 'Scoped', [m1.id]);
    expect((await wl.call(aRead, 'GET', '')).status).toBe(200);
    expect((await wl.get(aRead, w.id)).body).toEqual(w);
    const writes: [string, string, unknown][] = [
      ['POST', '', { name: 'Nope' }],
      ['PATCH', `/${w.id}`, { name: 'Nope' }],
      ['DELETE', `/${w.id}`, undefined],
      ['POST', `/${w.id}/markets`, { market_id: m2.id }],
      ['DELETE', `/${w.id}/markets/${m1.id}`, undefined],
    ];
    for (const [method, path, body] of writes) {
      const err = expectContractError(
        await wl.call(aRead, method, path, body),
        403,
        'INSUFFICIENT_SCOPE',
      );
      expect(err.details.required_scopes).toEqual(['watchlist:write']);
    }
    for (const path of ['', `/${w.id}`]) {
      const err = expectContractError(await wl.call(aNone, 'GET', path), 403, 'INSUFFICIENT_SCOPE');
      expect(err.details.required_scopes).toEqual(['watchlist:read']);
    }
    expectContractError(await http(`${svc.api}/watchlists`), 401, 'UNAUTHENTICATED');
    expect((await wl.get(a, w.id)).body).toEqual(w);
  });

  // Last: it moves the service clock past a close time.
  it('a market past its close time reads CLOSED in the lists of both worlds at once', async () => {
    const closing = SEED_MARKETS.find((m) => m.slug === 'us-midterms-2026-house-flip');
    if (closing === undefined) throw new Error('seed market missing');
    const paper = await wl.create(a, 'Closing', [closing.id, m1.id]);
    const live = await wl.create(aLive, 'Closing', [closing.id]);
    expect(paper.markets[0].status).toBe('OPEN');
    advance(Date.parse('2027-01-03T17:00:00.000Z') - svc.clock.now());
    const paperAfter = (await wl.get(a, paper.id)).body;
    expect(paperAfter.markets.map((m: { status: string }) => m.status)).toEqual(['CLOSED', 'OPEN']);
    // The house withdrew its quotes.
    expect(paperAfter.markets[0]).toMatchObject({ best_bid: null, best_ask: null });
    expect((await wl.get(aLive, live.id)).body.markets[0].status).toBe('CLOSED');
  });
});
