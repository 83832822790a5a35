import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, type Running } from '../support/harness.js';
import { marketBody } from '../support/markets-create.js';
import {
  as,
  limit,
  ORDER_SCOPES,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { seedEvent } from '../support/sports.js';
import { deleteWorld, openWorld } from '../support/worlds-groups.js';

const SCOPES = [...ORDER_SCOPES, 'markets:write', 'sports:read', 'wallet:write'];

/**
 * Market creation and sports events inside ephemeral worlds: each works with a world key as in
 * the paper world, on that world's markets, events and clock only, and goes with the world.
 */
describe('worlds serve market creation and sports', () => {
  let svc: Running;
  let a: Trader;
  type Key = Pick<Trader, 'key'>;

  beforeAll(async () => {
    // The clock control route must exist for a world key to move its world's clock.
    svc = await startOrdersApp({ env: { SANDBOX_CLOCK_CONTROL: 'true' } });
    a = await trader(svc, 'a@worlds-markets.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('creates, edits and resolves a market in a world; slugs are unique per world', async () => {
    const w1 = await openWorld(svc, a);
    const w2 = await openWorld(svc, a);
    const made = await as(w1, `${svc.api}/markets`, {
      method: 'POST',
      json: marketBody('world-only', { reference_price: 40 }),
    });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ slug: 'world-only', status: 'OPEN' });
    const id = made.body.id as string;
    // The house quotes it in its world like a seeded market.
    const book = await as(w1, `${svc.api}/markets/${id}/orderbook`);
    expect(book.status).toBe(200);
    expect(book.body.asks.length + book.body.bids.length).toBeGreaterThan(0);
    for (const other of [a, w2] as Key[]) {
      expectContractError(await as(other, `${svc.api}/markets/${id}`), 404, 'NOT_FOUND');
      expectContractError(
        await as(other, `${svc.api}/markets/${id}`, { method: 'PATCH', json: { title: 'x' } }),
        404,
        'NOT_FOUND',
      );
    }
    // The slug is the world's: the paper world may take it, the same world may not.
    const paper = await as(a, `${svc.api}/markets`, {
      method: 'POST',
      json: marketBody('world-only'),
    });
    expect(paper.status).toBe(201);
    expectContractError(
      await as(w1, `${svc.api}/markets`, { method: 'POST', json: marketBody('world-only') }),
      409,
      'SLUG_TAKEN',
    );
    const halted = await as(w1, `${svc.api}/markets/${id}`, {
      method: 'PATCH',
      json: { status: 'HALTED', title: 'Halted in the world' },
    });
    expect(halted.status).toBe(200);
    expect(halted.body).toMatchObject({ status: 'HALTED', title: 'Halted in the world' });
    expect((await as(a, `${svc.api}/markets/${paper.body.id}`)).body.status).toBe('OPEN');
    const resolved = await as(w1, `${svc.api}/markets/${id}/resolve`, {
      method: 'POST',
      json: { outcome: 'NO' },
    });
    expect(resolved.status).toBe(200);
    expect((await as(w1, `${svc.api}/markets/${id}`)).body.status).toBe('RESOLVED');

    await deleteWorld(svc, a, w1);
    const w3 = await openWorld(svc, a);
    expectContractError(await as(w3, `${svc.api}/markets/${id}`), 404, 'NOT_FOUND');
    const listed = await as(w3, `${svc.api}/markets?limit=200`);
    expect(listed.body.data.some((m: { slug: string }) => m.slug === 'world-only')).toBe(false);
    expect((await as(a, `${svc.api}/markets/${paper.body.id}`)).body.status).toBe('OPEN');
  });

  it('ends a sports event in a world only, and reads events by the world clock', async () => {
    const live = seedEvent('nba-knicks-vs-heat');
    const later = seedEvent('nba-bucks-vs-suns');
    const w1 = await openWorld(svc, a);
    const w2 = await openWorld(svc, a);
    const event = (t: Key, id: string) => as(t, `${svc.api}/sports/events/${id}`);
    expect((await event(w1, live.id)).body.status).toBe('LIVE');
    const final = await as(w1, `${svc.api}/sandbox/sports/events/${live.id}/final`, {
      method: 'POST',
      json: { home_score: 101, away_score: 99 },
    });
    expect(final.status).toBe(200);
    expect(final.body.event).toMatchObject({ status: 'FINAL', winner: 'HOME' });
    expect(final.body.markets.map((m: { market_id: string }) => m.market_id)).toContain(
      live.marketId,
    );
    expect((await event(w1, live.id)).body).toMatchObject({
      status: 'FINAL',
      score: { home: 101, away: 99 },
    });
    expect((await as(w1, `${svc.api}/markets/${live.marketId}`)).body.status).toBe('RESOLVED');
    for (const other of [a, w2] as Key[]) {
      expect((await event(other, live.id)).body).toMatchObject({ status: 'LIVE', score: null });
      expect((await as(other, `${svc.api}/markets/${live.marketId}`)).body.status).toBe('OPEN');
    }
    // The world's clock starts the later event in that world only.
    expect((await event(w1, later.id)).body.status).toBe('SCHEDULED');
    const advanced = await as(w1, `${svc.api}/sandbox/clock`, {
      method: 'POST',
      json: { advance_seconds: 2 * 86_400 },
    });
    expect(advanced.status).toBe(200);
    expect((await event(w1, later.id)).body.status).toBe('LIVE');
    expect((await event(a, later.id)).body.status).toBe('SCHEDULED');
    const live2 = await as(w1, `${svc.api}/sports/events?status=LIVE&limit=200`);
    expect(live2.body.data.map((e: { id: string }) => e.id)).toContain(later.id);

    await deleteWorld(svc, a, w1);
    const w3 = await openWorld(svc, a);
    expect((await event(w3, live.id)).body.status).toBe('LIVE');
  });

  it('ranks a world by its own trades; the paper board and other worlds never see them', async () => {
    const m = TRADABLE[1];
    const w1 = await openWorld(svc, a);
    const w2 = await openWorld(svc, a);
    const board = async (t: Key) =>
      (await as(t, `${svc.api}/rank/leaderboard?period=ALL`)).body as {
        data: { user: { id: string }; realized_pnl_cents: number }[];
      };
    const bought = await as(w1, `${svc.api}/orders`, {
      method: 'POST',
      json: limit(m, 'BUY', 'YES', 99, 5),
    });
    expect(bought.status).toBe(201);
    const resolved = await as(w1, `${svc.api}/sandbox/markets/${m.id}/resolve`, {
      method: 'POST',
      json: { outcome: 'YES' },
    });
    expect(resolved.status).toBe(200);
    const mine = await board(w1);
    expect(mine.data).toHaveLength(1);
    expect(mine.data[0].user.id).toBe(a.userId);
    expect(mine.data[0].realized_pnl_cents).toBeGreaterThan(0);
    const pnl = mine.data[0].realized_pnl_cents;
    expect((await board(w2)).data).toEqual([]);
    const paper = await board(a);
    expect(paper.data.find((r) => r.user.id === a.userId)?.realized_pnl_cents ?? 0).not.toBe(pnl);
    // Rank history reads the world's samples (taken on its clock), never the paper world's.
    const hist = await as(w1, `${svc.api}/rank/history/cursor`);
    expect(hist.status).toBe(200);
    for (const p of hist.body.data) expect(p.realized_pnl_cents).toBe(pnl);

    await deleteWorld(svc, a, w1);
    const w3 = await openWorld(svc, a);
    expect((await board(w3)).data).toEqual([]);
    expect((await as(w3, `${svc.api}/rank/history/cursor`)).body.data).toEqual([]);
  });

  it('values indices from the own markets of a world and records their history in it', async () => {
    const m = TRADABLE[2];
    const w1 = await openWorld(svc, a);
    const w2 = await openWorld(svc, a);
    type Idx = { slug: string; value: number | null };
    const indices = async (t: Key) =>
      new Map(
        ((await as(t, `${svc.api}/indices`)).body.data as Idx[]).map((i) => [i.slug, i.value]),
      );
    const before = await indices(w1);
    expect(await indices(w2)).toEqual(before);
    const paperBefore = await indices(a);
    const moved = await as(w1, `${svc.api}/sandbox/markets/${m.id}/price`, {
      method: 'POST',
      json: { price: m.reference > 50 ? 10 : 90 },
    });
    expect(moved.status).toBe(200);
    const after = await indices(w1);
    expect(after).not.toEqual(before);
    expect(await indices(w2)).toEqual(before);
    expect(await indices(a)).toEqual(paperBefore);
    // A world clock move samples the world's history; the other world records nothing of it.
    const advanced = await as(w1, `${svc.api}/sandbox/clock`, {
      method: 'POST',
      json: { advance_seconds: 3600 },
    });
    expect(advanced.status).toBe(200);
    const hist = await as(w1, `${svc.api}/indices/all/history`);
    expect(hist.status).toBe(200);
    expect(hist.body.data.length).toBeGreaterThan(0);
    const last = hist.body.data[hist.body.data.length - 1];
    expect(last.value).toBe(after.get('all'));
    expect(Date.parse(last.time)).toBeGreaterThan(Date.parse('2026-11-22T12:30:00Z'));

    await deleteWorld(svc, a, w1);
    const w3 = await openWorld(svc, a);
    expect(await indices(w3)).toEqual(before);
  });
});
