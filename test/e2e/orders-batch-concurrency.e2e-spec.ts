import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { expectContractError, type JsonResponse, type Running } from '../support/harness.js';
import {
  allOrders,
  as,
  keyFor,
  limit,
  paperQuery,
  prng,
  startOrdersApp,
  TRADABLE,
  trader,
  type Order,
  type OrderBody,
  type Trader,
} from '../support/orders.js';

const IP_ORDERS_PER_MINUTE = 120;

/**
 * The batch rule (SPEC.md Limits; issue 5): each leg of POST /orders/batch is charged against the
 * per-IP `orders` bucket (120 a minute) before any leg runs; a batch the bucket cannot take whole
 * places nothing, charges nothing and is answered 429. Here overlapping batches and single orders
 * are fired at once from ONE client IP (127.0.0.1, no proxy trusted). Eight keys of one user carry
 * them, so the per-key ceilings (FREE: 60 requests a minute) and the per-route limits (batch 10,
 * POST /orders 60 a minute per key) are never reached and the per-IP bucket is the only limit.
 */
describe('orders: the batch rule under concurrency (one client IP)', () => {
  let svc: Running;
  let clock: ManualClock;
  let batchKeys: Trader[];
  let singleKeys: Trader[];

  beforeAll(async () => {
    svc = await startOrdersApp({ env: { RATE_LIMITS_ENABLED: 'true' } });
    clock = svc.clock as ManualClock;
    const first = await trader(svc);
    const keys = [first];
    for (let i = 1; i < 8; i++) keys.push(await keyFor(svc, first.email, first.token));
    batchKeys = keys.slice(0, 4);
    singleKeys = keys.slice(4);
  });
  afterAll(async () => {
    await svc.close();
  });

  const nextMinute = (): void => {
    clock.advance(60_000 - (clock.now() % 60_000));
  };

  /** A resting order that costs a cent or two and never trades (the house bids start higher). */
  const leg = (cid: string, i: number): OrderBody =>
    limit(TRADABLE[i % TRADABLE.length], 'BUY', 'YES', 1 + (i % 2), 1, { client_order_id: cid });

  interface Sent {
    kind: 'batch' | 'single';
    cids: string[];
    res: JsonResponse;
  }

  /**
   * Fires `batches` batches of `legs` legs and `singles` single orders at once, shuffled, all
   * from this process (one IP). Returns each request with its answer.
   */
  async function burst(
    round: string,
    batches: number,
    legs: number,
    singles: number,
  ): Promise<Sent[]> {
    const rnd = prng(round.length * 7919 + batches * 31 + singles);
    const jobs: (() => Promise<Sent>)[] = [];
    for (let b = 0; b < batches; b++) {
      const cids = Array.from({ length: legs }, (_, j) => `${round}-b${b}-l${j}`);
      const key = batchKeys[b % batchKeys.length];
      jobs.push(async () => ({
        kind: 'batch',
        cids,
        res: await as(key, `${svc.api}/orders/batch`, {
          method: 'POST',
          json: { orders: cids.map((c, j) => leg(c, j)) },
        }),
      }));
    }
    for (let s = 0; s < singles; s++) {
      const cid = `${round}-s${s}`;
      const key = singleKeys[s % singleKeys.length];
      jobs.push(async () => ({
        kind: 'single',
        cids: [cid],
        res: await as(key, `${svc.api}/orders`, { method: 'POST', json: leg(cid, s) }),
      }));
    }
    for (let i = jobs.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [jobs[i], jobs[j]] = [jobs[j], jobs[i]];
    }
    return Promise.all(jobs.map((job) => job()));
  }

  /** Asserts one round and returns how many orders it placed. */
  async function check(round: string, sent: Sent[]): Promise<number> {
    let units = 0;
    let refusedBatches = 0;
    for (const s of sent) {
      if (s.res.status === 429) {
        const err = expectContractError(s.res, 429, 'RATE_LIMITED');
        expect(err.details).toMatchObject({
          limit_scope: 'ip',
          limit: IP_ORDERS_PER_MINUTE,
          category: 'orders',
          units: s.cids.length,
        });
        expect(s.res.headers.get('retry-after')).toMatch(/^\d+$/);
        if (s.kind === 'batch') refusedBatches++;
        continue;
      }
      if (s.kind === 'batch') {
        expect(s.res.status).toBe(200);
        expect(s.res.body.results.map((r: { status: number }) => r.status)).toEqual(
          s.cids.map(() => 201),
        );
      } else {
        expect(s.res.status).toBe(201);
      }
      units += s.cids.length;
    }
    // Reads in the next minute, so they do not share the burst's per-IP window.
    nextMinute();
    const stored = (await allOrders(svc, batchKeys[0])).filter((o: Order) =>
      String(o.client_order_id).startsWith(`${round}-`),
    );
    const storedCids = new Set(stored.map((o: Order) => o.client_order_id as string));
    expect(storedCids.size).toBe(stored.length);
    for (const s of sent) {
      const present = s.cids.filter((c) => storedCids.has(c)).length;
      // An accepted request placed all of its orders; a refused one none of them.
      expect(present).toBe(s.res.status === 429 ? 0 : s.cids.length);
    }
    expect(stored.length).toBe(units);
    expect(units).toBeLessThanOrEqual(IP_ORDERS_PER_MINUTE);
    const rows = paperQuery<{ n: number }>(
      svc,
      `SELECT COUNT(*) AS n FROM orders WHERE client_order_id LIKE ?`,
      `${round}-%`,
    );
    expect(rows[0].n).toBe(units);
    return refusedBatches;
  }

  it('20-leg batches and single orders at once: never more than 120 placed; refused batches place nothing', async () => {
    nextMinute();
    const sent = await burst('r1', 8, 20, 40); // 200 units asked for, 120 allowed
    const refusedBatches = await check('r1', sent);
    expect(refusedBatches).toBeGreaterThan(0);
  });

  it('a refused batch charges nothing: what the burst left of the minute is exactly what it did not use', async () => {
    nextMinute();
    clock.advance(5_000); // 5 s into a fresh minute
    const sent = await burst('r2', 6, 20, 30); // 150 units asked for
    const used = sent.filter((s) => s.res.status !== 429).reduce((n, s) => n + s.cids.length, 0);
    expect(used).toBeLessThanOrEqual(IP_ORDERS_PER_MINUTE);
    // Still in the same minute: single orders one at a time until the bucket refuses.
    let more = 0;
    for (;;) {
      const res = await as(singleKeys[more % 4], `${svc.api}/orders`, {
        method: 'POST',
        json: leg(`top2-${more}`, more),
      });
      if (res.status === 429) {
        expect(res.body.error.details).toMatchObject({ limit_scope: 'ip' });
        expect(res.headers.get('retry-after')).toBe('55');
        break;
      }
      expect(res.status).toBe(201);
      more++;
    }
    expect(used + more).toBe(IP_ORDERS_PER_MINUTE);
    // A batch of 1 leg is refused as well now, and so is one of 20.
    for (const n of [1, 20]) {
      const res = await as(batchKeys[0], `${svc.api}/orders/batch`, {
        method: 'POST',
        json: { orders: Array.from({ length: n }, (_, j) => leg(`late2-${n}-${j}`, j)) },
      });
      expect(expectContractError(res, 429, 'RATE_LIMITED').details).toMatchObject({
        limit_scope: 'ip',
        units: n,
      });
    }
    await check('r2', sent);
  });

  it('many small batches racing: the sum of accepted legs is at most 120 and all-or-nothing per batch', async () => {
    nextMinute();
    const sent = await burst('r3', 30, 7, 0); // 210 legs in 30 batches of 7 (<= 8 per key)
    await check('r3', sent);
    const accepted = sent.filter((s) => s.res.status === 200).length;
    // 120 / 7: at most 17 batches fit; at least one more would have fitted if any charged partly.
    expect(accepted).toBe(17);
  });

  it('bad batches count too: schema-refused and non-JSON ones charge one each, then 429', async () => {
    // A schema-refused batch counts against its key's route limit (10 a minute) as any request
    // does (the credential and its limits come before validation): 13 keys keep clear of it.
    const first = batchKeys[0];
    const badKeys: Trader[] = [];
    for (let i = 0; i < 13; i++) badKeys.push(await keyFor(svc, first.email, first.token));
    nextMinute();
    const bad = (i: number): Promise<JsonResponse> =>
      i % 3 === 2
        ? as(badKeys[i % 13], `${svc.api}/orders/batch`, {
            method: 'POST',
            body: '{not json',
            headers: { 'content-type': 'application/json' },
          })
        : as(badKeys[i % 13], `${svc.api}/orders/batch`, {
            method: 'POST',
            json: i % 3 === 0 ? { orders: [] } : { orders: 'nope' },
          });
    const statuses: number[] = [];
    for (let i = 0; i < IP_ORDERS_PER_MINUTE; i++) statuses.push((await bad(i)).status);
    expect(statuses.every((s) => s === 400)).toBe(true);
    // The bucket is full: a schema-refused batch is now 429 (a non-JSON body stays 400: it is
    // refused before anything can be charged, and charged once after).
    expect((await bad(0)).status).toBe(429);
    expect((await bad(1)).status).toBe(429);
    // A valid single order from the same IP meets the same full bucket.
    const single = await as(singleKeys[0], `${svc.api}/orders`, {
      method: 'POST',
      json: leg('bad-after', 0),
    });
    expectContractError(single, 429, 'RATE_LIMITED');
  });

  it("a schema-refused batch is charged against its key's route limit: the 11th in a minute is 429", async () => {
    const k = await keyFor(svc, batchKeys[0].email, batchKeys[0].token);
    nextMinute();
    for (let i = 0; i < 10; i++) {
      const res = await as(k, `${svc.api}/orders/batch`, { method: 'POST', json: { orders: [] } });
      expectContractError(res, 400, 'VALIDATION_FAILED');
    }
    const refused = await as(k, `${svc.api}/orders/batch`, {
      method: 'POST',
      json: { orders: [] },
    });
    expect(expectContractError(refused, 429, 'RATE_LIMITED').details).toMatchObject({
      limit_scope: 'route',
      limit: 10,
    });
  });

  it('a batch refused by its credential or a key or route limit counts one unit, not its legs', async () => {
    const k = await keyFor(svc, batchKeys[0].email, batchKeys[0].token);
    const k1 = await keyFor(svc, batchKeys[0].email, batchKeys[0].token);
    nextMinute();
    const batchOf = (t: Pick<Trader, 'key'>, n: number, tag: string) =>
      as(t, `${svc.api}/orders/batch`, {
        method: 'POST',
        json: { orders: Array.from({ length: n }, (_, i) => leg(`${tag}-${i}`, i)) },
      });
    // 10 one-leg batches: 10 units, and k's route limit (10 a minute) is used up.
    for (let i = 0; i < 10; i++) expect((await batchOf(k, 1, `one-${i}`)).status).toBe(200);
    const routeRefused = await batchOf(k, 20, 'over-route');
    expect(expectContractError(routeRefused, 429, 'RATE_LIMITED').details).toMatchObject({
      limit_scope: 'route',
    });
    expectContractError(
      await batchOf({ key: 'svc_test_not_a_key_000000000000000000' }, 20, 'anon'),
      401,
      'UNAUTHENTICATED',
    );
    // 12 units used (10 legs + 1 + 1): five 20-leg batches fit in the other 108, the sixth not.
    for (let i = 0; i < 5; i++) expect((await batchOf(k1, 20, `fit-${i}`)).status).toBe(200);
    const full = await batchOf(k1, 20, 'no-fit');
    expect(expectContractError(full, 429, 'RATE_LIMITED').details).toMatchObject({
      limit_scope: 'ip',
    });
  });

  it('the per-IP ceiling refuses batches before authentication: a bad key cannot batch past it', async () => {
    nextMinute();
    const anon = (i: number) =>
      as({ key: 'svc_test_not_a_key_000000000000000000' }, `${svc.api}/orders/batch`, {
        method: 'POST',
        json: { orders: [leg(`anon-${i}`, i)] },
      });
    // Each refused credential counts one unit (after its answer) ...
    for (let i = 0; i < IP_ORDERS_PER_MINUTE; i++) {
      expectContractError(await anon(i), 401, 'UNAUTHENTICATED');
    }
    // ... and once the bucket is full, a batch is refused before its credential is looked at.
    const refused = expectContractError(await anon(999), 429, 'RATE_LIMITED');
    expect(refused.details).toMatchObject({ limit_scope: 'ip', category: 'orders', units: 1 });
    const valid = await as(batchKeys[0], `${svc.api}/orders/batch`, {
      method: 'POST',
      json: { orders: [leg('after-anon', 0)] },
    });
    expect(expectContractError(valid, 429, 'RATE_LIMITED').details).toMatchObject({
      limit_scope: 'ip',
    });
  });

  it("a batch whose legs the per-IP ceiling refuses uses none of the key's minute", async () => {
    const k = await keyFor(svc, batchKeys[0].email, batchKeys[0].token);
    nextMinute();
    const batchOf = (n: number, tag: string) =>
      as(k, `${svc.api}/orders/batch`, {
        method: 'POST',
        json: { orders: Array.from({ length: n }, (_, i) => leg(`${tag}-${i}`, i)) },
      });
    // Six 20-leg batches: all 120 of the IP's units, 6 of the key's 60 (and of the route's 10).
    for (let i = 0; i < 6; i++) {
      const ok = await batchOf(20, `ipk-${i}`);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-ratelimit-remaining')).toBe(String(60 - (i + 1)));
    }
    // Four more do not fit: refused before the key is charged (when batches race past that
    // check, the legs and the key's limits are taken in one all-or-nothing step).
    for (let i = 0; i < 4; i++) {
      const over = await batchOf(1 + i, `over-${i}`);
      expect(expectContractError(over, 429, 'RATE_LIMITED').details).toMatchObject({
        limit_scope: 'ip',
        units: 1 + i,
      });
      // Refused before authentication, as any per-IP refusal: no key, so no key headers.
      expect(over.headers.get('x-ratelimit-remaining')).toBeNull();
    }
    // Another category's request of the same key: the 7th of its minute.
    const wallet = await as(k, `${svc.api}/wallet`);
    expect(wallet.status).toBe(200);
    expect(wallet.headers.get('x-ratelimit-remaining')).toBe('53');
  });
});
