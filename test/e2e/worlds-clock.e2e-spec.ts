import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { totpAt } from '../../src/common/crypto/totp.js';
import { expectContractError, http, type Running } from '../support/harness.js';
import {
  as,
  expectValidation,
  limit,
  NOON,
  ORDER_SCOPES,
  SEED_MARKETS,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';

const SCOPES = [...ORDER_SCOPES, 'wallet:write'];
const DAY = 86_400;
/** A seeded market that closes 2027-01-03T17:00Z, 42 days and 5 hours after NOON. */
const CLOSES_SOON = SEED_MARKETS.find((x) => x.slug === 'us-midterms-2026-house-flip')!;

/**
 * A world's own clock, with SANDBOX_CLOCK_CONTROL unset and the limits on: a world key moves its
 * world's clock only, and that clock drives the world's limit windows, idempotency expiry and
 * market close, never the service clock, the paper world or another world.
 */
describe('sandbox worlds: the world clock', () => {
  let svc: Running;
  let a: Trader;
  const m = TRADABLE[0];

  const newWorld = async (): Promise<{ id: string; key: string }> => {
    const r = await as(a, `${svc.api}/sandbox/worlds`, { method: 'POST', json: {} });
    expect(r.status).toBe(201);
    return { id: r.body.id as string, key: r.body.key as string };
  };
  const advance = (k: { key: string }, seconds: unknown) =>
    as(k, `${svc.api}/sandbox/clock`, { method: 'POST', json: { advance_seconds: seconds } });

  beforeAll(async () => {
    svc = await startOrdersApp({ env: { RATE_LIMITS_ENABLED: 'true' } });
    a = await trader(svc, 'a@worlds-clock.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('a world key moves its world clock with SANDBOX_CLOCK_CONTROL unset; no one else can', async () => {
    const start = svc.clock.now();
    // Outside a world the old rule stands: 404 with or without a key, and nothing moves.
    expectContractError(
      await http(`${svc.api}/sandbox/clock`, { method: 'POST', json: { advance_seconds: 60 } }),
      404,
      'NOT_FOUND',
    );
    expectContractError(await advance(a, 60), 404, 'NOT_FOUND');
    expectContractError(await advance(a, -1), 404, 'NOT_FOUND');
    const wa = await newWorld();
    const wb = await newWorld();
    const moved = await advance(wa, 3600);
    expect(moved.status).toBe(200);
    expect(moved.body).toEqual({ now: new Date(start + 3_600_000).toISOString() });
    expect(svc.clock.now()).toBe(start);
    // Bad input moves nothing; the world's clock is where it was.
    expectValidation(await advance(wa, -1), 'advance_seconds');
    expectValidation(await advance(wa, 1.5), 'advance_seconds');
    expect((await advance(wa, 0)).body).toEqual({ now: new Date(start + 3_600_000).toISOString() });
    // Records show each world's time: A an hour on, B and the paper world at the service time.
    const at = async (k: { key: string }) => {
      const o = await as(k, `${svc.api}/orders`, {
        method: 'POST',
        json: limit(m, 'BUY', 'YES', 2, 1),
      });
      expect(o.status).toBe(201);
      return Date.parse(o.body.created_at as string);
    };
    expect(await at(wa)).toBeGreaterThanOrEqual(start + 3_600_000);
    expect(await at(wb)).toBe(start);
    expect(await at(a)).toBe(start);
    // MFA is the user's, on the service clock (a step-up or lock is the user's, whichever of
    // its credentials sent it): a world key's step-up, a year ahead on its world's clock, takes
    // the code of the service time and opens the window on the service clock.
    expect((await advance(wa, 365 * DAY)).status).toBe(200);
    const enrolled = await http(`${svc.api}/security/mfa/enroll`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.token}` },
    });
    expect(enrolled.status).toBe(201);
    const code = totpAt(enrolled.body.secret as string, Math.floor(svc.clock.nowSeconds() / 30));
    const stepped = await as(wa, `${svc.api}/security/mfa/step-up`, {
      method: 'POST',
      json: { code },
    });
    expect(stepped.status).toBe(200);
    expect(stepped.body.stepped_up_until).toBe(new Date(start + 300_000).toISOString());
    // Real money stays out of a world, and no world advance ends the user's session.
    expectContractError(
      await as(wa, `${svc.api}/wallet/withdrawals`, {
        method: 'POST',
        json: { amount_cents: 100 },
      }),
      403,
      'TEST_KEY_LIVE_ENDPOINT',
    );
    const me = await http(`${svc.api}/auth/me`, {
      headers: { authorization: `Bearer ${a.token}` },
    });
    expect(me.status).toBe(200);
    expect(svc.clock.now()).toBe(start);
  });

  it('keeps a world clock at most ten years ahead: the advance past it is 400 and moves nothing', async () => {
    const w = await newWorld();
    let now = '';
    for (let i = 0; i < 10; i++) {
      const r = await advance(w, 365 * DAY);
      expect(r.status).toBe(200);
      now = r.body.now as string;
    }
    expectValidation(await advance(w, 365 * DAY), 'advance_seconds');
    expect((await advance(w, 0)).body).toEqual({ now });
  });

  it("advancing world A's clock 61 s resets A's per-minute windows only", async () => {
    const wa = await newWorld();
    const wb = await newWorld();
    const exportAs = (k: { key: string }) => as(k, `${svc.api}/orders/export`);
    // GET /orders/export allows 6 a minute per credential: each of the three spends them.
    for (const k of [a, wa, wb]) {
      for (let i = 0; i < 6; i++) expect((await exportAs(k)).status).toBe(200);
      const err = expectContractError(await exportAs(k), 429, 'RATE_LIMITED');
      expect(err.details.limit_scope).toBe('route');
    }
    const before = Number((await as(wb, `${svc.api}/wallet`)).headers.get('x-ratelimit-remaining'));
    expect((await advance(wa, 61)).status).toBe(200);
    // A is in a new minute: its route window and its per-key window start again.
    expect((await exportAs(wa)).status).toBe(200);
    const fresh = await as(wa, `${svc.api}/wallet`);
    expect(fresh.headers.get('x-ratelimit-remaining')).toBe('58');
    expect(Number(fresh.headers.get('x-ratelimit-reset')) * 1000).toBe(Date.parse(NOON) + 120_000);
    // The paper world's key and world B's key stay limited in their minute.
    for (const k of [a, wb]) {
      const err = expectContractError(await exportAs(k), 429, 'RATE_LIMITED');
      expect(err.details.limit_scope).toBe('route');
    }
    const b = await as(wb, `${svc.api}/wallet`);
    expect(Number(b.headers.get('x-ratelimit-remaining'))).toBe(before - 1);
    expect(Number(b.headers.get('x-ratelimit-reset')) * 1000).toBe(Date.parse(NOON) + 60_000);
  });

  it("a market closes at its close_time on the world's clock, in that world only", async () => {
    const wa = await newWorld();
    const wb = await newWorld();
    const resting = await as(wa, `${svc.api}/orders`, {
      method: 'POST',
      json: limit(CLOSES_SOON, 'BUY', 'YES', 2, 1),
    });
    expect(resting.status).toBe(201);
    // 43 days: past the market's close_time on A's clock.
    expect((await advance(wa, 43 * DAY)).status).toBe(200);
    const order = limit(CLOSES_SOON, 'BUY', 'YES', 2, 1);
    expectContractError(
      await as(wa, `${svc.api}/orders`, { method: 'POST', json: order }),
      422,
      'MARKET_NOT_OPEN',
    );
    // A resting order stays and can still be cancelled, as at any close.
    const cancelled = await as(wa, `${svc.api}/orders/${resting.body.id as string}`, {
      method: 'DELETE',
    });
    expect(cancelled.status).toBe(200);
    expect((await as(wa, `${svc.api}/markets/${CLOSES_SOON.id}`)).body.status).toBe('CLOSED');
    // Open in world B and in the paper world, whose clocks did not move.
    for (const k of [wb, a]) {
      expect((await as(k, `${svc.api}/orders`, { method: 'POST', json: order })).status).toBe(201);
      expect((await as(k, `${svc.api}/markets/${CLOSES_SOON.id}`)).body.status).toBe('OPEN');
    }
    // The world's own expiry is a service rule on the service clock: A is still there.
    expect((await as(a, `${svc.api}/sandbox/worlds/${wa.id}`)).status).toBe(200);
  });

  it("an Idempotency-Key expires after 24 hours on its world's clock only", async () => {
    const wa = await newWorld();
    const post = (k: { key: string }, idem: string) =>
      as(k, `${svc.api}/orders`, {
        method: 'POST',
        headers: { 'idempotency-key': idem },
        json: limit(m, 'BUY', 'YES', 3, 1),
      });
    const first = await post(wa, 'idem-world-clock');
    expect(first.status).toBe(201);
    const paper = await post(a, 'idem-world-clock');
    expect(paper.status).toBe(201);
    expect((await post(wa, 'idem-world-clock')).headers.get('idempotent-replayed')).toBe('true');
    expect((await advance(wa, DAY + 1)).status).toBe(200);
    // Expired in the world: the request runs again, as a new order.
    const again = await post(wa, 'idem-world-clock');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.id).not.toBe(first.body.id);
    // The paper world's answer is still within its 24 hours: replayed.
    const replay = await post(a, 'idem-world-clock');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(paper.body.id);
  });
});
