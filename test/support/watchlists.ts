import { readFileSync } from 'node:fs';
import { expect } from '@jest/globals';
import type { JsonResponse, Running } from './harness.js';
import { as, trader, type SeedMarket, type Trader } from './orders.js';

/** Watchlist scopes, and orders:write + wallet:write for the sandbox controls. */
export const WATCH_SCOPES = [
  'watchlist:read',
  'watchlist:write',
  'markets:read',
  'orders:write',
  'wallet:write',
];
/** Shaped like a market id; no world has it. */
export const UNKNOWN_MARKET = 'mkt_00000000000000000000';

/** The seed's market titles by slug. */
export const SEED_TITLES = new Map(
  (
    JSON.parse(readFileSync(new URL('../../seeds/markets.json', import.meta.url), 'utf8')) as {
      slug: string;
      title: string;
    }[]
  ).map((m) => [m.slug, m.title]),
);

// Response bodies are JSON of many shapes; tests read them field by field.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Watchlist = any;

/** The market ids of a watchlist, in its order. */
export const marketIdsOf = (w: Watchlist): string[] =>
  (w.markets as { id: string }[]).map((m) => m.id);

/** The watchlist calls of one running service, as a client makes them with a key. */
export function watchlistClient(svc: Pick<Running, 'api' | 'dataDir'>) {
  const call = (
    t: Pick<Trader, 'key'>,
    method: string,
    path: string,
    json?: unknown,
  ): Promise<JsonResponse> => as(t, `${svc.api}/watchlists${path}`, { method, json });
  let fresh = 0;
  return {
    call,
    get: (t: Pick<Trader, 'key'>, id: string) => call(t, 'GET', `/${id}`),
    /** POST /watchlists, asserting 201; the watchlist. */
    async create(t: Pick<Trader, 'key'>, name: string, marketIds?: string[]): Promise<Watchlist> {
      const res = await call(t, 'POST', '', { name, market_ids: marketIds });
      expect(res.status).toBe(201);
      return res.body;
    },
    /** A market as a watchlist shows it, read from GET /markets/{id} with the same key. */
    async brief(t: Pick<Trader, 'key'>, m: Pick<SeedMarket, 'id'>): Promise<Watchlist> {
      const res = await as(t, `${svc.api}/markets/${m.id}`);
      expect(res.status).toBe(200);
      const { id, slug, title, status, last_price, best_bid, best_ask } = res.body;
      return { id, slug, title, status, last_price, best_bid, best_ask };
    },
    /** A new user's test key with WATCH_SCOPES (a world of its own for cap tests). */
    newUser: (): Promise<Trader> => trader(svc, `u${++fresh}@watch.test`, { scopes: WATCH_SCOPES }),
  };
}
