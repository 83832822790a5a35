import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, type Running } from '../support/harness.js';
import {
  expectValidation,
  keyFor,
  NOON,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import {
  marketIdOf,
  SEED_EVENTS,
  seedEvent,
  SPORTS_SCOPES as SCOPES,
  sportsClient,
  type SportsEvent,
} from '../support/sports.js';

const HOUR = 3_600_000;

/** GET /sports and the events of both worlds as seeded (the paper final: sports-final). */
describe('sports events', () => {
  let svc: Running;
  let a: Trader;
  const { get, all, market, event } = sportsClient(() => svc);

  beforeAll(async () => {
    svc = await startOrdersApp();
    a = await trader(svc, 'a@sports.test', { scopes: SCOPES });
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
});
