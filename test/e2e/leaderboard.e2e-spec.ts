import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { AuthorDirectory } from '../../src/modules/users/author-directory.service.js';
import { createKey, login } from '../support/access.js';
import { expectContractError, http, type JsonResponse, type Running } from '../support/harness.js';
import { sessionFor } from '../support/keys.js';
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

const HOUR = 3_600_000;

interface Entry {
  rank: number;
  user: { id: string; username: string; display_name: string | null };
  realized_pnl_cents: number;
}

/**
 * GET /rank/leaderboard. The app starts on Sunday 2026-11-22 at 12:00 UTC with the paper feed
 * stopped: each paper book is the house ladder R-1..R-5 / R+1..R+5. The live engine has no house:
 * live traders trade with each other. Rank history samples daily at 00:00 UTC.
 */
describe('public leaderboard', () => {
  let svc: Running;
  /** Paper traders (fresh accounts, test keys). */
  let a: Trader;
  let b: Trader;
  let c: Trader;
  let d: Trader;
  let e: Trader;
  /** Live traders: the seeded trader and responder, with live keys. */
  let l1: Trader;
  let l2: Trader;
  const m = TRADABLE[0];
  const R = m.reference;
  const advance = (ms: number) => (svc.clock as ManualClock).advance(ms);

  /** The whole board, one request (limit 200), asserting 200. */
  async function board(
    period: string,
    who: Pick<Trader, 'key'> | null = null,
  ): Promise<{ period: string; as_of: string; data: Entry[]; next_cursor: null }> {
    const url = `${svc.api}/rank/leaderboard?period=${period}&limit=200`;
    const res = who === null ? await http(url) : await as(who, url);
    if (res.status !== 200) throw new Error(`leaderboard: ${res.status} ${res.text}`);
    expect(res.body.next_cursor).toBeNull();
    return res.body;
  }
  /** [user id, rank, score] of each row. */
  const rows = (entries: Entry[]) => entries.map((r) => [r.user.id, r.rank, r.realized_pnl_cents]);
  /** Ids in tie order (ascending). */
  const byId = (...ts: Trader[]) => ts.map((t) => t.userId).sort();

  async function liveTrader(email: string): Promise<Trader> {
    const token = await sessionFor(svc.api, email);
    const k = await createKey(svc, token, {
      environment: 'live',
      scopes: [...ORDER_SCOPES, 'wallet:write'],
      acknowledge_write_scopes: true,
    });
    const dep = await as({ key: k.key }, `${svc.api}/wallet/deposits`, {
      method: 'POST',
      json: { amount_cents: 100_000 },
    });
    expect(dep.status).toBe(201);
    const me = await as({ key: k.key }, `${svc.api}/auth/me`);
    return { email, token, key: k.key, keyId: k.id, userId: me.body.user.id as string };
  }

  beforeAll(async () => {
    svc = await startOrdersApp();
    a = await trader(svc, 'a@board.test');
    b = await trader(svc, 'b@board.test');
    c = await trader(svc, 'c@board.test');
    d = await trader(svc, 'd@board.test');
    e = await trader(svc, 'e@board.test');
    l1 = await liveTrader('trader@sandbox.test');
    l2 = await liveTrader('responder@sandbox.test');

    // Sunday, paper: A buys 10 YES from the house at R+1 and sells them to C's bid at R (-10);
    // B, D and E buy 5 YES from the house at R+1 each.
    await place(svc, c, limit(m, 'BUY', 'YES', R, 10));
    await place(svc, a, limit(m, 'BUY', 'YES', R + 1, 10));
    expect((await place(svc, a, limit(m, 'SELL', 'YES', R, 10))).filled_quantity).toBe(10);
    for (const t of [b, d, e]) await place(svc, t, limit(m, 'BUY', 'YES', R + 1, 5));
    // The reference moves to R+10 (house bids R+9..R+5): C sells 10 at R+9 (+90), E 5 (+40).
    const moved = await as(a, `${svc.api}/sandbox/markets/${m.id}/price`, {
      method: 'POST',
      json: { price: R + 10 },
    });
    expect(moved.status).toBe(200);
    await place(svc, c, limit(m, 'SELL', 'YES', R + 9, 10));
    await place(svc, e, limit(m, 'SELL', 'YES', R + 9, 5));

    // Live: L1 buys 5 YES from L2 at 40, then sells them to L2 at 60: L1 +100, L2 -100.
    await place(svc, l1, limit(m, 'BUY', 'YES', 40, 5));
    expect((await place(svc, l2, limit(m, 'SELL', 'YES', 40, 5))).filled_quantity).toBe(5);
    await place(svc, l1, limit(m, 'SELL', 'YES', 60, 5));
    expect((await place(svc, l2, limit(m, 'BUY', 'YES', 60, 5))).filled_quantity).toBe(5);
  });
  afterAll(async () => {
    await svc.close();
  });

  it('ranks by realized P&L, competition ranking (ties share a rank, the next skips), ties by user id; the author shape', async () => {
    const all = await board('ALL', a);
    expect(all.period).toBe('ALL');
    expect(all.as_of).toBe('2026-11-22T12:00:00.000Z');
    const [first, second] = byId(b, d);
    expect(rows(all.data)).toEqual([
      [c.userId, 1, 90],
      [e.userId, 2, 40],
      [first, 3, 0],
      [second, 3, 0],
      [a.userId, 5, -10],
    ]);
    // The one author shape: id, username, display_name; never the email.
    for (const entry of all.data) {
      expect(Object.keys(entry).sort()).toEqual(['rank', 'realized_pnl_cents', 'user']);
      expect(Object.keys(entry.user).sort()).toEqual(['display_name', 'id', 'username']);
    }
    const aMe = await as(a, `${svc.api}/auth/me`);
    expect(all.data[4].user).toEqual({
      id: a.userId,
      username: aMe.body.user.username,
      display_name: null,
    });
    // period defaults to ALL.
    const noPeriod = await as(a, `${svc.api}/rank/leaderboard`);
    expect(noPeriod.body).toEqual(all);
  });

  it('lists PUBLIC profiles only; a PRIVATE one takes no rank place', async () => {
    const patch = (t: Trader, json: unknown) =>
      http(`${svc.api}/users/me`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${t.token}` },
        json,
      });
    expect((await patch(e, { profile_visibility: 'PRIVATE', display_name: 'E' })).status).toBe(200);
    const [first, second] = byId(b, d);
    expect(rows((await board('ALL', a)).data)).toEqual([
      [c.userId, 1, 90],
      [first, 2, 0],
      [second, 2, 0],
      [a.userId, 4, -10],
    ]);
    expect((await patch(e, { profile_visibility: 'PUBLIC' })).status).toBe(200);
    const back = await board('ALL', a);
    expect(rows(back.data).map((r) => r[1])).toEqual([1, 2, 3, 3, 5]);
    expect(back.data[1].user).toMatchObject({ id: e.userId, display_name: 'E' });
  });

  it('each world has its own board: no key and live credentials read the live one', async () => {
    const paperIds = [a, b, c, d, e].map((t) => t.userId);
    const live = await board('ALL');
    expect(rows(live.data)).toEqual([
      [l1.userId, 1, 100],
      [l2.userId, 2, -100],
    ]);
    expect(await board('ALL', l1)).toEqual(live);
    const session = await http(`${svc.api}/rank/leaderboard?period=ALL&limit=200`, {
      headers: { authorization: `Bearer ${l2.token}` },
    });
    expect(session.body).toEqual(live);
    // The paper board has none of the live traders, the live board none of the paper ones.
    const paper = (await board('ALL', b)).data.map((r) => r.user.id);
    expect(paper).not.toContain(l1.userId);
    expect(paper).not.toContain(l2.userId);
    expect(paper.sort()).toEqual([...paperIds].sort());
    // An account without positions is on no board.
    const idle = await trader(svc, 'idle@board.test');
    expect((await board('ALL', idle)).data.map((r) => r.user.id)).not.toContain(idle.userId);
    // A key needs markets:read.
    const token = await sessionFor(svc.api, 'trader@sandbox.test');
    const noScope = await createKey(svc, token, { environment: 'test', scopes: ['users:read'] });
    const refused = await http(`${svc.api}/rank/leaderboard`, {
      headers: { 'x-api-key': noScope.key },
    });
    expect(expectContractError(refused, 403, 'INSUFFICIENT_SCOPE').details.required_scopes).toEqual(
      ['markets:read'],
    );
  });

  it('pages with a keyset cursor: the whole board once, ranks of the whole board', async () => {
    const whole = (await board('ALL', a)).data;
    const seen: Entry[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const res: JsonResponse = await as(a, `${svc.api}/rank/leaderboard?period=ALL&limit=2${q}`);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...(res.body.data as Entry[]));
      cursor = res.body.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual(whole);
    expect(seen).toHaveLength(5);
    // limit=1 through the tie (ranks 3, 3) too.
    const one: Entry[] = [];
    cursor = null;
    do {
      const q: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const res: JsonResponse = await as(a, `${svc.api}/rank/leaderboard?limit=1${q}`);
      one.push(...(res.body.data as Entry[]));
      cursor = res.body.next_cursor;
    } while (cursor !== null);
    expect(one).toEqual(whole);
    // A cursor belongs to its period and world.
    const page = await as(a, `${svc.api}/rank/leaderboard?period=ALL&limit=1`);
    const otherPeriod = await as(
      a,
      `${svc.api}/rank/leaderboard?period=DAY&cursor=${page.body.next_cursor}`,
    );
    expect(expectValidation(otherPeriod, 'cursor').message).toMatch(/a cursor of another list/);
    const otherWorld = await http(
      `${svc.api}/rank/leaderboard?period=ALL&cursor=${page.body.next_cursor}`,
    );
    expectValidation(otherWorld, 'cursor');
  });

  it('reads the authors of the page shown only, and which accounts are PUBLIC in one look-up', async () => {
    const directory = svc.app.get(AuthorDirectory);
    const authors = directory.authors.bind(directory);
    const publicIds = directory.publicIds.bind(directory);
    const looked: number[] = [];
    let publicLookUps = 0;
    directory.authors = (ids, opts) => {
      const list = [...ids];
      looked.push(list.length);
      return authors(list, opts);
    };
    directory.publicIds = (ids) => {
      publicLookUps++;
      return publicIds(ids);
    };
    try {
      const res = await as(a, `${svc.api}/rank/leaderboard?period=ALL&limit=2`);
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(2);
      expect(looked).toEqual([2]);
      expect(publicLookUps).toBe(1);
    } finally {
      directory.authors = authors;
      directory.publicIds = publicIds;
    }
  });

  it('refuses a bad period, limit or cursor with 400 VALIDATION_FAILED naming it', async () => {
    const cases: [string, string][] = [
      ['period=day', 'period'],
      ['period=YEAR', 'period'],
      ['period=', 'period'],
      ['period=ALL&period=DAY', 'period'],
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=ten', 'limit'],
      ['cursor=forged', 'cursor'],
      ['unknown=1', 'unknown'],
    ];
    for (const [query, field] of cases) {
      const res = await http(`${svc.api}/rank/leaderboard?${query}`);
      try {
        expectValidation(res, field);
      } catch (err) {
        throw new Error(`${query}: ${String(err)}`, { cause: err });
      }
    }
  });

  it('DAY, WEEK and MONTH count from the rank-history sample at the period start', async () => {
    // Sunday: the only sample (Sunday 00:00) holds nobody, so every period counts everything.
    const sunday = rows((await board('ALL', a)).data);
    for (const p of ['DAY', 'WEEK', 'MONTH'])
      expect(rows((await board(p, a)).data)).toEqual(sunday);

    advance(12 * HOUR); // Monday 2026-11-23 00:00 UTC: a new day and a new week.
    const everyone = byId(a, b, c, d, e);
    const flat = everyone.map((id) => [id, 1, 0]);
    expect(rows((await board('DAY', a)).data)).toEqual(flat);
    expect(rows((await board('WEEK', a)).data)).toEqual(flat);
    // No sample at or before 2026-11-01: the month counts everything.
    expect(rows((await board('MONTH', a)).data)).toEqual(sunday);
    // The live world too: its trades were on Sunday.
    const liveFlat = byId(l1, l2).map((id) => [id, 1, 0]);
    expect(rows((await board('DAY')).data)).toEqual(liveFlat);

    // Monday: B sells its 5 YES at R+9 (+40).
    await place(svc, b, limit(m, 'SELL', 'YES', R + 9, 5));
    const mondayRest = everyone.filter((id) => id !== b.userId).map((id) => [id, 2, 0]);
    expect(rows((await board('DAY', a)).data)).toEqual([[b.userId, 1, 40], ...mondayRest]);
    expect(rows((await board('WEEK', a)).data)).toEqual([[b.userId, 1, 40], ...mondayRest]);
    const all = rows((await board('ALL', a)).data);
    expect(all[0]).toEqual([c.userId, 1, 90]);
    expect(all.slice(1, 3)).toEqual(byId(b, e).map((id) => [id, 2, 40]));

    advance(24 * HOUR); // Tuesday: Monday's trade is in the week, not in the day.
    const tuesday = await board('DAY', a);
    expect(tuesday.as_of).toBe('2026-11-24T00:00:00.000Z');
    expect(rows(tuesday.data)).toEqual(flat);
    expect(rows((await board('WEEK', a)).data)).toEqual([[b.userId, 1, 40], ...mondayRest]);
    expect(rows((await board('MONTH', a)).data)).toEqual(all);
    expect(rows((await board('WEEK')).data)).toEqual(liveFlat);

    // C resets its paper account (Tuesday), then buys 5 YES from the house at R+11 (0 realized):
    // it counts from 0 again in every period, not from the -90 its baseline sample would give.
    const token = await login(svc, c.email, 'correct-horse-battery');
    const cAgain = await keyFor(svc, c.email, token, { scopes: [...ORDER_SCOPES, 'wallet:write'] });
    expect((await as(cAgain, `${svc.api}/sandbox/reset`, { method: 'POST' })).status).toBe(200);
    expect((await board('WEEK', a)).data.map((r) => r.user.id)).not.toContain(c.userId);
    await place(svc, cAgain, limit(m, 'BUY', 'YES', R + 11, 5));
    expect(rows((await board('WEEK', a)).data)).toEqual([[b.userId, 1, 40], ...mondayRest]);
    expect(rows((await board('DAY', a)).data)).toEqual(flat);
    expect(rows((await board('ALL', a)).data)).toEqual([
      ...byId(b, e).map((id) => [id, 1, 40]),
      ...byId(c, d).map((id) => [id, 3, 0]),
      [a.userId, 5, -10],
    ]);
    expect(rows((await board('MONTH')).data)).toEqual([
      [l1.userId, 1, 100],
      [l2.userId, 2, -100],
    ]);
  });
});
