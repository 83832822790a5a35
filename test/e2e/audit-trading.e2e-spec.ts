import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { totpAt } from '../../src/common/crypto/totp.js';
import { EngineRegistry } from '../../src/modules/trading/engine-registry.js';
import { verifiedAccount } from '../support/access.js';
import { expectContractError, http, type JsonResponse, type Running } from '../support/harness.js';
import {
  allOrders,
  as,
  cancel,
  engineMoney,
  expectValidation,
  getOrder,
  keyFor,
  limit,
  market,
  ORDER_SCOPES,
  paperQuery,
  place,
  placeRaw,
  STARTING_BALANCE,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { ledger, positions, walletOf } from '../support/wallet.js';

/**
 * Audit of issue 4 against CONTRACT.md (Markets and the binary-contract model, Orders, Positions,
 * wallet, sandbox controls) and SPEC.md (Orders, Deprecated operations, Withdrawals): the rules
 * the other suites left without a test that would fail if the rule broke. The feed is stopped,
 * so each market's book is the house ladder (R-1..R-5 bids, R+1..R+5 asks, 100 contracts each).
 */
describe('audit: trading rules without another test', () => {
  let svc: Running;
  let a: Trader;
  let b: Trader;
  const SCOPES = [...ORDER_SCOPES, 'wallet:write'];

  beforeAll(async () => {
    svc = await startOrdersApp();
    a = await trader(svc, 'a@audit-trading.test', { scopes: SCOPES });
    b = await trader(svc, 'b@audit-trading.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  const expectVersioned = (label: string, res: JsonResponse, status: number): void => {
    expect([label, res.status]).toEqual([label, status]);
    expect([label, res.headers.get('svc-api-version')]).toEqual([label, 'v1']);
    expect([label, res.headers.get('x-request-id')]).toEqual([label, expect.any(String)]);
  };

  it('every answer of the order, wallet, position, market-book and sandbox operations carries Svc-API-Version: v1 and X-Request-Id', async () => {
    const m = TRADABLE[0];
    const R = m.reference;
    const api = svc.api;
    const placed = await placeRaw(svc, a, limit(m, 'BUY', 'YES', R - 10, 2));
    expectVersioned('POST /orders', placed, 201);
    const id = placed.body.id as string;
    const calls: [string, Promise<JsonResponse>, number][] = [
      [
        'POST /orders/batch',
        as(a, `${api}/orders/batch`, {
          method: 'POST',
          json: { orders: [limit(m, 'BUY', 'YES', R - 11, 1)] },
        }),
        200,
      ],
      [
        'POST /orders/quote',
        as(a, `${api}/orders/quote`, { method: 'POST', json: market(m, 'BUY', 'YES', 1) }),
        200,
      ],
      ['GET /orders', as(a, `${api}/orders`), 200],
      ['GET /orders/{id}', as(a, `${api}/orders/${id}`), 200],
      ['GET /orders/export', as(a, `${api}/orders/export`), 200],
      ['GET /orders/cancel-on-disconnect', as(a, `${api}/orders/cancel-on-disconnect`), 200],
      ['GET /wallet', as(a, `${api}/wallet`), 200],
      ['GET /positions/cursor', as(a, `${api}/positions/cursor`), 200],
      ['GET /wallet/positions', as(a, `${api}/wallet/positions`), 200],
      ['GET /transactions/cursor', as(a, `${api}/transactions/cursor`), 200],
      ['GET /wallet/transactions', as(a, `${api}/wallet/transactions`), 200],
      ['GET /markets/{id}/orderbook', as(a, `${api}/markets/${m.id}/orderbook?depth=3`), 200],
      ['GET /markets/{id}/trades', as(a, `${api}/markets/${m.id}/trades`), 200],
    ];
    for (const [label, res, status] of calls) expectVersioned(label, await res, status);
    // The CSV export is streamed: the headers still come first, with the CSV.
    const csv = await as(a, `${api}/orders/export`);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expectVersioned(
      'PATCH /orders/{id}',
      await as(a, `${api}/orders/${id}`, { method: 'PATCH', json: { quantity: 1 } }),
      200,
    );
    expectVersioned('DELETE /orders/{id}', await cancel(svc, a, id), 200);
    const other = await place(svc, a, limit(m, 'BUY', 'YES', R - 12, 1));
    expectVersioned(
      'POST /orders/cancel-batch',
      await as(a, `${api}/orders/cancel-batch`, {
        method: 'POST',
        json: { order_ids: [other.id] },
      }),
      200,
    );
    expectVersioned(
      'POST /orders/cancel-all',
      await as(a, `${api}/orders/cancel-all`, { method: 'POST', json: {} }),
      200,
    );
    expectVersioned(
      'POST /sandbox/wallet/fund',
      await as(a, `${api}/sandbox/wallet/fund`, { method: 'POST', json: { amount_cents: 1 } }),
      201,
    );
    expectVersioned(
      'POST /sandbox/markets/{id}/price',
      await as(a, `${api}/sandbox/markets/${m.id}/price`, { method: 'POST', json: { price: R } }),
      200,
    );
    // A caller's own X-Request-Id is echoed.
    const traced = await as(a, `${api}/orders`, {
      headers: { 'x-request-id': 'audit-trace-0001' },
    });
    expect(traced.headers.get('x-request-id')).toBe('audit-trace-0001');
    const tracedCsv = await as(a, `${api}/orders/export`, {
      headers: { 'x-request-id': 'audit-trace-0002' },
    });
    expect(tracedCsv.headers.get('x-request-id')).toBe('audit-trace-0002');
  });

  it('updated_at follows amends, fills and cancels; created_at never moves', async () => {
    const clock = svc.clock as ManualClock;
    const m = TRADABLE[1];
    const R = m.reference;
    const at = () => clock.nowDate().toISOString();
    const o = await place(svc, a, limit(m, 'BUY', 'YES', R, 10));
    const created = at();
    expect([o.created_at, o.updated_at]).toEqual([created, created]);
    clock.advance(5_000);
    const amended = await as(a, `${svc.api}/orders/${o.id}`, {
      method: 'PATCH',
      json: { quantity: 8 },
    });
    expect(amended.body).toMatchObject({ created_at: created, updated_at: at() });
    clock.advance(5_000);
    // A fill of the resting order moves it too.
    await place(svc, b, limit(m, 'SELL', 'YES', R, 3, { time_in_force: 'IOC' }));
    const filledAt = at();
    expect(await getOrder(svc, a, o.id)).toMatchObject({
      status: 'PARTIALLY_FILLED',
      created_at: created,
      updated_at: filledAt,
    });
    clock.advance(5_000);
    const cancelled = await cancel(svc, a, o.id);
    expect(cancelled.body).toMatchObject({
      status: 'CANCELLED',
      created_at: created,
      updated_at: at(),
    });
    expect(await getOrder(svc, a, o.id)).toEqual(cancelled.body);
  });

  it("a live key of the same user cannot read, amend or cancel the user's paper orders, and the reverse", async () => {
    const m = TRADABLE[2];
    const R = m.reference;
    const live = await keyFor(svc, a.email, a.token, { environment: 'live', scopes: SCOPES });
    const dep = await as(live, `${svc.api}/wallet/deposits`, {
      method: 'POST',
      json: { amount_cents: 10_000 },
    });
    expect(dep.status).toBe(201);
    const paperOrder = await place(svc, a, limit(m, 'BUY', 'YES', R - 10, 1));
    const liveOrder = await place(svc, live, limit(m, 'BUY', 'YES', 10, 1));
    expect([paperOrder.environment, liveOrder.environment]).toEqual(['test', 'live']);
    for (const [who, theirs] of [
      [live, paperOrder],
      [a, liveOrder],
    ] as const) {
      expectContractError(await as(who, `${svc.api}/orders/${theirs.id}`), 404, 'NOT_FOUND');
      expectContractError(
        await as(who, `${svc.api}/orders/${theirs.id}`, { method: 'PATCH', json: { quantity: 2 } }),
        404,
        'NOT_FOUND',
      );
      expectContractError(await cancel(svc, who, theirs.id), 404, 'NOT_FOUND');
      const batch = await as(who, `${svc.api}/orders/cancel-batch`, {
        method: 'POST',
        json: { order_ids: [theirs.id] },
      });
      expect(batch.body.results).toEqual([
        expect.objectContaining({ index: 0, status: 404, error: expect.anything() }),
      ]);
    }
    expect((await getOrder(svc, a, paperOrder.id)).status).toBe('OPEN');
    expect((await getOrder(svc, live, liveOrder.id)).status).toBe('OPEN');
    // cancel-all stays in the caller's engine: the live key's takes its live order only.
    const cancelAll = (who: Trader) =>
      as(who, `${svc.api}/orders/cancel-all`, { method: 'POST', json: { market_id: m.id } });
    expect((await cancelAll(live)).body).toEqual({ cancelled: 1 });
    expect((await getOrder(svc, live, liveOrder.id)).status).toBe('CANCELLED');
    expect((await getOrder(svc, a, paperOrder.id)).status).toBe('OPEN');
    expect((await cancelAll(a)).body).toEqual({ cancelled: 1 });
    expect((await getOrder(svc, a, paperOrder.id)).status).toBe('CANCELLED');
  });

  it('amend keeps time priority when the price sent is the same and the quantity lower', async () => {
    const m = TRADABLE[7];
    const R = m.reference;
    const first = await place(svc, a, limit(m, 'BUY', 'YES', R, 10));
    const second = await place(svc, a, limit(m, 'BUY', 'YES', R, 10));
    const amended = await as(a, `${svc.api}/orders/${first.id}`, {
      method: 'PATCH',
      json: { price: R, quantity: 6 },
    });
    expect(amended.body).toMatchObject({ price: R, quantity: 6, remaining_quantity: 6 });
    await place(svc, b, limit(m, 'SELL', 'YES', R, 6, { time_in_force: 'IOC' }));
    expect((await getOrder(svc, a, first.id)).status).toBe('FILLED');
    expect((await getOrder(svc, a, second.id)).filled_quantity).toBe(0);
    expect((await cancel(svc, a, second.id)).status).toBe(200);
  });

  it('amending a NO order prices it in NO cents: a crossing amend trades at the resting YES price', async () => {
    const m = TRADABLE[17];
    const R = m.reference;
    // Below 50, so that reading the NO price as a YES price would not cross.
    expect(R).toBeLessThan(50);
    // BUY NO at 100-R is a YES ask at R; at 102-R it is an ask at R-2, crossing the house bid R-1.
    const o = await place(svc, a, limit(m, 'BUY', 'NO', 100 - R, 5));
    expect(o.status).toBe('OPEN');
    const res = await as(a, `${svc.api}/orders/${o.id}`, {
      method: 'PATCH',
      json: { price: 102 - R },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ price: 102 - R, status: 'FILLED', filled_quantity: 5 });
    expect(res.body.fills).toEqual([
      expect.objectContaining({
        price: 101 - R,
        yes_price: R - 1,
        quantity: 5,
        liquidity: 'TAKER',
      }),
    ]);
  });

  it('amending a FILLED or EXPIRED order is 409 ORDER_NOT_OPEN and changes nothing', async () => {
    const m = TRADABLE[9];
    const filled = await place(svc, a, market(m, 'BUY', 'YES', 1));
    const expired = await place(svc, a, limit(m, 'BUY', 'YES', 1, 1, { time_in_force: 'IOC' }));
    expect([filled.status, expired.status]).toEqual(['FILLED', 'EXPIRED']);
    for (const o of [filled, expired]) {
      const err = expectContractError(
        await as(a, `${svc.api}/orders/${o.id}`, { method: 'PATCH', json: { quantity: 2 } }),
        409,
        'ORDER_NOT_OPEN',
      );
      expect(err.details).toEqual({ order_id: o.id });
      expect(await getOrder(svc, a, o.id)).toEqual(o);
    }
  });

  it('a sandbox price move through a resting ask: the house bid takes it at the ask price', async () => {
    const m = TRADABLE[10];
    const R = m.reference;
    const ask = await place(svc, a, limit(m, 'SELL', 'YES', R + 7, 4));
    const askNo = await place(svc, b, limit(m, 'BUY', 'NO', 100 - (R + 8), 3)); // an ask at R+8
    const res = await as(a, `${svc.api}/sandbox/markets/${m.id}/price`, {
      method: 'POST',
      json: { price: R + 12 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ reference_price: R + 12, best_bid: R + 11 });
    const filled = await getOrder(svc, a, ask.id);
    expect(filled).toMatchObject({ status: 'FILLED', average_fill_price: R + 7 });
    expect(filled.fills).toEqual([
      expect.objectContaining({ price: R + 7, yes_price: R + 7, quantity: 4, liquidity: 'MAKER' }),
    ]);
    const filledNo = await getOrder(svc, b, askNo.id);
    expect(filledNo).toMatchObject({ status: 'FILLED', average_fill_price: 100 - (R + 8) });
  });

  it('client_order_id stays taken while the order is PARTIALLY_FILLED, and is free once a counterparty fills it or a resolution cancels it', async () => {
    const m = TRADABLE[12];
    const R = m.reference;
    const o = await place(svc, a, limit(m, 'BUY', 'YES', R, 10, { client_order_id: 'cid-1' }));
    await place(svc, b, limit(m, 'SELL', 'YES', R, 4, { time_in_force: 'IOC' }));
    expect((await getOrder(svc, a, o.id)).status).toBe('PARTIALLY_FILLED');
    const dup = expectContractError(
      await placeRaw(svc, a, limit(m, 'BUY', 'YES', R - 10, 1, { client_order_id: 'cid-1' })),
      409,
      'DUPLICATE_CLIENT_ORDER_ID',
    );
    expect(dup.details).toEqual({ client_order_id: 'cid-1', order_id: o.id });
    await place(svc, b, limit(m, 'SELL', 'YES', R, 6, { time_in_force: 'IOC' }));
    expect((await getOrder(svc, a, o.id)).status).toBe('FILLED');
    const again = await place(
      svc,
      a,
      limit(m, 'BUY', 'YES', R - 10, 1, { client_order_id: 'cid-1' }),
    );
    expect(again.status).toBe('OPEN');
    // A resolution cancels it: the id is free again.
    const other = TRADABLE[13];
    const r2 = await place(
      svc,
      a,
      limit(other, 'BUY', 'YES', other.reference - 10, 1, { client_order_id: 'cid-2' }),
    );
    expect(
      (
        await as(a, `${svc.api}/sandbox/markets/${other.id}/resolve`, {
          method: 'POST',
          json: { outcome: 'NO' },
        })
      ).status,
    ).toBe(200);
    expect((await getOrder(svc, a, r2.id)).status).toBe('CANCELLED');
    expect(
      (await placeRaw(svc, a, limit(m, 'BUY', 'YES', R - 11, 1, { client_order_id: 'cid-2' })))
        .status,
    ).toBe(201);
  });

  it('a partial fill releases its share of the reserve; an amend re-reserves at the new price', async () => {
    const e = await trader(svc, 'e@audit-trading.test', { scopes: SCOPES });
    const m = TRADABLE[14];
    const R = m.reference;
    const o = await place(svc, e, limit(m, 'BUY', 'YES', R, 10));
    expect((await walletOf(svc, e)).reserved_cents).toBe(10 * R);
    await place(svc, b, limit(m, 'SELL', 'YES', R, 4, { time_in_force: 'IOC' }));
    const w = await walletOf(svc, e);
    expect(w).toMatchObject({ balance_cents: STARTING_BALANCE - 4 * R, reserved_cents: 6 * R });
    const amended = await as(e, `${svc.api}/orders/${o.id}`, {
      method: 'PATCH',
      json: { price: R - 3 },
    });
    expect(amended.body).toMatchObject({ status: 'PARTIALLY_FILLED', remaining_quantity: 6 });
    expect((await walletOf(svc, e)).reserved_cents).toBe(6 * (R - 3));
    expect((await cancel(svc, e, o.id)).status).toBe(200);
    expect((await walletOf(svc, e)).reserved_cents).toBe(0);
  });

  it('a reset frees the client_order_ids of the orders it removed, for every test key of the user', async () => {
    const f = await trader(svc, 'f@audit-trading.test', { scopes: SCOPES });
    const f2 = await keyFor(svc, f.email, f.token, { scopes: SCOPES });
    const m = TRADABLE[15];
    const R = m.reference;
    await place(svc, f, limit(m, 'BUY', 'YES', R - 10, 1, { client_order_id: 'keep-1' }));
    await place(svc, f2, limit(m, 'BUY', 'YES', R - 10, 1, { client_order_id: 'keep-1' }));
    const reset = await as(f, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(reset.body.cancelled_orders).toBe(2);
    expect(await allOrders(svc, f2)).toEqual([]);
    for (const k of [f, f2]) {
      expect(
        (await placeRaw(svc, k, limit(m, 'BUY', 'YES', R - 10, 1, { client_order_id: 'keep-1' })))
          .status,
      ).toBe(201);
    }
  });

  it('a MARKET order whose walk costs more than the available balance is 422 INSUFFICIENT_FUNDS and fills nothing', async () => {
    const g = await trader(svc, 'g@audit-trading.test', { scopes: SCOPES });
    const m = TRADABLE[16];
    const R = m.reference;
    // A resting bid reserves 998,000 of the 1,000,000: 2,000 stay available.
    const big = await place(svc, g, limit(m, 'BUY', 'YES', 10, 99_800));
    expect(big.status).toBe('OPEN');
    const before = {
      wallet: await walletOf(svc, g),
      orders: await allOrders(svc, g),
      book: (await as(g, `${svc.api}/markets/${m.id}/orderbook?depth=50`)).body,
    };
    expect(before.wallet.available_cents).toBe(2_000);
    const needBuy = 100 * (R + 1); // 100 at R+1, R >= 20: over 2,000
    const buy = expectContractError(
      await placeRaw(svc, g, market(m, 'BUY', 'YES', 100)),
      422,
      'INSUFFICIENT_FUNDS',
    );
    expect(buy.details).toMatchObject({ required_cents: needBuy, available_cents: 2_000 });
    // Selling YES from flat opens NO at 100 - p: 100 at R-1 costs 100 x (101 - R).
    expectContractError(
      await placeRaw(svc, g, market(m, 'SELL', 'YES', 100)),
      422,
      'INSUFFICIENT_FUNDS',
    );
    expect({
      wallet: await walletOf(svc, g),
      orders: await allOrders(svc, g),
      book: (await as(g, `${svc.api}/markets/${m.id}/orderbook?depth=50`)).body,
    }).toEqual(before);
    // What fits fills.
    const small = await place(svc, g, market(m, 'BUY', 'YES', 5));
    expect(small).toMatchObject({ status: 'FILLED', filled_cost_cents: 5 * (R + 1) });
    await cancel(svc, g, big.id);
  });

  it('the re-quoting house takes resting orders in time priority, up to its finite size', async () => {
    const m = TRADABLE[11];
    const R = m.reference;
    const p = R - 5; // the house's own lowest bid; users rest behind it
    const first = await place(svc, a, limit(m, 'BUY', 'YES', p, 300));
    const second = await place(svc, b, limit(m, 'BUY', 'YES', p, 300));
    // The new ladder asks p-4..p, 100 each: 500 contracts cross the bids at p.
    const res = await as(a, `${svc.api}/sandbox/markets/${m.id}/price`, {
      method: 'POST',
      json: { price: p - 5 },
    });
    expect(res.status).toBe(200);
    expect(await getOrder(svc, a, first.id)).toMatchObject({
      status: 'FILLED',
      filled_quantity: 300,
      average_fill_price: p,
    });
    expect(await getOrder(svc, b, second.id)).toMatchObject({
      status: 'PARTIALLY_FILLED',
      filled_quantity: 200,
      average_fill_price: p,
    });
    await cancel(svc, b, second.id);
  });

  it('a batch leg error is the contract error object: code, message, status, request_id of the batch, details', async () => {
    const m = TRADABLE[3];
    const res = await as(a, `${svc.api}/orders/batch`, {
      method: 'POST',
      json: {
        orders: [
          limit(m, 'BUY', 'YES', 99, 50_000),
          limit({ id: 'mkt_ffffffffffffffffffff' }, 'BUY', 'YES', 50, 1),
        ],
      },
    });
    expect(res.status).toBe(200);
    const rid = res.headers.get('x-request-id');
    for (const [i, status, code] of [
      [0, 422, 'INSUFFICIENT_FUNDS'],
      [1, 404, 'NOT_FOUND'],
    ] as const) {
      const leg = res.body.results[i];
      expect(Object.keys(leg).sort()).toEqual(['error', 'index', 'status']);
      expect(leg).toEqual({
        index: i,
        status,
        error: {
          code,
          message: expect.any(String),
          status,
          request_id: rid,
          details: expect.any(Object),
        },
      });
    }
  });

  it('defaults: LIMIT is GTC, post_only false, client_order_id null; MARKET is IOC, and takes IOC or FOK explicitly', async () => {
    const m = TRADABLE[4];
    const R = m.reference;
    const o = await place(svc, a, limit(m, 'BUY', 'YES', R - 10, 1));
    expect(o).toMatchObject({ time_in_force: 'GTC', post_only: false, client_order_id: null });
    for (const tif of [undefined, 'IOC', 'FOK'] as const) {
      const mo = await place(
        svc,
        a,
        market(m, 'BUY', 'YES', 1, tif === undefined ? {} : { time_in_force: tif }),
      );
      expect(mo).toMatchObject({
        type: 'MARKET',
        price: null,
        time_in_force: tif ?? 'IOC',
        status: 'FILLED',
      });
    }
    expect((await cancel(svc, a, o.id)).status).toBe(200);
  });

  it('resolution conserves money: the pairs of the market become exactly 100 cents each', async () => {
    const m = TRADABLE[5];
    const R = m.reference;
    await place(svc, a, market(m, 'BUY', 'YES', 30)); // from the house asks
    await place(svc, b, market(m, 'BUY', 'NO', 20)); // into the house bids
    await place(svc, b, limit(m, 'BUY', 'YES', R, 5)); // rests at R, reserved
    const before = engineMoney(svc);
    const res = await as(a, `${svc.api}/sandbox/markets/${m.id}/resolve`, {
      method: 'POST',
      json: { outcome: 'YES' },
    });
    expect(res.status).toBe(200);
    expect(res.body.payout_cents).toBe(100 * 30);
    expect(engineMoney(svc)).toBe(before);
    expect((await walletOf(svc, b)).reserved_cents).toBe(0);
  });

  it("a sandbox reset leaves the user's live account alone: live orders, wallet and ledger", async () => {
    const c = await trader(svc, 'c@audit-trading.test', { scopes: SCOPES });
    const live = await keyFor(svc, c.email, c.token, { environment: 'live', scopes: SCOPES });
    const m = TRADABLE[6];
    expect(
      (
        await as(live, `${svc.api}/wallet/deposits`, {
          method: 'POST',
          json: { amount_cents: 5_000 },
        })
      ).status,
    ).toBe(201);
    const liveOrder = await place(svc, live, limit(m, 'BUY', 'YES', 20, 10));
    await place(svc, c, limit(m, 'BUY', 'YES', m.reference - 10, 10));
    const liveBefore = {
      wallet: await walletOf(svc, live),
      ledger: await ledger(svc, live),
      orders: await allOrders(svc, live),
    };
    expect(liveBefore.wallet).toMatchObject({ balance_cents: 5_000, reserved_cents: 200 });
    const reset = await as(c, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(reset.status).toBe(200);
    expect(reset.body.cancelled_orders).toBe(1);
    expect({
      wallet: await walletOf(svc, live),
      ledger: await ledger(svc, live),
      orders: await allOrders(svc, live),
    }).toEqual(liveBefore);
    expect((await getOrder(svc, live, liveOrder.id)).status).toBe('OPEN');
    expect((await walletOf(svc, c)).balance_cents).toBe(STARTING_BALANCE);
    await as(live, `${svc.api}/orders/cancel-all`, { method: 'POST', json: {} });
  });

  it('GET /positions/cursor and GET /transactions/cursor page 50 by default; limit 1..200', async () => {
    const d = await trader(svc, 'd@audit-trading.test', { scopes: SCOPES });
    // 51 ledger rows: the starting FUNDING and 50 more.
    for (let i = 0; i < 50; i++) {
      const f = await as(d, `${svc.api}/sandbox/wallet/fund`, {
        method: 'POST',
        json: { amount_cents: 1 },
      });
      expect(f.status).toBe(201);
    }
    const first = await as(d, `${svc.api}/transactions/cursor`);
    expect(first.body.data).toHaveLength(50);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const all = await as(d, `${svc.api}/transactions/cursor?limit=200`);
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(51);
    expect(all.body.next_cursor).toBeNull();
    for (const path of ['/positions/cursor', '/wallet/positions']) {
      expect((await as(d, `${svc.api}${path}?limit=200`)).status).toBe(200);
      expect((await as(d, `${svc.api}${path}?limit=1`)).status).toBe(200);
      expectValidation(await as(d, `${svc.api}${path}?limit=201`), 'limit');
    }
    expect(await positions(svc, d)).toEqual([]);
  });

  it('a withdrawal needs wallet:write: without it 403 INSUFFICIENT_SCOPE, nothing withdrawn', async () => {
    const live = await keyFor(svc, a.email, a.token, {
      environment: 'live',
      scopes: ['wallet:read'],
    });
    const err = expectContractError(
      await as(live, `${svc.api}/wallet/withdrawals`, {
        method: 'POST',
        json: { amount_cents: 5 },
      }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    expect(err.details.required_scopes).toEqual(['wallet:write']);
    expect((await ledger(svc, live)).map((r) => r.type)).not.toContain('WITHDRAWAL');
  });
});

/**
 * The paper engine's settings (issue 4; CONTRACT.md sandbox controls): SANDBOX_STARTING_BALANCE_CENTS
 * is where a new paper account starts and where a reset returns it; SANDBOX_FEED_SEED makes the
 * price feed reproducible. The feed's timer is off (interval 0); its ticks are driven by hand, as
 * the timer would, so two services can be compared tick by tick.
 */
describe('audit: paper engine settings reach the service', () => {
  const tickAndRead = async (svc: Running, t: Trader, ticks: number) => {
    const rt = svc.app.get(EngineRegistry).get('test');
    const out: unknown[] = [];
    for (let i = 0; i < ticks; i++) {
      rt.tick();
      const res = await as(t, `${svc.api}/markets/${TRADABLE[0].id}/orderbook?depth=1`);
      out.push([res.body.bids[0]?.price ?? null, res.body.asks[0]?.price ?? null]);
    }
    return out;
  };

  it('SANDBOX_STARTING_BALANCE_CENTS: a new paper account starts there, a reset returns there', async () => {
    const svc = await startOrdersApp({ env: { SANDBOX_STARTING_BALANCE_CENTS: '250000' } });
    try {
      const t = await trader(svc, 'start@audit-trading.test', {
        scopes: [...ORDER_SCOPES, 'wallet:write'],
      });
      expect(await walletOf(svc, t)).toMatchObject({
        balance_cents: 250_000,
        available_cents: 250_000,
      });
      expect((await ledger(svc, t)).map((r) => [r.type, r.amount_cents])).toEqual([
        ['FUNDING', 250_000],
      ]);
      await place(svc, t, market(TRADABLE[0], 'BUY', 'YES', 10));
      expect((await walletOf(svc, t)).balance_cents).toBeLessThan(250_000);
      const reset = await as(t, `${svc.api}/sandbox/reset`, { method: 'POST' });
      expect(reset.status).toBe(200);
      expect(reset.body.wallet).toMatchObject({ balance_cents: 250_000, available_cents: 250_000 });
      expect((await ledger(svc, t)).map((r) => [r.type, r.amount_cents])).toEqual([
        ['RESET', 250_000],
      ]);
    } finally {
      await svc.close();
    }
  });

  it('SANDBOX_FEED_SEED: the same seed moves the paper books the same way; another seed another way', async () => {
    const run = async (seed: string) => {
      const svc = await startOrdersApp({ env: { SANDBOX_FEED_SEED: seed } });
      try {
        return await tickAndRead(svc, await trader(svc), 40);
      } finally {
        await svc.close();
      }
    };
    const first = await run('4242');
    expect(new Set(first.map((x) => JSON.stringify(x))).size).toBeGreaterThan(1);
    expect(await run('4242')).toEqual(first);
    expect(await run('4243')).not.toEqual(first);
    // Three boots in one test: more than the default 60 s on a loaded machine.
  }, 180_000);
});

/**
 * SPEC.md Withdrawals and CONTRACT.md sandbox controls: the step-up is cached for the user who
 * made it (no one else's withdrawal proceeds on it), and POST /sandbox/clock moves the service
 * clock for the step-up window as for every other time rule.
 */
describe('audit: withdrawal step-up belongs to its user and follows the service clock', () => {
  let svc: Running;
  const scopes = ['wallet:read', 'wallet:write'];

  beforeAll(async () => {
    svc = await startOrdersApp({ env: { SANDBOX_CLOCK_CONTROL: 'true' } });
  });
  afterAll(async () => {
    await svc.close();
  });

  /** A verified user with a funded live key, enrolled in MFA. */
  const liveUser = async (email: string) => {
    const token = await verifiedAccount(svc, email);
    const key = await keyFor(svc, email, token, { environment: 'live', scopes });
    const dep = await as(key, `${svc.api}/wallet/deposits`, {
      method: 'POST',
      json: { amount_cents: 10_000 },
    });
    expect(dep.status).toBe(201);
    const en = await http(`${svc.api}/security/mfa/enroll`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(en.status).toBe(201);
    const stepUp = async () => {
      const code = totpAt(en.body.secret as string, Math.floor(svc.clock.nowSeconds() / 30));
      const res = await http(`${svc.api}/security/mfa/step-up`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        json: { code },
      });
      expect(res.status).toBe(200);
    };
    return { key, stepUp };
  };
  const withdraw = (key: Trader) =>
    as(key, `${svc.api}/wallet/withdrawals`, { method: 'POST', json: { amount_cents: 100 } });

  it("one user's step-up does not let another user withdraw", async () => {
    const x = await liveUser('x@audit-withdraw.test');
    const y = await liveUser('y@audit-withdraw.test');
    await x.stepUp();
    const before = await walletOf(svc, y.key);
    expectContractError(await withdraw(y.key), 403, 'MFA_STEP_UP_REQUIRED');
    expect(await walletOf(svc, y.key)).toEqual(before);
    expect((await withdraw(x.key)).status).toBe(201);
  });

  it('POST /sandbox/clock past the 300 s window ends the step-up', async () => {
    const z = await liveUser('z@audit-withdraw.test');
    await z.stepUp();
    const tick = (advance_seconds: number) =>
      http(`${svc.api}/sandbox/clock`, { method: 'POST', json: { advance_seconds } });
    expect((await tick(299)).status).toBe(200);
    expect((await withdraw(z.key)).status).toBe(201);
    expect((await tick(2)).status).toBe(200);
    expectContractError(await withdraw(z.key), 403, 'MFA_STEP_UP_REQUIRED');
    expect((await walletOf(svc, z.key)).balance_cents).toBe(10_000 - 100);
  });
});

/**
 * CONTRACT.md error table: with the sandbox flag off a test key is refused (403 SANDBOX_DISABLED)
 * on the trading routes too, before it can place, change or read anything of the paper engine;
 * the orders it left resting stay as they were, and live keys trade as before.
 */
describe('audit: the trading routes with the sandbox off', () => {
  it('a test key minted while it was on gets 403 SANDBOX_DISABLED on every order, wallet and position route; nothing changes', async () => {
    const m = TRADABLE[18];
    const R = m.reference;
    let svc = await startOrdersApp();
    const t = await trader(svc, 'off@audit-trading.test', {
      scopes: [...ORDER_SCOPES, 'wallet:write'],
    });
    const live = await keyFor(svc, t.email, t.token, {
      environment: 'live',
      scopes: [...ORDER_SCOPES, 'wallet:write'],
    });
    const resting = await place(svc, t, limit(m, 'BUY', 'YES', R - 10, 3));
    const dataDir = svc.dataDir;
    await svc.close({ keepData: true });
    svc = await startOrdersApp({ dataDir, env: { DEVELOPER_SANDBOX_ENABLED: 'false' } });
    try {
      const calls: [string, string, unknown][] = [
        ['POST', '/orders', limit(m, 'BUY', 'YES', R - 10, 1)],
        ['POST', '/orders/batch', { orders: [limit(m, 'BUY', 'YES', R - 10, 1)] }],
        ['POST', '/orders/quote', market(m, 'BUY', 'YES', 1)],
        ['PATCH', `/orders/${resting.id}`, { quantity: 1 }],
        ['DELETE', `/orders/${resting.id}`, undefined],
        ['POST', '/orders/cancel-all', {}],
        ['POST', '/orders/cancel-batch', { order_ids: [resting.id] }],
        ['GET', '/orders', undefined],
        ['GET', `/orders/${resting.id}`, undefined],
        ['GET', '/orders/export', undefined],
        ['GET', '/wallet', undefined],
        ['GET', '/positions/cursor', undefined],
        ['GET', '/transactions/cursor', undefined],
        ['POST', '/sandbox/reset', undefined],
      ];
      for (const [method, path, json] of calls) {
        const res = await as(t, `${svc.api}${path}`, { method, json });
        try {
          expectContractError(res, 403, 'SANDBOX_DISABLED');
        } catch (e) {
          throw new Error(`${method} ${path}: ${(e as Error).message}`, { cause: e });
        }
      }
      // The paper order rests as it was (read outside the API: the paper engine's record).
      const stored = paperQuery<{ status: string; quantity: number }>(
        svc,
        'SELECT status, quantity FROM orders WHERE id = ?',
        resting.id,
      );
      expect(stored).toEqual([{ status: 'OPEN', quantity: 3 }]);
      // A live key of the same user still trades on the live engine.
      expect(
        (
          await as(live, `${svc.api}/wallet/deposits`, {
            method: 'POST',
            json: { amount_cents: 1_000 },
          })
        ).status,
      ).toBe(201);
      const o = await place(svc, live, limit(m, 'BUY', 'YES', 10, 1));
      expect(o).toMatchObject({ environment: 'live', status: 'OPEN' });
    } finally {
      await svc.close();
    }
  });
});
