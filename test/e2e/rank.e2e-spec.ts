import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { login } from '../support/access.js';
import { expectContractError, http, type JsonResponse, type Running } from '../support/harness.js';
import {
  as,
  expectValidation,
  keyFor,
  limit,
  ORDER_SCOPES,
  place,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { allPages, positions } from '../support/wallet.js';

const DEPRECATION = '@1778198400'; // 2026-05-08T00:00:00Z
const SUCCESSOR = '</api/v1/rank/history/cursor>; rel="successor-version"';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Point {
  time: string;
  rank: number;
  participants: number;
  realized_pnl_cents: number;
}

/** The password verifiedAccount (test/support/access.ts) registers with. */
const PASSWORD = 'correct-horse-battery';
const day = (d: number) => `2026-11-${d}T00:00:00.000Z`;

/**
 * Rank history (GET /rank/history/cursor and the deprecated GET /rank/history). The app starts at
 * 2026-11-22T12:00Z with the feed stopped: each book is the house ladder R-1..R-5 / R+1..R+5,
 * 100 contracts a level. Points are sampled daily at 00:00 UTC and kept 4 days.
 */
describe('rank history', () => {
  let svc: Running;
  let a: Trader;
  let b: Trader;
  let c: Trader;
  const m = TRADABLE[0];
  const R = m.reference;
  const advance = (ms: number) => (svc.clock as ManualClock).advance(ms);
  const history = (t: Pick<Trader, 'key'>, query: Record<string, string> = {}) =>
    allPages<Point>(svc, t, '/rank/history/cursor', query);
  const brief = (ps: Point[]) =>
    ps.map((p) => [p.time, p.rank, p.participants, p.realized_pnl_cents]);

  beforeAll(async () => {
    svc = await startOrdersApp({ env: { RANK_HISTORY_DAYS: '4' } });
    const scopes = [...ORDER_SCOPES, 'wallet:write'];
    a = await trader(svc, 'a@rank.test', { scopes });
    b = await trader(svc, 'b@rank.test');
    c = await trader(svc, 'c@rank.test');
  });
  afterAll(async () => {
    await svc.close();
  });

  it('records each participant daily at 00:00 UTC: realized P&L, competition rank, no house', async () => {
    // Boundary 2026-11-22T00:00Z was sampled at start-up, with no participants yet.
    // Day 1: A buys 10 YES from the house at R+1 and sells them to C's bid at R (-10 realized);
    // C now holds them (0 realized); B buys 5 YES from the house (0 realized).
    await place(svc, c, limit(m, 'BUY', 'YES', R, 10));
    await place(svc, a, limit(m, 'BUY', 'YES', R + 1, 10));
    expect((await place(svc, a, limit(m, 'SELL', 'YES', R, 10))).filled_quantity).toBe(10);
    await place(svc, b, limit(m, 'BUY', 'YES', R + 1, 5));
    expect(await history(a)).toEqual([]);

    advance(12 * HOUR); // exactly 2026-11-23T00:00Z
    expect(svc.clock.nowDate().toISOString()).toBe(day(23));
    expect(brief(await history(a))).toEqual([[day(23), 3, 3, -10]]);
    expect(brief(await history(b))).toEqual([[day(23), 1, 3, 0]]);
    expect(brief(await history(c))).toEqual([[day(23), 1, 3, 0]]);

    // Day 2: the reference moves to R+10 (house bids R+9..R+5); C sells 10 at R+9 (+90) and B
    // sells 5 at R+9 (+40).
    const moved = await as(a, `${svc.api}/sandbox/markets/${m.id}/price`, {
      method: 'POST',
      json: { price: R + 10 },
    });
    expect(moved.status).toBe(200);
    await place(svc, c, limit(m, 'SELL', 'YES', R + 9, 10));
    await place(svc, b, limit(m, 'SELL', 'YES', R + 9, 5));
    const realized = async (t: Trader) =>
      (await positions(svc, t, { include_closed: 'true' })).reduce(
        (s, p) => s + p.realized_pnl_cents,
        0,
      );
    expect([await realized(a), await realized(b), await realized(c)]).toEqual([-10, 40, 90]);
    // Still 2026-11-23: nothing new is recorded, however often it is read.
    advance(23 * HOUR);
    expect(brief(await history(c))).toEqual([[day(23), 1, 3, 0]]);

    // Into 2026-11-24, then three days on: only the latest boundary passed is recorded.
    advance(2 * HOUR);
    expect(brief(await history(c))).toEqual([
      [day(23), 1, 3, 0],
      [day(24), 1, 3, 90],
    ]);
    advance(3 * DAY);
    // Reads at once catch up once: no duplicate point.
    const together = await Promise.all([a, b, c, a, b, c].map((t) => history(t)));
    expect(together[0]).toEqual(together[3]);
    expect(brief(together[0])).toEqual([
      [day(23), 3, 3, -10],
      [day(24), 3, 3, -10],
      [day(27), 3, 3, -10],
    ]);
    expect(brief(together[1])).toEqual([
      [day(23), 1, 3, 0],
      [day(24), 2, 3, 40],
      [day(27), 2, 3, 40],
    ]);
    expect(brief(together[2]).map((p) => p[1])).toEqual([1, 1, 1]);
    const none = await trader(svc, 'idle@rank.test');
    expect(await history(none)).toEqual([]);
  });

  it('pages oldest first by a keyset cursor, without gap or duplicate; from/to narrow it', async () => {
    const all = await history(b);
    const seen: Point[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const res: JsonResponse = await as(b, `${svc.api}/rank/history/cursor?limit=1${q}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(1);
      seen.push(...(res.body.data as Point[]));
      cursor = res.body.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual(all);
    expect(all.map((p) => p.time)).toEqual([day(23), day(24), day(27)]);
    const page = await as(b, `${svc.api}/rank/history/cursor?limit=2`);
    expect(page.body.data).toEqual(all.slice(0, 2));
    expect(typeof page.body.next_cursor).toBe('string');
    const times = async (q: Record<string, string>) => (await history(b, q)).map((p) => p.time);
    expect(await times({ from: '2026-11-24' })).toEqual([day(24), day(27)]);
    expect(await times({ to: day(24) })).toEqual([day(23)]);
    expect(await times({ from: '2026-11-23T00:00:00.001Z', to: '2026-11-27' })).toEqual([day(24)]);
    expect(await times({ from: '2026-11-24T01:00:00+02:00' })).toEqual([day(24), day(27)]);
    // A cursor carries on within the window it is used with.
    const first = await as(b, `${svc.api}/rank/history/cursor?limit=1&from=2026-11-24`);
    const next = await as(
      b,
      `${svc.api}/rank/history/cursor?limit=1&from=2026-11-24&cursor=${first.body.next_cursor}`,
    );
    expect([...first.body.data, ...next.body.data].map((p: Point) => p.time)).toEqual([
      day(24),
      day(27),
    ]);
    expect(next.body.next_cursor).toBeNull();
  });

  it('a sandbox reset keeps past points; the account leaves the leaderboard; old points expire', async () => {
    const reset = await as(a, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(reset.status).toBe(200);
    advance(DAY); // 2026-11-28T12:00Z: RANK_HISTORY_DAYS=4 drops 2026-11-23
    expect(brief(await history(a))).toEqual([
      [day(24), 3, 3, -10],
      [day(27), 3, 3, -10],
    ]);
    expect(brief(await history(b))).toEqual([
      [day(24), 2, 3, 40],
      [day(27), 2, 3, 40],
      [day(28), 2, 2, 40],
    ]);
    expect(brief(await history(c)).pop()).toEqual([day(28), 1, 2, 90]);
  });

  it('each engine has its own history: a session reads the live one', async () => {
    // Days went by: a fresh session (the first one expired).
    const token = await login(svc, b.email, PASSWORD);
    const session = (path: string) =>
      http(`${svc.api}${path}`, { headers: { authorization: `Bearer ${token}` } });
    const live = await session('/rank/history/cursor');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ data: [], next_cursor: null });
    expect((await session('/rank/history')).body).toEqual({ data: [], next_cursor: null });
    // A paper cursor is not a live one.
    const paper = await as(b, `${svc.api}/rank/history/cursor?limit=1`);
    const cross = await session(`/rank/history/cursor?cursor=${paper.body.next_cursor}`);
    expect(expectValidation(cross, 'cursor').message).toMatch(/a cursor of another list/);
  });

  it('refuses bad paging and filters with 400 VALIDATION_FAILED and needs wallet:read', async () => {
    // Another list's cursor (the ledger has several rows).
    const ledgerCursor = (await as(b, `${svc.api}/transactions/cursor?limit=1`)).body
      .next_cursor as string;
    expect(typeof ledgerCursor).toBe('string');
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=abc', 'limit'],
      ['cursor=%%%', 'cursor'],
      ['cursor=WzEsMl0', 'cursor'],
      ['from=yesterday', 'from'],
      ['from=2026-11-24T00:00:00', 'from'],
      ['to=2026-13-01', 'to'],
      [`cursor=${ledgerCursor}`, 'cursor'],
    ];
    for (const [q, field] of cases) {
      expectValidation(await as(b, `${svc.api}/rank/history/cursor?${q}`), field);
      expectValidation(await as(b, `${svc.api}/rank/history?${q}`), field);
    }
    expectContractError(await http(`${svc.api}/rank/history/cursor`), 401, 'UNAUTHENTICATED');
    const token = await login(svc, b.email, PASSWORD);
    const k = await keyFor(svc, b.email, token, { scopes: ['orders:read'] });
    for (const path of ['/rank/history/cursor', '/rank/history']) {
      const err = expectContractError(await as(k, `${svc.api}${path}`), 403, 'INSUFFICIENT_SCOPE');
      expect(err.details.required_scopes).toEqual(['wallet:read']);
    }
  });

  it('GET /rank/history answers the same data with the deprecation headers and no Sunset', async () => {
    const legacy = await as(b, `${svc.api}/rank/history?limit=2`);
    const current = await as(b, `${svc.api}/rank/history/cursor?limit=2`);
    expect(legacy.status).toBe(200);
    expect(legacy.body.data).toHaveLength(2);
    expect(legacy.body).toEqual(current.body);
    expect(legacy.headers.get('deprecation')).toBe(DEPRECATION);
    expect(legacy.headers.get('sunset')).toBeNull();
    expect(legacy.headers.get('link')).toBe(SUCCESSOR);
    expect(current.headers.get('deprecation')).toBeNull();
    expect(current.headers.get('link')).toBeNull();
    const refusals = [
      await as(b, `${svc.api}/rank/history`, { headers: { origin: 'https://evil.example' } }),
      await http(`${svc.api}/rank/history`),
      await as(b, `${svc.api}/rank/history?limit=0`),
    ];
    expect(refusals.map((r) => r.status)).toEqual([403, 401, 400]);
    for (const r of refusals) {
      expect(r.headers.get('deprecation')).toBe(DEPRECATION);
      expect(r.headers.get('link')).toBe(SUCCESSOR);
      expect(r.headers.get('sunset')).toBeNull();
    }
  });

  it('the OpenAPI document marks GET /rank/history deprecated, the successor not', async () => {
    const doc = (await http(`${svc.api}/openapi.json`)).body;
    const legacy = doc.paths['/api/v1/rank/history'].get;
    expect(legacy).toMatchObject({
      deprecated: true,
      tags: ['Rank'],
      'x-lifecycle': 'DEPRECATED',
      'x-required-scopes': ['wallet:read'],
      'x-deprecation': {
        deprecated_on: '2026-05-08',
        sunset_on: null,
        successor: '/api/v1/rank/history/cursor',
      },
    });
    const current = doc.paths['/api/v1/rank/history/cursor'].get;
    expect(current.deprecated).toBeUndefined();
    expect(current.tags).toEqual(['Rank']);
    expect(current['x-lifecycle']).toBe('STABLE');
    expect(current['x-required-scopes']).toEqual(['wallet:read']);
    const params = (current.parameters as { name: string }[]).map((p) => p.name).sort();
    expect(params).toEqual(['cursor', 'from', 'limit', 'to']);
  });
});

describe('rank history across a restart', () => {
  it('a trader whose positions are all closed keeps its place and P&L after a restart, and trading on', async () => {
    const m = TRADABLE[1];
    const R = m.reference;
    let svc = await startOrdersApp();
    const a = await trader(svc, 'flat@rank.test');
    const b = await trader(svc, 'holder@rank.test');
    try {
      // A round trip closes A's position (-10 realized: bought at R+1, sold at R to B); B holds.
      await place(svc, b, limit(m, 'BUY', 'YES', R, 10));
      await place(svc, a, limit(m, 'BUY', 'YES', R + 1, 10));
      expect((await place(svc, a, limit(m, 'SELL', 'YES', R, 10))).filled_quantity).toBe(10);
      await svc.close({ keepData: true });
      // The restarted engine loads open positions only; A's is flat.
      svc = await startOrdersApp({ dataDir: svc.dataDir });
      (svc.clock as ManualClock).advance(12 * HOUR); // 2026-11-23T00:00Z
      const points = await allPages<Point>(svc, a, '/rank/history/cursor', {});
      expect(points.map((p) => [p.time, p.rank, p.participants, p.realized_pnl_cents])).toEqual([
        [day(23), 2, 2, -10],
      ]);
      // A trades that market again: its position goes on from -10 realized, not from a fresh 0.
      await place(svc, b, limit(m, 'SELL', 'YES', R, 1));
      expect((await place(svc, a, limit(m, 'BUY', 'YES', R, 1))).filled_quantity).toBe(1);
      const mine = await positions(svc, a, { include_closed: 'true' });
      expect(mine.map((p) => [p.market_id, p.side, p.quantity, p.realized_pnl_cents])).toEqual([
        [m.id, 'YES', 1, -10],
      ]);
      (svc.clock as ManualClock).advance(DAY);
      const later = await allPages<Point>(svc, a, '/rank/history/cursor', {});
      expect(later.map((p) => [p.time, p.rank, p.realized_pnl_cents])).toEqual([
        [day(23), 2, -10],
        [day(24), 2, -10],
      ]);
    } finally {
      await svc.close();
    }
  });
});
