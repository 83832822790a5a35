import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { expectContractError, type JsonResponse, type Running } from '../support/harness.js';
import { sessionFor } from '../support/keys.js';
import {
  ADMIN,
  allOrders,
  approveTier,
  as,
  getOrder,
  keyFor,
  limit,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';

/**
 * Per-route limits of the order routes at SPEC.md's numbers (Limits, per-route limits per
 * minute): exactly N requests in a minute, then 429 RATE_LIMITED with details.limit_scope
 * 'route' and an integer Retry-After that is honest (one second early is still refused, at the
 * moment it is accepted).
 *
 * Two other ceilings would answer first if nothing were done about them:
 * - the per-key tier (FREE: 60 a minute): each test's key is raised to PRO (600) through the
 *   self-serve tier request and an admin's approval;
 * - the per-IP `orders` category (120 a minute): several routes allow 120 per key, and with the
 *   setup requests every test sends more than 120 orders-category requests a minute from this
 *   machine. The app trusts 127.0.0.1 as a proxy (TRUSTED_PROXIES) and every request carries its
 *   own X-Forwarded-For address, so each comes from a different client IP and only the per-key
 *   and per-route limits count. The per-IP ceiling and the batch rule are proven in
 *   orders-batch-concurrency, from one IP.
 */
describe('orders: per-route limits (SPEC.md numbers)', () => {
  let svc: Running;
  let clock: ManualClock;
  let admin: string;
  let ipCounter = 0;

  beforeAll(async () => {
    svc = await startOrdersApp({
      env: { RATE_LIMITS_ENABLED: 'true', TRUSTED_PROXIES: '127.0.0.1' },
    });
    clock = svc.clock as ManualClock;
    admin = await sessionFor(svc.api, ADMIN);
  });
  afterAll(async () => {
    await svc.close();
  });

  /** A client address never used before. */
  const nextIp = (): string => {
    const n = ++ipCounter;
    return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  };

  /** A request with the key, from a fresh client IP. */
  const send = (t: Trader, method: string, path: string, json?: unknown): Promise<JsonResponse> =>
    as(t, `${svc.api}${path}`, { method, json, headers: { 'x-forwarded-for': nextIp() } });

  /** Moves the clock to `offsetSeconds` past the start of the next minute (a fresh window). */
  const nextMinute = (offsetSeconds: number): void => {
    const now = clock.now();
    clock.advance(60_000 - (now % 60_000) + offsetSeconds * 1000);
  };

  /** A PRO key of a fresh verified user, with its own route buckets. */
  let users = 0;
  const proTrader = async (): Promise<Trader> => {
    const t = await trader(svc, `limits-${++users}@orders.test`);
    await approveTier(svc, t, 'PRO', admin);
    return t;
  };

  /**
   * Sends `n` requests, all accepted (2xx), then one more: 429 RATE_LIMITED, scope route, at the
   * route's limit, with Retry-After the whole seconds to the window's end. Returns the refusal.
   */
  async function exactly(
    n: number,
    request: (i: number) => Promise<JsonResponse>,
    offsetSeconds: number,
  ): Promise<JsonResponse> {
    for (let i = 0; i < n; i++) {
      const res = await request(i);
      if (res.status >= 300) throw new Error(`request ${i + 1} of ${n}: ${res.status} ${res.text}`);
    }
    const refused = await request(n);
    const err = expectContractError(refused, 429, 'RATE_LIMITED');
    expect(err.details).toMatchObject({ limit_scope: 'route', limit: n });
    const retry = refused.headers.get('retry-after');
    expect(retry).toMatch(/^\d+$/);
    expect(Number(retry)).toBe(60 - offsetSeconds);
    expect(err.details.retry_after_seconds).toBe(60 - offsetSeconds);
    // The key's limit headers are on the route's 429 too; its own minute is not used up.
    expect(refused.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(refused.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
    const remaining = refused.headers.get('x-ratelimit-remaining');
    expect(remaining).toMatch(/^\d+$/);
    expect(Number(remaining)).toBeGreaterThan(0);
    return refused;
  }

  /** One second before Retry-After: still refused; at it: accepted again. */
  async function honestRetryAfter(
    refused: JsonResponse,
    request: () => Promise<JsonResponse>,
  ): Promise<void> {
    const wait = Number(refused.headers.get('retry-after'));
    clock.advance((wait - 1) * 1000);
    expectContractError(await request(), 429, 'RATE_LIMITED');
    clock.advance(1000);
    const again = await request();
    expect(again.status).toBeLessThan(300);
  }

  it('POST /orders: 60 a minute; the 61st places nothing', async () => {
    const t = await proTrader();
    const m = TRADABLE[0];
    nextMinute(10);
    const body = (i: number) =>
      limit(m, 'BUY', 'YES', 2 + (i % 10), 1, { client_order_id: `r-${i}` });
    const refused = await exactly(60, (i) => send(t, 'POST', '/orders', body(i)), 10);
    const stored = await allOrders(svc, t);
    expect(stored).toHaveLength(60);
    expect(stored.some((o) => o.client_order_id === 'r-60')).toBe(false);
    await honestRetryAfter(refused, () => send(t, 'POST', '/orders', body(61)));
  });

  it('POST /orders/batch: 10 a minute; the 11th places nothing', async () => {
    const t = await proTrader();
    const m = TRADABLE[1];
    nextMinute(30);
    const body = (i: number) => ({
      orders: [limit(m, 'BUY', 'YES', 2, 1, { client_order_id: `b-${i}` })],
    });
    const refused = await exactly(10, (i) => send(t, 'POST', '/orders/batch', body(i)), 30);
    const stored = await allOrders(svc, t);
    expect(stored).toHaveLength(10);
    expect(stored.some((o) => o.client_order_id === 'b-10')).toBe(false);
    await honestRetryAfter(refused, () => send(t, 'POST', '/orders/batch', body(11)));
  });

  it('POST /orders/quote: 120 a minute', async () => {
    const t = await proTrader();
    const m = TRADABLE[2];
    nextMinute(0);
    const q = { market_id: m.id, action: 'BUY', side: 'YES', type: 'MARKET', quantity: 5 };
    const refused = await exactly(120, () => send(t, 'POST', '/orders/quote', q), 0);
    await honestRetryAfter(refused, () => send(t, 'POST', '/orders/quote', q));
  });

  it('PATCH /orders/{id}: 120 a minute; the 121st changes nothing', async () => {
    const t = await proTrader();
    const m = TRADABLE[3];
    const o = await send(t, 'POST', '/orders', limit(m, 'BUY', 'YES', 2, 1000));
    expect(o.status).toBe(201);
    nextMinute(5);
    const refused = await exactly(
      120,
      (i) => send(t, 'PATCH', `/orders/${o.body.id}`, { quantity: 999 - i }),
      5,
    );
    // 120 amends took it from 1000 to 880; the refused one (to 879) did nothing.
    expect((await getOrder(svc, t, o.body.id)).quantity).toBe(880);
    await honestRetryAfter(refused, () =>
      send(t, 'PATCH', `/orders/${o.body.id}`, { quantity: 870 }),
    );
  });

  it('DELETE /orders/{id}: 120 a minute; the 121st cancels nothing', async () => {
    const t = await proTrader();
    const m = TRADABLE[4];
    // 122 resting orders, in batches of 20 (7 batches: under the batch route limit of 10).
    const ids: string[] = [];
    for (let b = 0; ids.length < 122; b++) {
      const legs = Array.from({ length: 20 }, () => limit(m, 'BUY', 'YES', 2, 1));
      const res = await send(t, 'POST', '/orders/batch', { orders: legs });
      expect(res.status).toBe(200);
      ids.push(...res.body.results.map((r: { order: { id: string } }) => r.order.id));
    }
    nextMinute(20);
    const refused = await exactly(120, (i) => send(t, 'DELETE', `/orders/${ids[i]}`), 20);
    expect((await getOrder(svc, t, ids[120])).status).toBe('OPEN');
    expect((await getOrder(svc, t, ids[119])).status).toBe('CANCELLED');
    await honestRetryAfter(refused, () => send(t, 'DELETE', `/orders/${ids[121]}`));
  });

  it('POST /orders/cancel-all: 60 a minute', async () => {
    const t = await proTrader();
    const m = TRADABLE[5];
    const o = await send(t, 'POST', '/orders', limit(m, 'BUY', 'YES', 2, 1));
    nextMinute(45);
    // The first call cancels the order; the other 59 find nothing left, and are still counted.
    const refused = await exactly(60, () => send(t, 'POST', '/orders/cancel-all', {}), 45);
    expect((await getOrder(svc, t, o.body.id)).status).toBe('CANCELLED');
    await honestRetryAfter(refused, () => send(t, 'POST', '/orders/cancel-all', {}));
  });

  it('POST /orders/cancel-batch: 60 a minute', async () => {
    const t = await proTrader();
    const m = TRADABLE[6];
    const o = await send(t, 'POST', '/orders', limit(m, 'BUY', 'YES', 2, 1));
    nextMinute(59);
    const body = (i: number) => ({
      order_ids: i === 60 ? [o.body.id] : ['ord_zzzzzzzzzzzzzzzzzzzzzz'],
    });
    const refused = await exactly(60, (i) => send(t, 'POST', '/orders/cancel-batch', body(i)), 59);
    // The refused request carried the one real id: it is still open.
    expect((await getOrder(svc, t, o.body.id)).status).toBe('OPEN');
    await honestRetryAfter(refused, () => send(t, 'POST', '/orders/cancel-batch', body(60)));
    expect((await getOrder(svc, t, o.body.id)).status).toBe('CANCELLED');
  });

  it('POST and DELETE /orders/cancel-on-disconnect: 60 a minute for both together', async () => {
    const t = await proTrader();
    nextMinute(30);
    const on = () => send(t, 'POST', '/orders/cancel-on-disconnect', { grace_seconds: 5 });
    const off = () => send(t, 'DELETE', '/orders/cancel-on-disconnect');
    // One budget (SPEC.md lists them in one row): 60 toggles, whichever the method.
    const refusedOn = await exactly(60, (i) => (i % 2 === 0 ? on() : off()), 30);
    const refusedOff = await off();
    const err = expectContractError(refusedOff, 429, 'RATE_LIMITED');
    expect(err.details).toMatchObject({ limit_scope: 'route', limit: 60 });
    expect(refusedOff.headers.get('retry-after')).toBe('30');
    // GET (status) has no route limit and is not charged against it.
    expect((await send(t, 'GET', '/orders/cancel-on-disconnect')).status).toBe(200);
    await honestRetryAfter(refusedOn, on);
  });

  it('GET /orders/export: 6 a minute', async () => {
    const t = await proTrader();
    nextMinute(1);
    const refused = await exactly(6, () => send(t, 'GET', '/orders/export'), 1);
    await honestRetryAfter(refused, () => send(t, 'GET', '/orders/export'));
  });

  it('HEAD /orders/export shares the GET bucket: HEAD does not double the 6 a minute', async () => {
    const t = await proTrader();
    nextMinute(1);
    for (let i = 0; i < 3; i++) expect((await send(t, 'GET', '/orders/export')).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await send(t, 'HEAD', '/orders/export')).status).toBe(200);
    expect((await send(t, 'HEAD', '/orders/export')).status).toBe(429);
    expectContractError(await send(t, 'GET', '/orders/export'), 429, 'RATE_LIMITED');
  });

  it('each route counts on its own, per key: another key of the same user has its own minute', async () => {
    const t = await proTrader();
    const m = TRADABLE[7];
    nextMinute(0);
    for (let i = 0; i < 6; i++) expect((await send(t, 'GET', '/orders/export')).status).toBe(200);
    expectContractError(await send(t, 'GET', '/orders/export'), 429, 'RATE_LIMITED');
    // Other routes of the same key are not touched by the export's limit.
    expect((await send(t, 'POST', '/orders', limit(m, 'BUY', 'YES', 2, 1))).status).toBe(201);
    const other = await keyFor(svc, t.email, t.token);
    expect((await send(other, 'GET', '/orders/export')).status).toBe(200);
  });
});
