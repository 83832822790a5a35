import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect } from '@jest/globals';
import { verifiedAccount } from './access.js';
import {
  expectContractError,
  http,
  startApp,
  type ContractError,
  type JsonResponse,
  type Running,
  type StartOptions,
} from './harness.js';
import { createKey, sessionFor } from './keys.js';
import { openDatabaseOf } from './test-database.js';

/** 12:00:00.000 UTC: a minute window starts here, so per-minute counts are not split. */
export const NOON = '2026-11-22T12:00:00.000Z';
export const STARTING_BALANCE = 1_000_000;
export const TRADER = 'trader@sandbox.test';
export const ADMIN = 'admin@sandbox.test';
export const ORDER_SCOPES = ['orders:read', 'orders:write', 'markets:read', 'wallet:read'];

/** Where the service lives: an in-process app or a spawned child process. */
export type Svc = Pick<Running, 'api' | 'dataDir'>;

/**
 * The paper engine with the price feed stopped (SANDBOX_FEED_INTERVAL_MS=0), so the house quotes
 * 5 levels of 100 contracts each side, 1 cent from each market's seeded reference price, and
 * never moves by itself. Rate limits are off unless the caller turns them on: the limits of the
 * order routes have their own suite (orders-limits).
 */
export function startOrdersApp(opts: StartOptions = {}): Promise<Running> {
  return startApp({
    now: NOON,
    ...opts,
    env: { SANDBOX_FEED_INTERVAL_MS: '0', RATE_LIMITS_ENABLED: 'false', ...opts.env },
  });
}

/** A seeded market: id (derived from the slug as the seeder does) and reference price. */
export interface SeedMarket {
  id: string;
  slug: string;
  reference: number;
  status: string;
}

export const SEED_MARKETS: SeedMarket[] = (
  JSON.parse(readFileSync(new URL('../../seeds/markets.json', import.meta.url), 'utf8')) as {
    slug: string;
    reference_price: number;
    status: string;
  }[]
).map((m) => ({
  id: `mkt_${createHash('sha256').update(m.slug).digest('hex').slice(0, 20)}`,
  slug: m.slug,
  reference: m.reference_price,
  status: m.status,
}));

/** OPEN markets whose whole house ladder (reference +-5) and some room beyond fit in 1..99. */
export const TRADABLE = SEED_MARKETS.filter(
  (m) => m.status === 'OPEN' && m.reference >= 20 && m.reference <= 80,
);

export interface Trader {
  email: string;
  token: string;
  key: string;
  keyId: string;
  userId: string;
}

/** Logs in (a seeded account, or registers and verifies a fresh one) and creates a test key. */
export async function trader(
  svc: Svc,
  email = TRADER,
  body: Record<string, unknown> = {},
): Promise<Trader> {
  const token = email.endsWith('@sandbox.test')
    ? await sessionFor(svc.api, email)
    : await verifiedAccount(svc, email);
  return keyFor(svc, email, token, body);
}

/** Another test key for the same user. */
export async function keyFor(
  svc: Svc,
  email: string,
  token: string,
  body: Record<string, unknown> = {},
): Promise<Trader> {
  const k = await createKey(svc.api, token, {
    scopes: ORDER_SCOPES,
    acknowledge_write_scopes: true,
    environment: 'test',
    ...body,
  });
  const me = await http(`${svc.api}/auth/me`, { headers: { 'x-api-key': k.key } });
  if (me.status !== 200) throw new Error(`auth/me: ${me.status} ${me.text}`);
  return { email, token, key: k.key, keyId: k.id, userId: me.body.user.id as string };
}

/** Raises a key's tier through the self-serve request and an admin's approval. */
export async function approveTier(
  svc: Svc,
  t: Trader,
  tier: 'PRO' | 'ENTERPRISE',
  adminToken?: string,
): Promise<void> {
  const req = await http(`${svc.api}/api-keys/${t.keyId}/tier-request`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.token}` },
    json: { tier, reason: 'order route tests' },
  });
  if (req.status !== 202) throw new Error(`tier-request: ${req.status} ${req.text}`);
  const admin = adminToken ?? (await sessionFor(svc.api, ADMIN));
  const ok = await http(`${svc.api}/admin/tier-requests/${req.body.id}/approve`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}` },
  });
  if (ok.status !== 200) throw new Error(`approve: ${ok.status} ${ok.text}`);
}

type Init = RequestInit & { json?: unknown };

/** A request with the trader's key. */
export function as(t: Pick<Trader, 'key'>, url: string, init: Init = {}): Promise<JsonResponse> {
  const headers = new Headers(init.headers);
  headers.set('x-api-key', t.key);
  return http(url, { ...init, headers });
}

export interface OrderBody {
  market_id: string;
  action: 'BUY' | 'SELL';
  side: 'YES' | 'NO';
  type: 'LIMIT' | 'MARKET';
  price?: number;
  quantity: number;
  time_in_force?: 'GTC' | 'IOC' | 'FOK';
  post_only?: boolean;
  self_trade_prevention?: 'CANCEL_TAKER' | 'CANCEL_MAKER' | 'CANCEL_BOTH';
  client_order_id?: string;
}

// Order bodies as returned: read field by field.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Order = any;

export function placeRaw(svc: Svc, t: Trader, body: unknown, init: Init = {}) {
  return as(t, `${svc.api}/orders`, { ...init, method: 'POST', json: body });
}

/** POST /orders, asserting 201. */
export async function place(svc: Svc, t: Trader, body: OrderBody): Promise<Order> {
  const res = await placeRaw(svc, t, body);
  if (res.status !== 201) throw new Error(`place: ${res.status} ${res.text}`);
  return res.body;
}

/** A LIMIT order in YES terms helper: BUY YES at p, etc. */
export function limit(
  market: { id: string },
  action: 'BUY' | 'SELL',
  side: 'YES' | 'NO',
  price: number,
  quantity: number,
  extra: Partial<OrderBody> = {},
): OrderBody {
  return { market_id: market.id, action, side, type: 'LIMIT', price, quantity, ...extra };
}

export function market(
  m: { id: string },
  action: 'BUY' | 'SELL',
  side: 'YES' | 'NO',
  quantity: number,
  extra: Partial<OrderBody> = {},
): OrderBody {
  return { market_id: m.id, action, side, type: 'MARKET', quantity, ...extra };
}

export async function getOrder(svc: Svc, t: Trader, id: string): Promise<Order> {
  const res = await as(t, `${svc.api}/orders/${id}`);
  if (res.status !== 200) throw new Error(`get order: ${res.status} ${res.text}`);
  return res.body;
}

export async function cancel(svc: Svc, t: Trader, id: string): Promise<JsonResponse> {
  return as(t, `${svc.api}/orders/${id}`, { method: 'DELETE' });
}

/** Every order of the caller (GET /orders, all pages), newest first. */
export async function allOrders(svc: Svc, t: Trader, query = ''): Promise<Order[]> {
  const out: Order[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams(query);
    q.set('limit', '200');
    if (cursor !== null) q.set('cursor', cursor);
    const res = await as(t, `${svc.api}/orders?${q.toString()}`);
    if (res.status !== 200) throw new Error(`list orders: ${res.status} ${res.text}`);
    out.push(...(res.body.data as Order[]));
    cursor = res.body.next_cursor as string | null;
  } while (cursor !== null);
  return out;
}

export interface Level {
  price: number;
  quantity: number;
}

/**
 * The whole book of a market in YES terms, every level (depth 99), as the trader's key sees it
 * (a test key: the paper engine's book, house liquidity included). Not through a quote: a quote
 * for an account skips that account's own orders (self-trade prevention).
 */
export async function book(
  svc: Svc,
  t: Trader,
  marketId: string,
): Promise<{ bids: Level[]; asks: Level[] }> {
  const res = await as(t, `${svc.api}/markets/${marketId}/orderbook?depth=99`);
  if (res.status !== 200) throw new Error(`orderbook: ${res.status} ${res.text}`);
  return { bids: res.body.bids as Level[], asks: res.body.asks as Level[] };
}

export function levelAt(levels: Level[], price: number): number {
  return levels.find((l) => l.price === price)?.quantity ?? 0;
}

/** Reads DATA_DIR/paper.sqlite read-only (the engine's record), outside the app. */
export function paperQuery<T>(svc: Pick<Svc, 'dataDir'>, sql: string, ...params: unknown[]): T[] {
  const db = openDatabaseOf(svc.dataDir, 'paper', { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** The stored paper balance of a user, in cents. */
export function storedBalance(svc: Pick<Svc, 'dataDir'>, userId: string): number {
  const rows = paperQuery<{ balance_cents: number }>(
    svc,
    'SELECT balance_cents FROM accounts WHERE user_id = ?',
    userId,
  );
  return rows.length === 0 ? STARTING_BALANCE : Number(rows[0].balance_cents);
}

/**
 * The caller's paper wallet: the stored balance (the engine's committed record) and, when the
 * wallet module serves GET /wallet, its answer too (which must agree with the record).
 */
export async function wallet(
  svc: Svc,
  t: Trader,
): Promise<{ balance: number; api: Record<string, unknown> | null }> {
  const balance = storedBalance(svc, t.userId);
  const res = await as(t, `${svc.api}/wallet`);
  if (res.status === 200 && typeof res.body?.balance_cents === 'number') {
    expect(res.body.balance_cents).toBe(balance);
    return { balance, api: res.body as Record<string, unknown> };
  }
  return { balance, api: null };
}

/** expectContractError plus, for validation failures, the named fields. */
export function expectValidation(res: JsonResponse, ...fields: string[]): ContractError {
  const err = expectContractError(res, 400, 'VALIDATION_FAILED');
  const named = (err.details.fields as { field: string }[]).map((f) => f.field);
  for (const f of fields) expect(named).toContain(f);
  return err;
}

/** Small deterministic PRNG (mulberry32) for reproducible random-ish order streams. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The YES-terms price of an own-side price. */
export function yes(side: 'YES' | 'NO', price: number): number {
  return side === 'YES' ? price : 100 - price;
}

/** Net holding of one user in one market. */
export interface Holding {
  yes: number;
  no: number;
}

/**
 * The netting rule of CONTRACT.md applied to one fill: a bid-side fill (BUY YES, SELL NO) closes
 * NO first, each closed pair paying 100 - p, then opens YES at p; an ask-side fill (SELL YES,
 * BUY NO) closes YES first at p, then opens NO at 100 - p. Returns the cash change.
 */
export function applyFill(
  pos: Holding,
  bookSide: 'BID' | 'ASK',
  yesPrice: number,
  qty: number,
): number {
  if (bookSide === 'BID') {
    const close = Math.min(qty, pos.no);
    pos.no -= close;
    pos.yes += qty - close;
    return (100 - yesPrice) * close - yesPrice * (qty - close);
  }
  const close = Math.min(qty, pos.yes);
  pos.yes -= close;
  pos.no += qty - close;
  return yesPrice * close - (100 - yesPrice) * (qty - close);
}

export const bookSideOf = (o: { action: string; side: string }): 'BID' | 'ASK' =>
  (o.action === 'BUY') === (o.side === 'YES') ? 'BID' : 'ASK';

interface FillLike {
  id: string;
  yes_price: number;
  quantity: number;
  liquidity: string;
}

/**
 * What one user's fills imply: replays every fill of `orders` (with their fills) in trade order
 * (fill ids rise with time; in a self-trade the maker side is booked first, as the engine does)
 * and returns the cash change and the holdings per market.
 */
export function replayFills(orders: Order[]): { cash: number; holdings: Map<string, Holding> } {
  const fills: { fill: FillLike; order: Order }[] = [];
  for (const o of orders) for (const f of o.fills as FillLike[]) fills.push({ fill: f, order: o });
  fills.sort((x, y) => {
    if (x.fill.id !== y.fill.id) return x.fill.id < y.fill.id ? -1 : 1;
    return x.fill.liquidity === 'MAKER' ? -1 : 1;
  });
  let cash = 0;
  const holdings = new Map<string, Holding>();
  for (const { fill, order } of fills) {
    let h = holdings.get(order.market_id as string);
    if (h === undefined) holdings.set(order.market_id as string, (h = { yes: 0, no: 0 }));
    cash += applyFill(h, bookSideOf(order), fill.yes_price, fill.quantity);
  }
  return { cash, holdings };
}

/** Stored holdings of a user (the positions table), by market. */
export function storedHoldings(svc: Pick<Svc, 'dataDir'>, userId: string): Map<string, Holding> {
  const rows = paperQuery<{ market_id: string; yes_qty: number; no_qty: number }>(
    svc,
    'SELECT market_id, yes_qty, no_qty FROM positions WHERE user_id = ?',
    userId,
  );
  return new Map(rows.map((r) => [r.market_id, { yes: Number(r.yes_qty), no: Number(r.no_qty) }]));
}

/**
 * Money in the paper engine: every balance (the house's too) plus 100 cents per open YES/NO
 * pair. Constant under trading; only deposits (a new account's starting balance) add to it.
 */
export function engineMoney(svc: Pick<Svc, 'dataDir'>): number {
  const money = paperQuery<{ s: number }>(svc, 'SELECT SUM(balance_cents) AS s FROM accounts')[0].s;
  const sums = paperQuery<{ y: number | null; n: number | null }>(
    svc,
    'SELECT SUM(yes_qty) AS y, SUM(no_qty) AS n FROM positions',
  )[0];
  expect(Number(sums.y ?? 0)).toBe(Number(sums.n ?? 0)); // every YES has its NO
  return Number(money) + 100 * Number(sums.y ?? 0);
}
