import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Running } from '../support/harness.js';
import {
  as,
  keyFor,
  limit,
  market,
  place,
  STARTING_BALANCE,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { expectLedgerConsistent, ledger, positions, walletOf } from '../support/wallet.js';

/**
 * GET /wallet, GET /positions/cursor and GET /transactions/cursor follow a test key's fills to the
 * cent (CONTRACT.md, Markets and the binary-contract model). The feed is stopped: each market's
 * book is the house ladder, bids R-1..R-5 and asks R+1..R+5 with 100 contracts each, R being the
 * seeded reference, so every fill price below is known in advance.
 */
describe('wallet and positions follow the fills of a test key', () => {
  let svc: Running;
  let t: Trader;
  const m = TRADABLE[0];
  const R = m.reference;

  beforeAll(async () => {
    svc = await startOrdersApp();
    t = await trader(svc, 'fills@wallet.test');
  });
  afterAll(async () => {
    await svc.close();
  });

  it('a new paper account starts at SANDBOX_STARTING_BALANCE_CENTS with one FUNDING row', async () => {
    expect(await walletOf(svc, t)).toEqual({
      environment: 'test',
      currency: 'USD',
      balance_cents: STARTING_BALANCE,
      reserved_cents: 0,
      available_cents: STARTING_BALANCE,
    });
    const rows = await ledger(svc, t);
    expect(rows).toEqual([
      {
        id: expect.stringMatching(/^txn_[0-9a-z]+$/),
        type: 'FUNDING',
        amount_cents: STARTING_BALANCE,
        balance_after_cents: STARTING_BALANCE,
        reference_id: 'starting-balance',
        created_at: '2026-11-22T12:00:00.000Z',
      },
    ]);
    expect(await positions(svc, t)).toEqual([]);
  });

  it('BUY YES q at p costs p*q; the position is marked at the mid', async () => {
    const o = await place(svc, t, limit(m, 'BUY', 'YES', R + 1, 10));
    expect(o).toMatchObject({ status: 'FILLED', filled_quantity: 10 });
    const w = await walletOf(svc, t);
    expect(w.balance_cents).toBe(STARTING_BALANCE - 10 * (R + 1));
    expect(w.reserved_cents).toBe(0);
    expect(await positions(svc, t)).toEqual([
      {
        market_id: m.id,
        side: 'YES',
        quantity: 10,
        average_price: R + 1,
        cost_basis_cents: 10 * (R + 1),
        realized_pnl_cents: 0,
        // Book: bid R-1 (100), ask R+1 (90 left): mid R.
        mark_price: R,
        unrealized_pnl_cents: 10 * R - 10 * (R + 1),
      },
    ]);
  });

  it('selling back closes part of it at the bid; realized P&L is exact', async () => {
    const o = await place(svc, t, limit(m, 'SELL', 'YES', R - 1, 4));
    expect(o).toMatchObject({ status: 'FILLED', filled_quantity: 4 });
    const w = await walletOf(svc, t);
    expect(w.balance_cents).toBe(STARTING_BALANCE - 10 * (R + 1) + 4 * (R - 1));
    expect(await positions(svc, t)).toEqual([
      {
        market_id: m.id,
        side: 'YES',
        quantity: 6,
        average_price: R + 1,
        cost_basis_cents: 6 * (R + 1),
        realized_pnl_cents: 4 * (R - 1) - 4 * (R + 1),
        mark_price: R,
        unrealized_pnl_cents: 6 * R - 6 * (R + 1),
      },
    ]);
  });

  it('holding YES then buying NO redeems the pairs for 100 each and opens NO with the rest', async () => {
    // BUY NO at 101-R rests as a YES ask at R-1: it takes the house bid at R-1 (96 left).
    const o = await place(svc, t, limit(m, 'BUY', 'NO', 101 - R, 8));
    expect(o).toMatchObject({ status: 'FILLED', filled_quantity: 8, average_fill_price: 101 - R });
    const w = await walletOf(svc, t);
    // 6 pairs: each YES paid R+1 and its NO 101-R, and redeems for 100; 2 NO stay open.
    const expected =
      STARTING_BALANCE - 10 * (R + 1) + 4 * (R - 1) + 6 * (R - 1) - 2 * (100 - (R - 1));
    expect(w.balance_cents).toBe(expected);
    expect(w.balance_cents).toBe(STARTING_BALANCE + (2 * R - 222));
    const [p] = await positions(svc, t);
    expect(p).toEqual({
      market_id: m.id,
      side: 'NO',
      quantity: 2,
      average_price: 101 - R,
      cost_basis_cents: 2 * (101 - R),
      realized_pnl_cents: -8 + (6 * (R - 1) - 6 * (R + 1)),
      mark_price: R,
      unrealized_pnl_cents: 2 * (100 - R) - 2 * (101 - R),
    });
    // Cash = start + realized - cost of what is still held.
    expect(w.balance_cents).toBe(STARTING_BALANCE + p.realized_pnl_cents - p.cost_basis_cents);
  });

  it('a resting bid reserves its worst case beyond the NO it would close', async () => {
    const before = await walletOf(svc, t);
    // 5 YES bids at R-3 behind the house: 2 of them would close the 2 NO, 3 would open YES.
    const o = await place(svc, t, limit(m, 'BUY', 'YES', R - 3, 5));
    expect(o.status).toBe('OPEN');
    const w = await walletOf(svc, t);
    expect(w.balance_cents).toBe(before.balance_cents);
    expect(w.reserved_cents).toBe(3 * (R - 3));
    expect(w.available_cents).toBe(before.balance_cents - 3 * (R - 3));
  });

  it('the ledger holds one row per cash movement and sums to the balance', async () => {
    const w = await walletOf(svc, t);
    const rows = await ledger(svc, t);
    expect(rows.map((r) => r.type)).toEqual(['TRADE', 'TRADE', 'TRADE', 'FUNDING']);
    expect(rows.map((r) => r.amount_cents)).toEqual([
      6 * (R - 1) - 2 * (101 - R),
      4 * (R - 1),
      -10 * (R + 1),
      STARTING_BALANCE,
    ]);
    for (const r of rows.slice(0, 3)) expect(r.reference_id).toMatch(/^fil_/);
    expectLedgerConsistent(rows, w.balance_cents);
    // Filters: only the trades.
    expect((await ledger(svc, t, { type: 'TRADE' })).map((r) => r.id)).toEqual(
      rows.slice(0, 3).map((r) => r.id),
    );
    expect(await ledger(svc, t, { type: 'SETTLEMENT' })).toEqual([]);
  });

  it('a live key of the same user sees the live engine only: its own empty world', async () => {
    const live = await keyFor(svc, t.email, t.token, { environment: 'live' });
    expect(await walletOf(svc, live)).toEqual({
      environment: 'live',
      currency: 'USD',
      balance_cents: 0,
      reserved_cents: 0,
      available_cents: 0,
    });
    expect(await positions(svc, live)).toEqual([]);
    expect(await ledger(svc, live)).toEqual([]);
    // No house liquidity on live: a MARKET order finds no book and fills nothing.
    const o = await place(svc, live, market(m, 'BUY', 'YES', 5));
    expect(o).toMatchObject({ environment: 'live', filled_quantity: 0, status: 'EXPIRED' });
    const book = await as(live, `${svc.api}/markets/${m.id}/orderbook`);
    expect(book.body).toEqual({ market_id: m.id, environment: 'live', bids: [], asks: [] });
    expect((await walletOf(svc, live)).balance_cents).toBe(0);
    expect(await positions(svc, live)).toEqual([]);
    // The paper account did not move.
    const paper = await positions(svc, t);
    expect(paper).toHaveLength(1);
    expect(paper[0]).toMatchObject({ side: 'NO', quantity: 2 });
  });
});

/**
 * CONTRACT.md Access details: a key holding env:paper is paper-only whatever its class. A live key
 * with it trades on the paper engine, against the user's paper wallet, and may use the paper
 * world's controls; the user's live wallet never moves.
 */
describe('a live key with env:paper trades on the paper engine', () => {
  let svc: Running;

  beforeAll(async () => {
    svc = await startOrdersApp();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('its orders are environment test, fill against the house and debit the paper wallet only', async () => {
    const m = TRADABLE[1];
    const t = await trader(svc, 'env-paper@wallet.test');
    const paperLive = await keyFor(svc, t.email, t.token, {
      environment: 'live',
      scopes: ['orders:read', 'orders:write', 'wallet:read', 'wallet:write', 'env:paper'],
    });
    const live = await keyFor(svc, t.email, t.token, {
      environment: 'live',
      scopes: ['wallet:read', 'wallet:write'],
    });
    const liveBefore = await walletOf(svc, live);
    expect(liveBefore.environment).toBe('live');
    expect(await walletOf(svc, paperLive)).toMatchObject({
      environment: 'test',
      balance_cents: STARTING_BALANCE,
    });
    // The house quotes only on the paper engine: a market order fills there.
    const o = await place(svc, paperLive, market(m, 'BUY', 'YES', 3));
    expect(o).toMatchObject({ environment: 'test', status: 'FILLED', filled_quantity: 3 });
    const cost = 3 * (m.reference + 1);
    expect(await walletOf(svc, paperLive)).toMatchObject({
      environment: 'test',
      balance_cents: STARTING_BALANCE - cost,
    });
    // The same order is the test key's world: a test key of the user sees it, the live one not.
    expect((await as(t, `${svc.api}/orders/${o.id}`)).status).toBe(200);
    const viaLive = await as(
      await keyFor(svc, t.email, t.token, { environment: 'live', scopes: ['orders:read'] }),
      `${svc.api}/orders/${o.id}`,
    );
    expect(viaLive.status).toBe(404);
    expect(await walletOf(svc, live)).toEqual(liveBefore);
    // Paper-world controls work with it; real-money endpoints refuse it.
    const fund = await as(paperLive, `${svc.api}/sandbox/wallet/fund`, {
      method: 'POST',
      json: { amount_cents: 500 },
    });
    expect(fund.status).toBe(201);
    expect((await walletOf(svc, paperLive)).balance_cents).toBe(STARTING_BALANCE - cost + 500);
    const deposit = await as(paperLive, `${svc.api}/wallet/deposits`, {
      method: 'POST',
      json: { amount_cents: 500 },
    });
    expect(deposit.status).toBe(403);
    expect(deposit.body.error.code).toBe('TEST_KEY_LIVE_ENDPOINT');
  });
});
