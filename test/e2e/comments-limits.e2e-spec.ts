import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { commenter, otherKey, postRaw } from '../support/comments.js';
import { expectContractError, startApp, type Running } from '../support/harness.js';
import { NOON, SEED_MARKETS, type Trader } from '../support/orders.js';

/**
 * POST /markets/{id}/comments takes at most 10 comments a minute per user and world: the count is
 * the user's, shared by all of their keys of one world, with the usual 429 RATE_LIMITED
 * (limit_scope route) and Retry-After; the paper and live worlds count apart, and every attempt
 * counts, a refused one too. Limits are on; the clock starts at 12:00:00.000, the start of a
 * minute window; each test starts in a minute of its own.
 */
describe('comments: 10 a minute per user', () => {
  let svc: Running;
  let a: Trader;
  let a2: Trader;
  let b: Trader;
  const market = SEED_MARKETS[0].id;

  beforeAll(async () => {
    svc = await startApp({ now: NOON, env: { SANDBOX_FEED_INTERVAL_MS: '0' } });
    a = await commenter(svc, 'a@limits.comments.test');
    a2 = await otherKey(svc, a);
    b = await commenter(svc, 'b@limits.comments.test');
  });

  /** Moves the clock to the start of the next minute window. */
  function nextMinute(): void {
    const clock = svc.clock as ManualClock;
    clock.advance(60_000 - (clock.now() % 60_000));
  }
  afterAll(async () => {
    await svc.close();
  });

  it('two keys of one user share the 10; the 11th is 429 route with Retry-After; another user is not counted; a minute later it passes', async () => {
    for (let i = 0; i < 10; i++) {
      const res = await postRaw(svc, i % 2 === 0 ? a : a2, market, { body: `comment ${i}` });
      expect(res.status).toBe(201);
    }
    for (const key of [a, a2]) {
      const res = await postRaw(svc, key, market, { body: 'one too many' });
      const err = expectContractError(res, 429, 'RATE_LIMITED');
      expect(err.details).toMatchObject({ limit_scope: 'route', limit: 10 });
      expect(res.headers.get('retry-after')).toBe('60');
      expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
    }
    // Another user has their own 10.
    expect((await postRaw(svc, b, market, { body: 'mine' })).status).toBe(201);
    (svc.clock as ManualClock).advance(59_999);
    expectContractError(await postRaw(svc, a, market, { body: 'still' }), 429, 'RATE_LIMITED');
    (svc.clock as ManualClock).advance(1);
    expect((await postRaw(svc, a2, market, { body: 'next minute' })).status).toBe(201);
  });

  it("the paper world's 10 do not spend the live world's: a live key of the same user still posts", async () => {
    nextMinute();
    const u = await commenter(svc, 'worlds@limits.comments.test');
    const uLive = await otherKey(svc, u, 'live');
    for (let i = 0; i < 10; i++) {
      expect((await postRaw(svc, u, market, { body: `paper ${i}` })).status).toBe(201);
    }
    const live = await postRaw(svc, uLive, market, { body: 'live after ten paper comments' });
    expect(live.status).toBe(201);
    expect((live.body as { environment: string }).environment).toBe('live');
    const eleventh = await postRaw(svc, u, market, { body: 'the eleventh paper comment' });
    expect(expectContractError(eleventh, 429, 'RATE_LIMITED').details).toMatchObject({
      limit_scope: 'route',
      limit: 10,
    });
    // The live world has used one of its 10: nine more pass, the tenth after them does not.
    for (let i = 0; i < 9; i++) {
      expect((await postRaw(svc, uLive, market, { body: `live ${i}` })).status).toBe(201);
    }
    expectContractError(await postRaw(svc, uLive, market, { body: 'over' }), 429, 'RATE_LIMITED');
  });

  it('a refused attempt (400) counts: after 10 empty bodies a valid comment is 429', async () => {
    nextMinute();
    const u = await commenter(svc, 'refused@limits.comments.test');
    for (let i = 0; i < 10; i++) {
      expectContractError(await postRaw(svc, u, market, { body: '' }), 400, 'VALIDATION_FAILED');
    }
    expectContractError(await postRaw(svc, u, market, { body: 'valid' }), 429, 'RATE_LIMITED');
    nextMinute();
    expect((await postRaw(svc, u, market, { body: 'valid' })).status).toBe(201);
  });
});
