import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { expectContractError, http, type Running } from '../support/harness.js';
import {
  as,
  expectValidation,
  keyFor,
  limit,
  NOON,
  place,
  startOrdersApp,
  trader,
  type Trader,
} from '../support/orders.js';
import { marketIdOf, seedEvent, SPORTS_SCOPES as SCOPES, sportsClient } from '../support/sports.js';
import { ledger, walletOf } from '../support/wallet.js';
import { failWrites } from '../support/fail-writes.js';

const HOUR = 3_600_000;

/** POST /sandbox/sports/events/{id}/final: rules, payouts, refusals, worlds, the clock. */
describe('sports final', () => {
  let svc: Running;
  let a: Trader;
  let b: Trader;
  const { final, all, market, event } = sportsClient(() => svc);

  beforeAll(async () => {
    svc = await startOrdersApp();
    a = await trader(svc, 'a@sports.test', { scopes: SCOPES });
    b = await trader(svc, 'b@sports.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
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
    const restore = failWrites(svc.dataDir, 'paper', 'sports_events', 'UPDATE', {
      message: 'disk full',
    });
    try {
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
    } finally {
      restore();
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
