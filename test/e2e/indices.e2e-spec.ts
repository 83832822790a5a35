import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { expectContractError, http, type JsonResponse, type Running } from '../support/harness.js';
import { createKey } from '../support/keys.js';
import { SEED_EVENTS } from '../support/sports.js';
import { openDatabaseOf } from '../support/test-database.js';
import {
  as,
  expectValidation,
  keyFor,
  limit,
  market,
  NOON,
  place,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';

const DEPRECATION = '@1778198400'; // 2026-05-08T00:00:00Z
/** The seeded markets' categories and close times. */
const SEEDS = JSON.parse(
  readFileSync(new URL('../../seeds/markets.json', import.meta.url), 'utf8'),
) as { slug: string; category: string; close_time: string }[];
const CATEGORY = new Map(SEEDS.map((m) => [m.slug, m.category]));
const MIN = 60_000;
/** The own markets of the seeded sports events still open at NOON (a seeded final's is RESOLVED). */
const EVENT_MARKETS = SEED_EVENTS.filter((e) => e.final === undefined).length;
/** The seeded SPORTS markets open at NOON: markets.json's and the events' own. */
const SPORTS_OPEN = 6 + EVENT_MARKETS;
const at = (ms: number) => new Date(Date.parse(NOON) + ms).toISOString();

interface Index {
  slug: string;
  name: string;
  value: number | null;
  market_count: number;
  as_of: string;
}
interface Point {
  time: string;
  value: number | null;
  market_count: number;
}
interface MarketView {
  category: string;
  status: string;
  best_bid: number | null;
  best_ask: number | null;
  last_price: number | null;
}

/**
 * The indices as the rules compute them from GET /markets (another read of the same engine):
 * per category (lower case) and `all`, the mean mark of the OPEN or HALTED markets that have one.
 */
function expectedFrom(markets: MarketView[]): Omit<Index, 'as_of'>[] {
  const marks = new Map<string, number[]>([['all', []]]);
  for (const m of markets) {
    const slug = m.category.toLowerCase();
    if (!marks.has(slug)) marks.set(slug, []);
    const mark =
      m.best_bid !== null && m.best_ask !== null ? (m.best_bid + m.best_ask) / 2 : m.last_price;
    if (mark === null || !['OPEN', 'HALTED'].includes(m.status)) continue;
    marks.get(slug)!.push(mark);
    marks.get('all')!.push(mark);
  }
  return [...marks.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([slug, ms]) => ({
      slug,
      name: `${slug[0].toUpperCase()}${slug.slice(1)} markets`,
      value:
        ms.length === 0
          ? null
          : Math.round((ms.reduce((s, x) => s + x, 0) / ms.length) * 100) / 100,
      market_count: ms.length,
    }));
}

/**
 * GET /indices and /indices/{slug}/history with their deprecated /data-exports predecessors. The
 * feed is stopped: each paper book is the house ladder R-1..R-5 / R+1..R+5 (the live engine has
 * no house), and the service clock moves only when a test advances it.
 */
describe('market indices', () => {
  let svc: Running;
  let t: Trader;
  const advance = (ms: number) => (svc.clock as ManualClock).advance(ms);
  const sports = TRADABLE.filter((m) => CATEGORY.get(m.slug) === 'SPORTS');

  const indices = async (k: Pick<Trader, 'key'> | null, path = '/indices') => {
    const res = k === null ? await http(`${svc.api}${path}`) : await as(k, `${svc.api}${path}`);
    expect([path, res.status]).toEqual([path, 200]);
    return res.body.data as Index[];
  };
  const paperMarkets = async () =>
    (await as(t, `${svc.api}/markets?limit=200`)).body.data as MarketView[];
  /** Every point of an index, following next_cursor, `limit` per page. */
  const history = async (
    k: Pick<Trader, 'key'> | null,
    slug: string,
    query = '',
    pageSize = 200,
  ): Promise<Point[]> => {
    const out: Point[] = [];
    let cursor: string | null = null;
    do {
      const c: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const url = `${svc.api}/indices/${slug}/history?limit=${pageSize}${query}${c}`;
      const res: JsonResponse = k === null ? await http(url) : await as(k, url);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(pageSize);
      out.push(...(res.body.data as Point[]));
      cursor = res.body.next_cursor;
    } while (cursor !== null);
    return out;
  };

  beforeAll(async () => {
    svc = await startOrdersApp();
    t = await trader(svc, 'indices@indices.test');
  });
  afterAll(async () => {
    await svc.close();
  });

  it('values each category and all from the paper books; an order that moves a mark moves them', async () => {
    const before = await indices(t);
    expect(before.map((i) => i.slug)).toEqual([
      'all',
      'crypto',
      'culture',
      'economics',
      'politics',
      'sports',
    ]);
    for (const i of before) expect(i.as_of).toBe(NOON);
    expect(before.map(({ as_of: _, ...i }) => i)).toEqual(expectedFrom(await paperMarkets()));
    expect(before.find((i) => i.slug === 'sports')).toMatchObject({
      name: 'Sports markets',
      market_count: SPORTS_OPEN,
    });
    expect(before.find((i) => i.slug === 'all')!.market_count).toBe(26 + EVENT_MARKETS);

    // A bid at R inside the spread: best bid R, best ask R+1, the mark R + 0.5.
    const m = sports[0];
    const R = m.reference;
    await place(svc, t, limit(m, 'BUY', 'YES', R, 1));
    const afterBid = await indices(t);
    const marks = await paperMarkets();
    expect(afterBid.map(({ as_of: _, ...i }) => i)).toEqual(expectedFrom(marks));
    const value = (list: Index[], slug: string) => list.find((i) => i.slug === slug)!.value!;
    // The sports mean moves by 0.5 / SPORTS_OPEN, all by 0.5 / (26 + EVENT_MARKETS); the others not at all.
    expect(value(afterBid, 'sports')).toBeCloseTo(value(before, 'sports') + 0.5 / SPORTS_OPEN, 1);
    expect(value(afterBid, 'crypto')).toBe(value(before, 'crypto'));

    // A MARKET buy of the whole ask ladder: no ask left, the mark is the last price R+5.
    const other = await trader(svc, 'taker@indices.test');
    const m2 = sports[1];
    expect((await place(svc, other, market(m2, 'BUY', 'YES', 500))).filled_quantity).toBe(500);
    const afterTake = await indices(t);
    expect(afterTake.map(({ as_of: _, ...i }) => i)).toEqual(expectedFrom(await paperMarkets()));
    expect(value(afterTake, 'sports')).toBeCloseTo(value(afterBid, 'sports') + 5 / SPORTS_OPEN, 1);
    expect(afterTake.find((i) => i.slug === 'sports')!.market_count).toBe(SPORTS_OPEN);
  });

  it('reads the live engine without a key, with a live key and with a session; the paper one with a test key', async () => {
    const live = await indices(null);
    // Same indices (the same markets), but the live engine has no house and no trade: no mark.
    expect(live.map((i) => [i.slug, i.value, i.market_count])).toEqual([
      ['all', null, 0],
      ['crypto', null, 0],
      ['culture', null, 0],
      ['economics', null, 0],
      ['politics', null, 0],
      ['sports', null, 0],
    ]);
    const liveKey = await createKey(svc.api, t.token, {
      environment: 'live',
      scopes: ['markets:read'],
    });
    expect(await indices(liveKey)).toEqual(live);
    const session = await http(`${svc.api}/indices`, {
      headers: { authorization: `Bearer ${t.token}` },
    });
    expect(session.body.data).toEqual(live);
    const paper = await indices(t);
    expect(paper.find((i) => i.slug === 'all')!.market_count).toBe(26 + EVENT_MARKETS);
    expect(paper.every((i) => i.value !== null)).toBe(true);
  });

  it('records a point per boundary on the service clock: exact times, no back-fill, no duplicates', async () => {
    // Booted at NOON: the NOON boundary is recorded (values read then). The live engine is
    // read at each boundary too: it records only when sampled (here by the reads; the timer
    // may come first, with the same result).
    const liveTimes = async () => (await history(null, 'sports')).map((p) => p.time);
    expect((await history(t, 'sports')).map((p) => p.time)).toEqual([NOON]);
    expect(await liveTimes()).toEqual([NOON]);
    advance(30_000);
    expect((await history(t, 'sports')).map((p) => p.time)).toEqual([NOON]);
    advance(30_000);
    expect(await liveTimes()).toEqual([NOON, at(MIN)]);
    const sportsNow = (await indices(t)).find((i) => i.slug === 'sports')!;
    const points = await history(t, 'sports');
    expect(points).toEqual([
      expect.objectContaining({ time: NOON }),
      { time: at(MIN), value: sportsNow.value, market_count: SPORTS_OPEN },
    ]);
    // Five boundaries passed at once: only the latest is recorded.
    advance(5 * MIN + 10_000);
    // Reads at the same moment (and the timer) record it once.
    const concurrent = await Promise.all(
      ['all', 'sports', 'crypto', 'all', 'sports'].map((s) => history(t, s)),
    );
    for (const list of concurrent) {
      expect(list.map((p) => p.time)).toEqual([NOON, at(MIN), at(6 * MIN)]);
    }
    expect(await liveTimes()).toEqual([NOON, at(MIN), at(6 * MIN)]);
    // The point holds the values read when its boundary was sampled.
    const m = sports[2];
    await place(svc, t, limit(m, 'BUY', 'YES', m.reference, 1));
    const moved = (await indices(t)).find((i) => i.slug === 'sports')!;
    advance(MIN);
    const last = (await history(t, 'sports')).at(-1)!;
    expect(last).toEqual({ time: at(7 * MIN), value: moved.value, market_count: SPORTS_OPEN });
    expect(last.value).not.toBe(sportsNow.value);
    // The live engine records its own points, in its own database.
    expect((await history(null, 'sports')).map((p) => [p.time, p.value])).toEqual([
      [NOON, null],
      [at(MIN), null],
      [at(6 * MIN), null],
      [at(7 * MIN), null],
    ]);
    for (const name of ['paper', 'live']) {
      const db = openDatabaseOf(svc.dataDir, name, { readonly: true });
      try {
        const rows = db
          .prepare('SELECT slug, time, COUNT(*) AS n FROM index_points GROUP BY slug, time')
          .all() as { slug: string; time: string; n: number }[];
        expect(rows).toHaveLength(6 * 4);
        expect(rows.every((r) => r.n === 1)).toBe(true);
      } finally {
        db.close();
      }
    }
  });

  it('pages with no gap or duplicate and filters by from (inclusive) and to (exclusive)', async () => {
    for (let i = 0; i < 5; i++) {
      advance(MIN);
      await indices(t);
    }
    const all = await history(t, 'all');
    expect(all.map((p) => p.time)).toEqual([
      NOON,
      at(MIN),
      at(6 * MIN),
      ...[7, 8, 9, 10, 11, 12].map((n) => at(n * MIN)),
    ]);
    for (const size of [1, 2, 4]) expect(await history(t, 'all', '', size)).toEqual(all);
    const first = await as(t, `${svc.api}/indices/all/history?limit=4`);
    expect(first.body.data).toEqual(all.slice(0, 4));
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const last = await as(t, `${svc.api}/indices/all/history?limit=9`);
    expect(last.body.next_cursor).toBeNull();

    const window = await history(t, 'all', `&from=${at(MIN)}&to=${at(9 * MIN)}`, 2);
    expect(window.map((p) => p.time)).toEqual([at(MIN), at(6 * MIN), at(7 * MIN), at(8 * MIN)]);
    // An offset is read as an instant: 13:07+01:00 is 12:07Z.
    const offset = await history(
      t,
      'all',
      `&from=${encodeURIComponent('2026-11-22T13:07:00+01:00')}`,
    );
    expect(offset.map((p) => p.time)).toEqual([7, 8, 9, 10, 11, 12].map((n) => at(n * MIN)));
    expect(await history(t, 'all', '&from=2026-11-23')).toEqual([]);
  });

  it('refuses an unknown slug (404), bad paging and bad times (400)', async () => {
    for (const slug of ['nope', 'SPORTS', 'sports-x']) {
      for (const path of [`/indices/${slug}/history`, `/data-exports/indices/${slug}/history`]) {
        const err = expectContractError(await as(t, `${svc.api}${path}`), 404, 'NOT_FOUND');
        expect(err.details).toEqual({ slug });
      }
    }
    expect(
      expectContractError(await http(`${svc.api}/indices/nope/history`), 404, 'NOT_FOUND').details,
    ).toEqual({ slug: 'nope' });
    const cursor = (await as(t, `${svc.api}/indices/all/history?limit=1`)).body.next_cursor;
    const sportsCursor = (await as(t, `${svc.api}/indices/sports/history?limit=1`)).body
      .next_cursor;
    for (const [q, field] of [
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=1e1', 'limit'],
      ['cursor=%%%', 'cursor'],
      ['cursor=garbage', 'cursor'],
      ['from=yesterday', 'from'],
      ['from=2026-11-22T12:00:00', 'from'],
      ['to=2026-02-30T00:00:00Z', 'to'],
      ['bogus=1', 'bogus'],
    ]) {
      for (const path of ['/indices/all/history', '/data-exports/indices/all/history']) {
        expectValidation(await as(t, `${svc.api}${path}?${q}`), field);
      }
    }
    // A cursor belongs to its index and its environment.
    const e1 = expectValidation(
      await as(t, `${svc.api}/indices/all/history?cursor=${sportsCursor}`),
      'cursor',
    );
    expect(e1.details.fields[0].message).toMatch(/a cursor of another list/);
    expectValidation(await http(`${svc.api}/indices/all/history?cursor=${cursor}`), 'cursor');
    expect((await as(t, `${svc.api}/indices/all/history?cursor=${cursor}`)).status).toBe(200);
    expectValidation(await as(t, `${svc.api}/indices?bogus=1`), 'bogus');
    expectValidation(await as(t, `${svc.api}/data-exports/indices?bogus=1`), 'bogus');
  });

  it('needs markets:read from a key, like GET /markets; no key at all is 200', async () => {
    const k = await keyFor(svc, t.email, t.token, { scopes: ['orders:read'] });
    for (const path of [
      '/markets',
      '/indices',
      '/indices/all/history',
      '/data-exports/indices',
      '/data-exports/indices/all/history',
    ]) {
      const err = expectContractError(await as(k, `${svc.api}${path}`), 403, 'INSUFFICIENT_SCOPE');
      expect([path, err.details.required_scopes]).toEqual([path, ['markets:read']]);
      expect([path, (await http(`${svc.api}${path}`)).status]).toEqual([path, 200]);
    }
    const withScope = await keyFor(svc, t.email, t.token, { scopes: ['markets:read'] });
    expect((await as(withScope, `${svc.api}/indices`)).status).toBe(200);
    expectContractError(
      await as({ key: 'svc_test_00000000000000000000000000000000' }, `${svc.api}/indices`),
      401,
      'UNAUTHENTICATED',
    );
  });

  it('the deprecated /data-exports reads answer the same with the deprecation headers and no Sunset', async () => {
    const cases: [string, string, string][] = [
      ['/data-exports/indices', '/indices', '</api/v1/indices>; rel="successor-version"'],
      [
        '/data-exports/indices/sports/history?limit=2',
        '/indices/sports/history?limit=2',
        '</api/v1/indices/sports/history>; rel="successor-version"',
      ],
      [
        '/data-exports/indices/all/history',
        '/indices/all/history',
        '</api/v1/indices/all/history>; rel="successor-version"',
      ],
    ];
    for (const [legacyPath, currentPath, link] of cases) {
      for (const k of [t, null]) {
        const get = (p: string) => (k === null ? http(`${svc.api}${p}`) : as(k, `${svc.api}${p}`));
        const legacy = await get(legacyPath);
        const current = await get(currentPath);
        expect([legacyPath, legacy.status]).toEqual([legacyPath, 200]);
        expect(legacy.body).toEqual(current.body);
        expect(legacy.headers.get('deprecation')).toBe(DEPRECATION);
        expect(legacy.headers.get('sunset')).toBeNull();
        expect(legacy.headers.get('link')).toBe(link);
        expect(current.headers.get('deprecation')).toBeNull();
        expect(current.headers.get('link')).toBeNull();
      }
    }
    // A legacy page's cursor continues on the successor, and the other way round.
    const legacyPage = await as(t, `${svc.api}/data-exports/indices/all/history?limit=2`);
    const next = await as(
      t,
      `${svc.api}/indices/all/history?limit=2&cursor=${legacyPage.body.next_cursor}`,
    );
    expect(next.body.data).toEqual((await history(t, 'all')).slice(2, 4));

    // Refusals carry the headers too: 400, 404, 403 (scope, foreign origin), 401.
    const noScope = await keyFor(svc, t.email, t.token, { scopes: ['orders:read'] });
    const refusals: [JsonResponse, number, string][] = [
      [
        await as(t, `${svc.api}/data-exports/indices/all/history?limit=0`),
        400,
        '</api/v1/indices/all/history>; rel="successor-version"',
      ],
      [
        await as(t, `${svc.api}/data-exports/indices/nope/history`),
        404,
        '</api/v1/indices/nope/history>; rel="successor-version"',
      ],
      [
        await as(noScope, `${svc.api}/data-exports/indices`),
        403,
        '</api/v1/indices>; rel="successor-version"',
      ],
      [
        await as(t, `${svc.api}/data-exports/indices`, {
          headers: { origin: 'https://evil.example' },
        }),
        403,
        '</api/v1/indices>; rel="successor-version"',
      ],
      [
        await as(
          { key: 'svc_test_00000000000000000000000000000000' },
          `${svc.api}/data-exports/indices`,
        ),
        401,
        '</api/v1/indices>; rel="successor-version"',
      ],
    ];
    for (const [res, status, link] of refusals) {
      expect([res.status, res.headers.get('deprecation'), res.headers.get('link')]).toEqual([
        status,
        DEPRECATION,
        link,
      ]);
      expect(res.headers.get('sunset')).toBeNull();
    }
  });

  it('the OpenAPI document marks the /data-exports reads deprecated, the successors not', async () => {
    const doc = (await http(`${svc.api}/openapi.json`)).body;
    const ops: [string, boolean, string | null][] = [
      ['/api/v1/indices', false, null],
      ['/api/v1/indices/{slug}/history', false, null],
      ['/api/v1/data-exports/indices', true, '/api/v1/indices'],
      ['/api/v1/data-exports/indices/{slug}/history', true, '/api/v1/indices/{slug}/history'],
    ];
    for (const [path, deprecated, successor] of ops) {
      const op = doc.paths[path].get;
      expect(op).toMatchObject({
        tags: ['Indices'],
        'x-auth': 'optional',
        'x-required-scopes': ['markets:read'],
        'x-lifecycle': deprecated ? 'DEPRECATED' : 'STABLE',
      });
      expect(op.deprecated).toBe(deprecated ? true : undefined);
      if (deprecated) {
        expect(op['x-deprecation']).toEqual({
          deprecated_on: '2026-05-08',
          sunset_on: null,
          successor,
        });
        expect(Object.keys(op.responses['200'].headers)).toEqual(
          expect.arrayContaining(['Deprecation', 'Link']),
        );
      }
      if (path.endsWith('history')) {
        expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['400', '404']));
        expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(
          expect.arrayContaining(['slug', 'limit', 'cursor', 'from', 'to']),
        );
      }
    }
  });
});

describe('index history retention and closed markets', () => {
  let svc: Running;
  const HOUR = 3_600_000;
  const DAY = 24 * HOUR;
  beforeAll(async () => {
    svc = await startOrdersApp({
      env: { INDEX_SAMPLE_INTERVAL_MS: String(HOUR), INDEX_HISTORY_DAYS: '1' },
    });
  });
  afterAll(async () => {
    await svc.close();
  });
  const advance = (ms: number) => (svc.clock as ManualClock).advance(ms);
  const points = async (slug: string) => {
    const res = await http(`${svc.api}/indices/${slug}/history?limit=200`);
    expect(res.status).toBe(200);
    return res.body.data as Point[];
  };

  it('samples every INDEX_SAMPLE_INTERVAL_MS and keeps INDEX_HISTORY_DAYS of points', async () => {
    expect((await points('all')).map((p) => p.time)).toEqual([NOON]);
    advance(HOUR - 1);
    expect((await points('all')).map((p) => p.time)).toEqual([NOON]);
    advance(1);
    expect((await points('all')).map((p) => p.time)).toEqual([NOON, at(HOUR)]);
    advance(DAY);
    // 13:00 the next day: NOON is more than a day before it and goes; 13:00 the day before stays.
    expect((await points('all')).map((p) => p.time)).toEqual([at(HOUR), at(DAY + HOUR)]);
    advance(HOUR);
    expect((await points('all')).map((p) => p.time)).toEqual([at(DAY + HOUR), at(DAY + 2 * HOUR)]);
  });

  it('leaves a market out once it closes (its close time on the service clock)', async () => {
    const t = await trader(svc, 'closed@indices.test');
    const before = (await as(t, `${svc.api}/indices`)).body.data as Index[];
    const politics = before.find((i) => i.slug === 'politics')!;
    expect(politics.market_count).toBe(5);
    // The first market to close: 2027-01-03T17:00Z, a POLITICS one. A trade gives it a last
    // price, so once closed (no book) it still has a mark, and is left out for its status alone.
    const first = [...SEEDS].sort((a, b) => a.close_time.localeCompare(b.close_time))[0];
    expect([first.category, first.close_time]).toEqual(['POLITICS', '2027-01-03T17:00:00.000Z']);
    const m = TRADABLE.find((x) => x.slug === first.slug)!;
    await place(svc, t, market(m, 'BUY', 'YES', 1));
    advance(Date.parse(first.close_time) - svc.clock.now());
    const closed = await as(t, `${svc.api}/markets/${m.id}`);
    expect(closed.body).toMatchObject({ status: 'CLOSED', last_price: m.reference + 1 });
    const after = (await as(t, `${svc.api}/indices`)).body.data as Index[];
    expect(after.find((i) => i.slug === 'politics')!.market_count).toBe(4);
    // Of the events' own markets only those of the events with an absolute 2027 start are open.
    const open2027 = SEED_EVENTS.filter((e) => e.start_time !== undefined).length;
    expect(after.find((i) => i.slug === 'all')!.market_count).toBe(25 + open2027);
    const latest = (
      await http(`${svc.api}/indices/politics/history?limit=200`, {
        headers: { 'x-api-key': t.key },
      })
    ).body.data.at(-1) as Point;
    expect(latest).toEqual({
      time: '2027-01-03T17:00:00.000Z',
      value: after.find((i) => i.slug === 'politics')!.value,
      market_count: 4,
    });
  });
});
