import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { expectContractError, http, type JsonResponse, type Running } from '../support/harness.js';
import {
  as,
  expectValidation,
  keyFor,
  limit,
  NOON,
  ORDER_SCOPES,
  place,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { marketIdOf, SEED_EVENTS, seedEvent } from '../support/sports.js';
import { ledger, walletOf } from '../support/wallet.js';

const SCOPES = [...ORDER_SCOPES, 'sports:read', 'wallet:write'];
const HOUR = 3_600_000;

interface SportsEvent {
  id: string;
  sport: string;
  league: string;
  title: string;
  home: string;
  away: string;
  start_time: string;
  status: 'SCHEDULED' | 'LIVE' | 'FINAL';
  score: { home: number; away: number } | null;
  winner: 'HOME' | 'AWAY' | 'DRAW' | null;
  market_ids: string[];
}

/** GET /sports and the events of one world, the seeding of both, and the paper final. */
describe('sports events', () => {
  let svc: Running;
  let a: Trader;
  let b: Trader;

  const get = (path: string, t?: Pick<Trader, 'key'>): Promise<JsonResponse> =>
    t === undefined ? http(`${svc.api}${path}`) : as(t, `${svc.api}${path}`);
  const final = (t: Pick<Trader, 'key'>, id: string, json: unknown) =>
    as(t, `${svc.api}/sandbox/sports/events/${id}/final`, { method: 'POST', json });
  /** Every event of a query, following next_cursor. */
  async function all(query = '', t?: Pick<Trader, 'key'>): Promise<SportsEvent[]> {
    const out: SportsEvent[] = [];
    let cursor: string | null = null;
    do {
      const q = new URLSearchParams(query);
      if (cursor !== null) q.set('cursor', cursor);
      const res = await get(`/sports/events?${q.toString()}`, t);
      expect(res.status).toBe(200);
      out.push(...(res.body.data as SportsEvent[]));
      cursor = res.body.next_cursor as string | null;
    } while (cursor !== null);
    return out;
  }
  const market = async (id: string, t?: Pick<Trader, 'key'>) => {
    const res = await get(`/markets/${id}`, t);
    expect(res.status).toBe(200);
    return res.body as { status: string; outcome: string | null; event_id: string | null };
  };
  const event = async (id: string, t?: Pick<Trader, 'key'>) => {
    const res = await get(`/sports/events/${id}`, t);
    expect(res.status).toBe(200);
    return res.body as SportsEvent;
  };

  beforeAll(async () => {
    svc = await startOrdersApp();
    a = await trader(svc, 'a@sports.test', { scopes: SCOPES });
    b = await trader(svc, 'b@sports.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('seeds at least 3 sports and 12 events, past (FINAL), live and upcoming, in both worlds', async () => {
    const live = await all('limit=200');
    const paper = await all('limit=200', a);
    expect(live).toHaveLength(SEED_EVENTS.length);
    expect(SEED_EVENTS.length).toBeGreaterThanOrEqual(12);
    expect(paper).toEqual(live);
    expect(new Set(live.map((e) => e.sport)).size).toBeGreaterThanOrEqual(3);
    const count = (s: string) => live.filter((e) => e.status === s).length;
    // Relative to the seeding moment (NOON): 4 seeded final, 4 started, 6 ahead.
    expect([count('FINAL'), count('LIVE'), count('SCHEDULED')]).toEqual([4, 4, 6]);
    for (const e of live) {
      const seed = SEED_EVENTS.find((s) => s.id === e.id)!;
      expect(e).toMatchObject({
        sport: seed.sport,
        league: seed.league,
        home: seed.home,
        away: seed.away,
        title: `${seed.home} vs ${seed.away}`,
      });
      const start =
        seed.start_time ??
        new Date(Date.parse(NOON) + seed.start_offset_hours! * HOUR).toISOString();
      expect(e.start_time).toBe(start);
      expect(e.market_ids).toContain(seed.marketId);
      if (seed.final === undefined) {
        expect([e.status, e.score, e.winner]).toEqual([
          e.start_time <= NOON ? 'LIVE' : 'SCHEDULED',
          null,
          null,
        ]);
      } else {
        expect(e.status).toBe('FINAL');
        expect(e.score).toEqual(seed.final);
        // A seeded final's own market is RESOLVED by HOME_WINS.
        const m = await market(seed.marketId);
        expect([m.status, m.outcome]).toEqual([
          'RESOLVED',
          seed.final.home > seed.final.away ? 'YES' : 'NO',
        ]);
      }
    }
    // Ordered by start_time, then id.
    const keys = live.map((e) => `${e.start_time} ${e.id}`);
    expect(keys).toEqual([...keys].sort());
  });

  it('GET /sports counts events and linked markets per sport and league', async () => {
    const events = await all('limit=200');
    const expected = new Map<string, Map<string, { event_count: number; market_count: number }>>();
    for (const e of events) {
      const leagues = expected.get(e.sport) ?? new Map();
      expected.set(e.sport, leagues);
      const l = leagues.get(e.league) ?? { event_count: 0, market_count: 0 };
      leagues.set(e.league, {
        event_count: l.event_count + 1,
        market_count: l.market_count + e.market_ids.length,
      });
    }
    const want = [...expected.keys()].sort().map((sport) => ({
      sport,
      leagues: [...expected.get(sport)!.keys()]
        .sort()
        .map((league) => ({ league, ...expected.get(sport)!.get(league)! })),
    }));
    for (const t of [undefined, a]) {
      const res = await get('/sports', t);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: want });
    }
    // The two linked seed markets count beside the events' own ones.
    const nfl = want.find((s) => s.sport === 'american_football')!.leagues[0];
    expect(nfl).toEqual({ league: 'NFL', event_count: 3, market_count: 4 });
  });

  it('needs sports:read from a key', async () => {
    const narrow = await keyFor(svc, a.email, a.token, { scopes: ['markets:read'] });
    for (const path of ['/sports', '/sports/events', `/sports/events/${SEED_EVENTS[0].id}`]) {
      const err = expectContractError(await get(path, narrow), 403, 'INSUFFICIENT_SCOPE');
      expect(err.details.required_scopes).toEqual(['sports:read']);
    }
  });

  it('filters by sport, league and status, alone and combined', async () => {
    const events = await all('limit=200');
    const expectFilter = async (query: string, pick: (e: SportsEvent) => boolean) => {
      const got = await all(query);
      expect(got.map((e) => e.id)).toEqual(events.filter(pick).map((e) => e.id));
      return got;
    };
    expect(await expectFilter('sport=soccer', (e) => e.sport === 'soccer')).toHaveLength(4);
    expect(await expectFilter('league=NBA', (e) => e.league === 'NBA')).toHaveLength(4);
    expect(await expectFilter('status=LIVE', (e) => e.status === 'LIVE')).toHaveLength(4);
    expect(await expectFilter('status=FINAL', (e) => e.status === 'FINAL')).toHaveLength(4);
    expect(await expectFilter('status=SCHEDULED', (e) => e.status === 'SCHEDULED')).toHaveLength(6);
    expect(
      await expectFilter(
        'sport=basketball&status=FINAL',
        (e) => e.sport === 'basketball' && e.status === 'FINAL',
      ),
    ).toHaveLength(2);
    expect(
      await expectFilter(
        'sport=basketball&league=EuroLeague&status=SCHEDULED',
        (e) => e.league === 'EuroLeague' && e.status === 'SCHEDULED',
      ),
    ).toHaveLength(1);
    expect(
      await expectFilter(
        'league=Premier%20League&status=LIVE',
        (e) => e.league === 'Premier League' && e.status === 'LIVE',
      ),
    ).toHaveLength(1);
    // A sport or league with no events is an empty list, not an error.
    expect(await all('sport=curling')).toEqual([]);
    expect(await all('sport=soccer&league=NBA')).toEqual([]);
  });

  it('refuses bad filter values with 400 naming the field', async () => {
    const bad: [string, string][] = [
      ['status=live', 'status'],
      ['status=CLOSED', 'status'],
      ['status=LIVE&status=FINAL', 'status'],
      ['sport=Soccer', 'sport'],
      ['sport=soccer!', 'sport'],
      [`sport=${'a'.repeat(41)}`, 'sport'],
      [`league=${'L'.repeat(61)}`, 'league'],
      ['league=', 'league'],
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
    ];
    for (const [query, field] of bad) {
      expectValidation(await get(`/sports/events?${query}`), field);
    }
  });

  it('pages with limit 2 by (start_time, id), refusing a cursor of another list', async () => {
    const everything = await all('limit=200');
    const paged = await all('limit=2');
    expect(paged).toEqual(everything);
    const first = await get('/sports/events?limit=2&sport=basketball');
    expect(first.body.data).toHaveLength(2);
    const second = await get(
      `/sports/events?limit=2&sport=basketball&cursor=${first.body.next_cursor}`,
    );
    expect([...first.body.data, ...second.body.data].map((e: SportsEvent) => e.id)).toEqual(
      everything
        .filter((e) => e.sport === 'basketball')
        .slice(0, 4)
        .map((e) => e.id),
    );
    // A markets cursor, and the live world's events cursor in the paper world.
    const markets = await get('/markets?limit=2');
    expectValidation(await get(`/sports/events?cursor=${markets.body.next_cursor}`), 'cursor');
    expectValidation(await get(`/sports/events?cursor=${first.body.next_cursor}`, a), 'cursor');
    expectValidation(await get('/sports/events?cursor=garbage'), 'cursor');
  });

  it('GET /sports/events/{id}: 404 NOT_FOUND naming the id for unknown and malformed ids', async () => {
    const e = seedEvent('nba-knicks-vs-heat');
    expect(await event(e.id)).toMatchObject({ id: e.id, status: 'LIVE', market_ids: [e.marketId] });
    for (const id of ['spe_00000000000000000000', 'nope', 'mkt_00000000000000000000', 'SPE_X']) {
      const err = expectContractError(await get(`/sports/events/${id}`), 404, 'NOT_FOUND');
      expect(err.details).toEqual({ event_id: id });
    }
  });

  it('markets carry event_id: the event for linked markets, null for others', async () => {
    const bowl = seedEvent('nfl-super-bowl-lxi');
    const linked = marketIdOf('super-bowl-lxi-home-team');
    expect((await market(linked)).event_id).toBe(bowl.id);
    expect((await market(bowl.marketId, a)).event_id).toBe(bowl.id);
    expect((await event(bowl.id)).market_ids).toEqual([bowl.marketId, linked].sort());
    const unrelated = TRADABLE.find(
      (m) => !m.slug.includes('super-bowl') && !m.slug.includes('world-cup'),
    )!;
    expect((await market(unrelated.id)).event_id).toBeNull();
    const page = await get('/markets?limit=200&category=SPORTS');
    const withEvent = (page.body.data as { id: string; event_id: string | null }[]).filter(
      (m) => m.event_id !== null,
    );
    expect(withEvent.length).toBe(SEED_EVENTS.length + 2);
  });

  it('final refuses live keys and sessions (403 LIVE_KEY_SANDBOX_ENDPOINT) and bad scores (400 naming the field)', async () => {
    const e = seedEvent('nba-knicks-vs-heat');
    const live = await keyFor(svc, a.email, a.token, { environment: 'live', scopes: SCOPES });
    expectContractError(
      await final(live, e.id, { home_score: 1, away_score: 0 }),
      403,
      'LIVE_KEY_SANDBOX_ENDPOINT',
    );
    expectContractError(
      await http(`${svc.api}/sandbox/sports/events/${e.id}/final`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.token}` },
        json: { home_score: 1, away_score: 0 },
      }),
      403,
      'LIVE_KEY_SANDBOX_ENDPOINT',
    );
    const bad: [unknown, string][] = [
      [{ home_score: -1, away_score: 0 }, 'home_score'],
      [{ home_score: 1000, away_score: 0 }, 'home_score'],
      [{ home_score: 1, away_score: 1.5 }, 'away_score'],
      [{ home_score: 1, away_score: '2' }, 'away_score'],
      [{ home_score: 1 }, 'away_score'],
      [{ away_score: 1 }, 'home_score'],
      [{ home_score: null, away_score: 1 }, 'home_score'],
    ];
    for (const [body, field] of bad) expectValidation(await final(a, e.id, body), field);
    for (const id of ['spe_00000000000000000000', 'nope']) {
      const err = expectContractError(
        await final(a, id, { home_score: 1, away_score: 0 }),
        404,
        'NOT_FOUND',
      );
      expect(err.details).toEqual({ event_id: id });
    }
    // Nothing happened to the event or its market.
    expect((await event(e.id, a)).status).toBe('LIVE');
    expect((await market(e.marketId, a)).status).toBe('OPEN');
  });

  it('a home win resolves the HOME_WINS market YES and pays YES holders; a second final is 409', async () => {
    const e = seedEvent('nba-knicks-vs-heat');
    await place(svc, a, limit({ id: e.marketId }, 'BUY', 'YES', e.reference_price + 1, 10));
    const before = (await walletOf(svc, a)).balance_cents;
    const res = await final(a, e.id, { home_score: 101, away_score: 99 });
    expect(res.status).toBe(200);
    expect(res.body.event).toMatchObject({
      id: e.id,
      status: 'FINAL',
      score: { home: 101, away: 99 },
      winner: 'HOME',
      market_ids: [e.marketId],
    });
    expect(res.body.markets).toEqual([
      expect.objectContaining({
        market_id: e.marketId,
        rule: 'HOME_WINS',
        status: 'RESOLVED',
        outcome: 'YES',
        resolved_now: true,
        your_payout_cents: 1000,
      }),
    ]);
    expect(await market(e.marketId, a)).toMatchObject({ status: 'RESOLVED', outcome: 'YES' });
    expect((await walletOf(svc, a)).balance_cents).toBe(before + 1000);
    const settlement = (await ledger(svc, a)).filter((t) => t.type === 'SETTLEMENT');
    expect(settlement).toEqual([
      expect.objectContaining({ amount_cents: 1000, reference_id: e.marketId }),
    ]);
    expect(await event(e.id, a)).toEqual(res.body.event);

    const again = expectContractError(
      await final(b, e.id, { home_score: 0, away_score: 5 }),
      409,
      'SPORTS_EVENT_FINAL',
    );
    expect(again.details).toEqual({ event_id: e.id, score: { home: 101, away: 99 } });
    expect(await market(e.marketId, a)).toMatchObject({ status: 'RESOLVED', outcome: 'YES' });
  });

  it('an away win or a draw resolves HOME_WINS NO: NO holders are paid, YES holders are not', async () => {
    const away = seedEvent('epl-liverpool-vs-manchester-city');
    await place(svc, a, limit({ id: away.marketId }, 'BUY', 'YES', away.reference_price + 1, 5));
    await place(
      svc,
      b,
      limit({ id: away.marketId }, 'BUY', 'NO', 100 - (away.reference_price - 1), 7),
    );
    const [aBefore, bBefore] = [
      (await walletOf(svc, a)).balance_cents,
      (await walletOf(svc, b)).balance_cents,
    ];
    const res = await final(a, away.id, { home_score: 1, away_score: 2 });
    expect(res.status).toBe(200);
    expect(res.body.event).toMatchObject({
      status: 'FINAL',
      winner: 'AWAY',
      score: { home: 1, away: 2 },
    });
    expect(res.body.markets[0]).toMatchObject({
      outcome: 'NO',
      // a's YES, b's NO and the house's side of both; only b's 7 NO contracts win.
      payout_cents: 700,
      your_payout_cents: 0,
    });
    expect((await walletOf(svc, a)).balance_cents).toBe(aBefore);
    expect((await walletOf(svc, b)).balance_cents).toBe(bBefore + 700);

    const draw = seedEvent('nfl-eagles-vs-cowboys');
    const res2 = await final(b, draw.id, { home_score: 20, away_score: 20 });
    expect(res2.status).toBe(200);
    expect(res2.body.event).toMatchObject({
      status: 'FINAL',
      winner: 'DRAW',
      score: { home: 20, away: 20 },
    });
    expect(await market(draw.marketId, a)).toMatchObject({ status: 'RESOLVED', outcome: 'NO' });
  });

  it('skips a linked market already RESOLVED (not an error)', async () => {
    const e = seedEvent('atp-djokovic-vs-medvedev');
    const r = await as(a, `${svc.api}/sandbox/markets/${e.marketId}/resolve`, {
      method: 'POST',
      json: { outcome: 'NO' },
    });
    expect(r.status).toBe(200);
    const res = await final(a, e.id, { home_score: 3, away_score: 0 });
    expect(res.status).toBe(200);
    expect(res.body.markets).toEqual([
      expect.objectContaining({
        market_id: e.marketId,
        outcome: 'NO',
        resolved_now: false,
        settled_positions: 0,
      }),
    ]);
    expect(res.body.event).toMatchObject({ status: 'FINAL', winner: 'HOME' });
    expect(await market(e.marketId, a)).toMatchObject({ status: 'RESOLVED', outcome: 'NO' });
  });

  it('keeps the worlds apart: the paper final leaves the live event and markets as they were', async () => {
    const e = seedEvent('nba-knicks-vs-heat'); // ended in the paper world above
    expect((await event(e.id, a)).status).toBe('FINAL');
    const live = await event(e.id);
    expect([live.status, live.score, live.winner]).toEqual(['LIVE', null, null]);
    expect(await market(e.marketId)).toMatchObject({ status: 'OPEN', outcome: null });
    const liveKey = await keyFor(svc, a.email, a.token, { environment: 'live', scopes: SCOPES });
    expect((await event(e.id, liveKey)).status).toBe('LIVE');
    expect((await all('status=FINAL')).map((x) => x.id)).not.toContain(e.id);
    expect((await all('status=FINAL', a)).map((x) => x.id)).toContain(e.id);
  });

  it('a sandbox reset does not touch events (they are the world\u2019s, not the user\u2019s)', async () => {
    const e = seedEvent('nba-knicks-vs-heat');
    const res = await as(a, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await event(e.id, a)).toMatchObject({ status: 'FINAL', score: { home: 101, away: 99 } });
  });

  it('follows the service clock: SCHEDULED -> LIVE at start_time; a final before the start is 422', async () => {
    const e = seedEvent('atp-alcaraz-vs-sinner'); // starts 6 hours after NOON
    expect((await event(e.id, a)).status).toBe('SCHEDULED');
    const early = expectContractError(
      await final(a, e.id, { home_score: 2, away_score: 0 }),
      422,
      'SPORTS_EVENT_NOT_STARTED',
    );
    expect(early.details).toEqual({
      event_id: e.id,
      start_time: new Date(Date.parse(NOON) + 6 * HOUR).toISOString(),
    });
    expect(await market(e.marketId, a)).toMatchObject({ status: 'OPEN' });
    (svc.clock as ManualClock).advance(6 * HOUR - 1);
    expect((await event(e.id)).status).toBe('SCHEDULED');
    (svc.clock as ManualClock).advance(1);
    expect((await event(e.id)).status).toBe('LIVE');
    expect((await all('status=LIVE', a)).map((x) => x.id)).toContain(e.id);
    expect((await all('status=SCHEDULED', a)).map((x) => x.id)).not.toContain(e.id);
    const res = await final(a, e.id, { home_score: 2, away_score: 0 });
    expect(res.status).toBe(200);
    expect(res.body.markets[0]).toMatchObject({ outcome: 'YES', resolved_now: true });
  });

  it('resolves each linked market by its own rule (OVER_2 beside HOME_WINS)', async () => {
    const e = seedEvent('intl-cup-final-2027');
    const goals = marketIdOf('world-cup-2026-final-goals-over-2');
    expect((await market(goals, a)).event_id).toBe(e.id);
    (svc.clock as ManualClock).advance(Date.parse(e.start_time!) - svc.clock.now());
    expect((await event(e.id, a)).status).toBe('LIVE');
    // 1-2: an away win with 3 goals: HOME_WINS is NO, OVER_2 is YES.
    const res = await final(a, e.id, { home_score: 1, away_score: 2 });
    expect(res.status).toBe(200);
    const byId = new Map(
      (res.body.markets as { market_id: string }[]).map((m) => [m.market_id, m]),
    );
    expect(byId.get(e.marketId)).toMatchObject({ rule: 'HOME_WINS', outcome: 'NO' });
    expect(byId.get(goals)).toMatchObject({ rule: 'OVER_2', outcome: 'YES', resolved_now: true });
    expect(await market(goals, a)).toMatchObject({ status: 'RESOLVED', outcome: 'YES' });
    expect(await market(goals)).toMatchObject({ status: 'OPEN', outcome: null });
  });
});

/** A final that fails midway leaves no FINAL event with open markets; the retry completes it. */
describe('sports final after a failure', () => {
  let svc: Running;
  let a: Trader;

  beforeAll(async () => {
    svc = await startOrdersApp();
    a = await trader(svc, 'retry@sports.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('the markets resolve before the event is recorded FINAL, and the same call completes it', async () => {
    const e = seedEvent('nba-knicks-vs-heat');
    const url = `${svc.api}/sandbox/sports/events/${e.id}/final`;
    await place(svc, a, limit({ id: e.marketId }, 'BUY', 'YES', e.reference_price + 1, 4));
    // The event's write fails (as a full disk would), after the market resolved.
    const db = new Database(join(svc.dataDir, 'paper.sqlite'));
    try {
      db.exec(
        "CREATE TRIGGER fail_final BEFORE UPDATE ON sports_events BEGIN SELECT RAISE(ABORT, 'disk full'); END",
      );
      const failed = await as(a, url, { method: 'POST', json: { home_score: 2, away_score: 1 } });
      expectContractError(failed, 500, 'INTERNAL');
      expect((await as(a, `${svc.api}/sports/events/${e.id}`)).body).toMatchObject({
        status: 'LIVE',
        score: null,
      });
      expect((await as(a, `${svc.api}/markets/${e.marketId}`)).body).toMatchObject({
        status: 'RESOLVED',
        outcome: 'YES',
      });
      db.exec('DROP TRIGGER fail_final');
    } finally {
      db.close();
    }
    const retried = await as(a, url, { method: 'POST', json: { home_score: 2, away_score: 1 } });
    expect(retried.status).toBe(200);
    expect(retried.body.event).toMatchObject({ status: 'FINAL', score: { home: 2, away: 1 } });
    expect(retried.body.markets).toEqual([
      expect.objectContaining({ market_id: e.marketId, outcome: 'YES', resolved_now: false }),
    ]);
    // Paid once, by the first call.
    const settlements = (await ledger(svc, a)).filter((t) => t.type === 'SETTLEMENT');
    expect(settlements).toEqual([expect.objectContaining({ amount_cents: 400 })]);
  });
});

/** The seeder on a restart: nothing doubled, a final kept, and what a database lacks added. */
describe('sports seeds across restarts', () => {
  it('keeps events and finals, and inserts the events (and markets) an existing database lacks', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-sports-'));
    const ended = seedEvent('nba-knicks-vs-heat');
    const missing = seedEvent('atp-alcaraz-vs-sinner');
    let svc = await startOrdersApp({ dataDir });
    try {
      const a = await trader(svc, undefined, { scopes: SCOPES });
      const res = await as(a, `${svc.api}/sandbox/sports/events/${ended.id}/final`, {
        method: 'POST',
        json: { home_score: 90, away_score: 80 },
      });
      expect(res.status).toBe(200);
    } finally {
      await svc.close({ keepData: true });
    }
    // A live database from before this event and its market were seeded.
    const db = new Database(join(dataDir, 'live.sqlite'));
    db.prepare('DELETE FROM markets WHERE id = ?').run(missing.marketId);
    db.prepare('DELETE FROM sports_events WHERE id = ?').run(missing.id);
    db.close();
    const later = '2026-11-23T12:00:00.000Z';
    svc = await startOrdersApp({ dataDir, now: later });
    try {
      const a = await trader(svc, undefined, { scopes: SCOPES });
      const page = await http(`${svc.api}/sports/events?limit=200`);
      expect(page.body.data).toHaveLength(SEED_EVENTS.length);
      expect((await as(a, `${svc.api}/sports/events?limit=200`)).body.data).toHaveLength(
        SEED_EVENTS.length,
      );
      const paper = await as(a, `${svc.api}/sports/events/${ended.id}`);
      expect(paper.body).toMatchObject({ status: 'FINAL', score: { home: 90, away: 80 } });
      // Re-seeded relative to this start; its market is back, linked.
      const back = await http(`${svc.api}/sports/events/${missing.id}`);
      expect(back.body).toMatchObject({
        start_time: new Date(Date.parse(later) + missing.start_offset_hours! * HOUR).toISOString(),
        status: 'SCHEDULED',
        market_ids: [missing.marketId],
      });
      expect((await http(`${svc.api}/markets/${missing.marketId}`)).body).toMatchObject({
        status: 'OPEN',
        event_id: missing.id,
      });
      // The paper event kept its first start time.
      const kept = await as(a, `${svc.api}/sports/events/${missing.id}`);
      expect(kept.body.start_time).toBe(
        new Date(Date.parse(NOON) + missing.start_offset_hours! * HOUR).toISOString(),
      );
    } finally {
      await svc.close();
    }
  });
});
