import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect } from '@jest/globals';
import { http, type JsonResponse, type Running } from './harness.js';
import { as, ORDER_SCOPES, type Trader } from './orders.js';

/** An event of seeds/sports.json, with the ids the seeder derives from its slugs. */
export interface SeedEvent {
  id: string;
  slug: string;
  sport: string;
  league: string;
  home: string;
  away: string;
  start_offset_hours?: number;
  start_time?: string;
  reference_price: number;
  final?: { home: number; away: number };
  links?: { slug: string; rule: string }[];
  /** The event's own "Will <home> beat <away>?" market. */
  marketId: string;
}

const hashId = (prefix: string, slug: string) =>
  `${prefix}_${createHash('sha256').update(slug).digest('hex').slice(0, 20)}`;

export const marketIdOf = (slug: string) => hashId('mkt', slug);

export const SEED_EVENTS: SeedEvent[] = (
  JSON.parse(readFileSync(new URL('../../seeds/sports.json', import.meta.url), 'utf8')) as {
    events: Omit<SeedEvent, 'id' | 'marketId'>[];
  }
).events.map((e) => ({
  ...e,
  id: hashId('spe', e.slug),
  marketId: marketIdOf(`${e.slug}-home-wins`),
}));

export function seedEvent(slug: string): SeedEvent {
  const e = SEED_EVENTS.find((x) => x.slug === slug);
  if (e === undefined) throw new Error(`no seeded event ${slug}`);
  return e;
}

/** Markets the sports seed adds (one per event) beyond seeds/markets.json. */
export const SPORTS_SEED_MARKETS = SEED_EVENTS.length;

/** A test key's scopes for the sports suites: trading, sports:read and the sandbox wallet. */
export const SPORTS_SCOPES = [...ORDER_SCOPES, 'sports:read', 'wallet:write'];

/** An event as GET /sports/events/{id} answers it. */
export interface SportsEvent {
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

type Key = Pick<Trader, 'key'>;

/** The sports reads and the sandbox final against a running app (read when called). */
export function sportsClient(svc: () => Pick<Running, 'api'>) {
  const get = (path: string, t?: Key): Promise<JsonResponse> =>
    t === undefined ? http(`${svc().api}${path}`) : as(t, `${svc().api}${path}`);
  const final = (t: Key, id: string, json: unknown) =>
    as(t, `${svc().api}/sandbox/sports/events/${id}/final`, { method: 'POST', json });
  /** Every event of a query, following next_cursor. */
  async function all(query = '', t?: Key): Promise<SportsEvent[]> {
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
  const market = async (id: string, t?: Key) => {
    const res = await get(`/markets/${id}`, t);
    expect(res.status).toBe(200);
    return res.body as { status: string; outcome: string | null; event_id: string | null };
  };
  const event = async (id: string, t?: Key) => {
    const res = await get(`/sports/events/${id}`, t);
    expect(res.status).toBe(200);
    return res.body as SportsEvent;
  };
  return { get, final, all, market, event };
}
