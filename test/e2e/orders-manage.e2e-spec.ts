import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, type JsonResponse, type Running } from '../support/harness.js';
import {
  allOrders,
  as,
  book,
  cancel,
  expectValidation,
  getOrder,
  levelAt,
  limit,
  market,
  paperQuery,
  place,
  placeRaw,
  prng,
  startOrdersApp,
  STARTING_BALANCE,
  engineMoney,
  replayFills,
  storedHoldings,
  TRADABLE,
  trader,
  wallet,
  type Order,
  type OrderBody,
  type Trader,
} from '../support/orders.js';

/**
 * Managing orders (CONTRACT.md Orders; issue 4): amend, cancel, cancel-all, cancel-batch, batch,
 * the reads, and money conservation over a random-ish stream. The feed is stopped, so each
 * market's book is the house ladder (R-1..R-5 bids, R+1..R+5 asks, 100 each) plus what the tests
 * place; the price R itself is free for users' orders.
 */
describe('orders: amend, cancel, batch, reads', () => {
  let svc: Running;
  let a: Trader;
  let b: Trader;

  beforeAll(async () => {
    svc = await startOrdersApp();
    a = await trader(svc);
    b = await trader(svc, 'counterparty@orders.test');
  });
  afterAll(async () => {
    await svc.close();
  });

  const amend = (t: Trader, id: string, json: unknown): Promise<JsonResponse> =>
    as(t, `${svc.api}/orders/${id}`, { method: 'PATCH', json });

  it('amend: a lower quantity keeps time priority', async () => {
    const m = TRADABLE[0];
    const R = m.reference;
    const first = await place(svc, a, limit(m, 'BUY', 'YES', R, 10));
    const second = await place(svc, a, limit(m, 'BUY', 'YES', R, 10));
    const amended = await amend(a, first.id, { quantity: 6 });
    expect(amended.status).toBe(200);
    expect(amended.body).toMatchObject({
      id: first.id,
      quantity: 6,
      remaining_quantity: 6,
      price: R,
      status: 'OPEN',
    });
    expect(levelAt((await book(svc, a, m.id)).bids, R)).toBe(16);
    // A taker for 6 meets the first order still at the front of the level.
    const taker = await place(svc, b, limit(m, 'SELL', 'YES', R, 6, { time_in_force: 'IOC' }));
    expect(taker).toMatchObject({ status: 'FILLED', filled_quantity: 6 });
    expect(await getOrder(svc, a, first.id)).toMatchObject({
      status: 'FILLED',
      filled_quantity: 6,
    });
    expect(await getOrder(svc, a, second.id)).toMatchObject({ status: 'OPEN', filled_quantity: 0 });
    expect((await cancel(svc, a, second.id)).status).toBe(200);
  });

  it('amend: a larger quantity re-queues behind the level', async () => {
    const m = TRADABLE[1];
    const R = m.reference;
    const first = await place(svc, a, limit(m, 'BUY', 'YES', R, 10));
    const second = await place(svc, a, limit(m, 'BUY', 'YES', R, 10));
    const amended = await amend(a, first.id, { quantity: 15 });
    expect(amended.body).toMatchObject({ quantity: 15, remaining_quantity: 15, status: 'OPEN' });
    await place(svc, b, limit(m, 'SELL', 'YES', R, 10, { time_in_force: 'IOC' }));
    expect(await getOrder(svc, a, second.id)).toMatchObject({
      status: 'FILLED',
      filled_quantity: 10,
    });
    expect(await getOrder(svc, a, first.id)).toMatchObject({ status: 'OPEN', filled_quantity: 0 });
    expect((await cancel(svc, a, first.id)).status).toBe(200);
  });

  it('amend: a price change re-queues (away and back puts the order behind)', async () => {
    const m = TRADABLE[2];
    const R = m.reference;
    const first = await place(svc, a, limit(m, 'BUY', 'YES', R, 10));
    const second = await place(svc, a, limit(m, 'BUY', 'YES', R, 10));
    expect((await amend(a, first.id, { price: R - 8 })).body).toMatchObject({ price: R - 8 });
    let bk = await book(svc, a, m.id);
    expect([levelAt(bk.bids, R), levelAt(bk.bids, R - 8)]).toEqual([10, 10]);
    expect((await amend(a, first.id, { price: R })).body).toMatchObject({
      price: R,
      status: 'OPEN',
    });
    bk = await book(svc, a, m.id);
    expect([levelAt(bk.bids, R), levelAt(bk.bids, R - 8)]).toEqual([20, 0]);
    await place(svc, b, limit(m, 'SELL', 'YES', R, 10, { time_in_force: 'IOC' }));
    expect((await getOrder(svc, a, second.id)).status).toBe('FILLED');
    expect((await getOrder(svc, a, first.id)).status).toBe('OPEN');
    // A price that now crosses trades at once, as a taker, at the resting price.
    const crossing = await amend(a, first.id, { price: R + 2 });
    expect(crossing.body).toMatchObject({ status: 'FILLED', filled_quantity: 10 });
    expect(crossing.body.fills).toEqual([
      expect.objectContaining({ price: R + 1, quantity: 10, liquidity: 'TAKER' }),
    ]);
  });

  it('amend to nothing is 422 AMEND_NO_CHANGE; bad amends are refused and change nothing', async () => {
    const m = TRADABLE[3];
    const R = m.reference;
    const o = await place(svc, a, limit(m, 'SELL', 'NO', 100 - R, 10)); // a bid at R, the best
    expectContractError(await amend(a, o.id, {}), 422, 'AMEND_NO_CHANGE');
    expectContractError(
      await amend(a, o.id, { price: o.price, quantity: 10 }),
      422,
      'AMEND_NO_CHANGE',
    );
    expectValidation(await amend(a, o.id, { price: 0 }), 'price');
    expectValidation(await amend(a, o.id, { price: 100 }), 'price');
    expectValidation(await amend(a, o.id, { quantity: 0 }), 'quantity');
    expectValidation(await amend(a, o.id, { quantity: 2.5 }), 'quantity');
    expectValidation(await amend(a, o.id, { side: 'YES' }), 'side');
    // Another user's order, an unknown id and a malformed id: 404, nothing disclosed.
    expectContractError(await amend(b, o.id, { quantity: 5 }), 404, 'NOT_FOUND');
    expectContractError(
      await amend(a, 'ord_0000000000000000000000', { quantity: 5 }),
      404,
      'NOT_FOUND',
    );
    expectContractError(await amend(a, 'not-an-id', { quantity: 5 }), 404, 'NOT_FOUND');
    // Below what has filled: a partial fill of 4, then an amend to 4 is refused.
    await place(svc, b, limit(m, 'BUY', 'NO', 100 - R, 4, { time_in_force: 'IOC' }));
    expect(await getOrder(svc, a, o.id)).toMatchObject({
      status: 'PARTIALLY_FILLED',
      filled_quantity: 4,
    });
    expectValidation(await amend(a, o.id, { quantity: 4 }), 'quantity');
    expect(await getOrder(svc, a, o.id)).toMatchObject({
      quantity: 10,
      price: o.price,
      remaining_quantity: 6,
    });
    // A post-only order cannot be amended into a cross.
    const po = await place(svc, a, limit(m, 'BUY', 'YES', R - 9, 3, { post_only: true }));
    expectContractError(await amend(a, po.id, { price: R + 1 }), 422, 'POST_ONLY_WOULD_CROSS');
    expect((await getOrder(svc, a, po.id)).price).toBe(R - 9);
    expect((await cancel(svc, a, o.id)).status).toBe(200);
    // Amending a closed order is 409 ORDER_NOT_OPEN.
    expectContractError(await amend(a, o.id, { quantity: 8 }), 409, 'ORDER_NOT_OPEN');
  });

  it('amend that needs more money than is available is 422 INSUFFICIENT_FUNDS and changes nothing', async () => {
    const m = TRADABLE[9];
    const R = m.reference;
    const fresh = await trader(svc, 'amend-funds@orders.test');
    const o = await place(svc, fresh, limit(m, 'BUY', 'YES', R - 10, 1));
    const before = await wallet(svc, fresh);
    const available = before.api!.available_cents as number;
    const levelBefore = levelAt((await book(svc, fresh, m.id)).bids, R - 10);
    // Raising the size reserves (quantity - 1) x price more than now: one contract too many.
    const quantity = Math.floor(available / (R - 10)) + 2;
    const err = expectContractError(
      await amend(fresh, o.id, { quantity }),
      422,
      'INSUFFICIENT_FUNDS',
    );
    expect(err.message).toMatch(/available balance/);
    expect(err.details).toEqual({
      market_id: m.id,
      order_id: o.id,
      required_cents: (quantity - 1) * (R - 10),
      available_cents: available,
    });
    const after = await getOrder(svc, fresh, o.id);
    expect([after.status, after.quantity, after.price]).toEqual(['OPEN', 1, R - 10]);
    expect(levelAt((await book(svc, fresh, m.id)).bids, R - 10)).toBe(levelBefore);
    expect((await wallet(svc, fresh)).api).toEqual(before.api);
    // A price change that needs more money is refused the same way, and one that fits is not.
    const p1 = R - 10;
    const q = Math.min(100_000, Math.floor(available / (p1 + 3)));
    const big = await place(svc, fresh, limit(m, 'BUY', 'YES', p1, q));
    const left = (await wallet(svc, fresh)).api!.available_cents as number;
    const p2 = p1 + Math.ceil((left + 1) / q); // below the house's best ask at R + 1
    expect(p2).toBeLessThanOrEqual(R);
    expectContractError(await amend(fresh, big.id, { price: p2 }), 422, 'INSUFFICIENT_FUNDS');
    expect((await getOrder(svc, fresh, big.id)).price).toBe(p1);
    expect((await wallet(svc, fresh)).api!.available_cents).toBe(left);
    expect((await amend(fresh, o.id, { quantity: 2 })).status).toBe(200);
    await as(fresh, `${svc.api}/orders/cancel-all`, { method: 'POST', json: {} });
  });

  it('cancel: 200 CANCELLED, again 409 ORDER_NOT_OPEN; filled orders 409; others 404', async () => {
    const m = TRADABLE[4];
    const R = m.reference;
    const o = await place(svc, a, limit(m, 'BUY', 'YES', R - 10, 5, { client_order_id: 'c-1' }));
    const res = await cancel(svc, a, o.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: o.id,
      status: 'CANCELLED',
      cancel_reason: 'USER',
      remaining_quantity: 0,
      filled_quantity: 0,
    });
    expect(levelAt((await book(svc, a, m.id)).bids, R - 10)).toBe(0);
    expect(await getOrder(svc, a, o.id)).toMatchObject({
      status: 'CANCELLED',
      cancel_reason: 'USER',
    });
    const again = expectContractError(await cancel(svc, a, o.id), 409, 'ORDER_NOT_OPEN');
    expect(again.details).toEqual({ order_id: o.id });
    const filled = await place(svc, a, market(m, 'BUY', 'YES', 3));
    expectContractError(await cancel(svc, a, filled.id), 409, 'ORDER_NOT_OPEN');
    const expired = await place(
      svc,
      a,
      limit(m, 'BUY', 'YES', R - 10, 3, { time_in_force: 'IOC' }),
    );
    expectContractError(await cancel(svc, a, expired.id), 409, 'ORDER_NOT_OPEN');
    const mine = await place(svc, a, limit(m, 'BUY', 'YES', R - 11, 5));
    const nf = expectContractError(await cancel(svc, b, mine.id), 404, 'NOT_FOUND');
    expect(nf.details).toEqual({ order_id: mine.id });
    expectContractError(await cancel(svc, a, 'ord_zzzzzzzzzzzzzzzzzzzzzz'), 404, 'NOT_FOUND');
    expectContractError(await cancel(svc, a, 'mkt_0000'), 404, 'NOT_FOUND');
    expectContractError(await cancel(svc, a, 'ORD_ABC'), 404, 'NOT_FOUND');
    expect((await getOrder(svc, a, mine.id)).status).toBe('OPEN');
    expect((await cancel(svc, a, mine.id)).status).toBe(200);
  });

  it('cancel-all: every open order of the caller, or of one market; never another user', async () => {
    const [m1, m2] = [TRADABLE[5], TRADABLE[6]];
    await as(a, `${svc.api}/orders/cancel-all`, { method: 'POST', json: {} });
    const mine = [];
    for (const m of [m1, m1, m2, m2, m2]) {
      mine.push(await place(svc, a, limit(m, 'BUY', 'YES', m.reference - 10, 1)));
    }
    const theirs = await place(svc, b, limit(m1, 'BUY', 'YES', m1.reference - 10, 1));
    const one = await as(a, `${svc.api}/orders/cancel-all`, {
      method: 'POST',
      json: { market_id: m1.id },
    });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ cancelled: 2 });
    expect(await getOrder(svc, a, mine[0].id)).toMatchObject({
      status: 'CANCELLED',
      cancel_reason: 'CANCEL_ALL',
    });
    expect((await getOrder(svc, a, mine[2].id)).status).toBe('OPEN');
    const all = await as(a, `${svc.api}/orders/cancel-all`, { method: 'POST' });
    expect(all.status).toBe(200);
    expect(all.body).toEqual({ cancelled: 3 });
    expect(await allOrders(svc, a, 'status=OPEN')).toEqual([]);
    expect((await getOrder(svc, b, theirs.id)).status).toBe('OPEN');
    expect(
      (await as(a, `${svc.api}/orders/cancel-all`, { method: 'POST', json: {} })).body,
    ).toEqual({
      cancelled: 0,
    });
    expectValidation(
      await as(a, `${svc.api}/orders/cancel-all`, { method: 'POST', json: { market: m1.id } }),
      'market',
    );
    expect((await cancel(svc, b, theirs.id)).status).toBe(200);
  });

  it('cancel-batch: a result per id; duplicates and empty lists are 400 and cancel nothing', async () => {
    const m = TRADABLE[7];
    const R = m.reference;
    const o1 = await place(svc, a, limit(m, 'BUY', 'YES', R - 10, 1));
    const o2 = await place(svc, a, limit(m, 'SELL', 'YES', R + 10, 1));
    const gone = await place(svc, a, limit(m, 'BUY', 'YES', R - 11, 1));
    expect((await cancel(svc, a, gone.id)).status).toBe(200);
    const theirs = await place(svc, b, limit(m, 'BUY', 'YES', R - 10, 1));
    const o3 = await place(svc, a, limit(m, 'BUY', 'YES', R - 12, 1));

    const dup = await as(a, `${svc.api}/orders/cancel-batch`, {
      method: 'POST',
      json: { order_ids: [o3.id, o1.id, o3.id] },
    });
    expectValidation(dup, 'order_ids');
    expectValidation(
      await as(a, `${svc.api}/orders/cancel-batch`, { method: 'POST', json: { order_ids: [] } }),
      'order_ids',
    );
    expectValidation(
      await as(a, `${svc.api}/orders/cancel-batch`, { method: 'POST', json: {} }),
      'order_ids',
    );
    // At most 100 ids: 101 distinct ids (among them a real open order) are 400 and cancel nothing.
    const tooMany = [o1.id, ...Array.from({ length: 100 }, (_, i) => `ord_${'0'.repeat(20)}${i}`)];
    expectValidation(
      await as(a, `${svc.api}/orders/cancel-batch`, {
        method: 'POST',
        json: { order_ids: tooMany },
      }),
      'order_ids',
    );
    expect((await getOrder(svc, a, o1.id)).status).toBe('OPEN');
    expect((await getOrder(svc, a, o1.id)).status).toBe('OPEN');
    expect((await getOrder(svc, a, o3.id)).status).toBe('OPEN');

    const res = await as(a, `${svc.api}/orders/cancel-batch`, {
      method: 'POST',
      json: {
        order_ids: [o1.id, gone.id, theirs.id, 'ord_zzzzzzzzzzzzzzzzzzzzzz', 'garbage', o2.id],
      },
    });
    expect(res.status).toBe(200);
    const results = res.body.results as {
      index: number;
      status: number;
      order?: Order;
      error?: { code: string };
    }[];
    expect(results.map((r) => [r.index, r.status, r.order?.status ?? r.error?.code])).toEqual([
      [0, 200, 'CANCELLED'],
      [1, 409, 'ORDER_NOT_OPEN'],
      [2, 404, 'NOT_FOUND'],
      [3, 404, 'NOT_FOUND'],
      [4, 404, 'NOT_FOUND'],
      [5, 200, 'CANCELLED'],
    ]);
    for (const r of results.filter((x) => x.error !== undefined)) {
      expect(Object.keys(r.error!).sort()).toEqual([
        'code',
        'details',
        'message',
        'request_id',
        'status',
      ]);
    }
    expect((await getOrder(svc, b, theirs.id)).status).toBe('OPEN');
    expect((await getOrder(svc, a, o3.id)).status).toBe('OPEN');
    await cancel(svc, a, o3.id);
    await cancel(svc, b, theirs.id);
  });

  it('batch: 1..20 legs run in order, each with its own result; a failing leg undoes nothing', async () => {
    const m = TRADABLE[8];
    const R = m.reference;
    const one = await as(a, `${svc.api}/orders/batch`, {
      method: 'POST',
      json: { orders: [limit(m, 'BUY', 'YES', R - 10, 1)] },
    });
    expect(one.status).toBe(200);
    expect(one.body.results).toEqual([
      { index: 0, status: 201, order: expect.objectContaining({ status: 'OPEN', price: R - 10 }) },
    ]);
    // Legs in order: two market buys of 100 take R+1 then R+2.
    const legs: OrderBody[] = [
      market(m, 'BUY', 'YES', 100),
      market(m, 'BUY', 'YES', 100),
      limit(m, 'BUY', 'YES', R + 4, 1, { post_only: true }), // crosses: 422
      limit({ id: 'mkt_ffffffffffffffffffff' }, 'BUY', 'YES', 50, 1), // unknown market: 404
      limit(m, 'BUY', 'YES', 99, 50_000), // too expensive: 422
      limit(m, 'BUY', 'YES', R - 11, 1, { client_order_id: 'batch-a' }),
      limit(m, 'BUY', 'YES', R - 12, 1, { client_order_id: 'batch-a' }), // duplicate: 409
      limit(m, 'BUY', 'YES', 10, 1, { type: 'MARKET' }), // MARKET with a price: 400
    ];
    while (legs.length < 20) legs.push(limit(m, 'BUY', 'YES', R - 13 - (legs.length % 5), 1));
    const before = (await allOrders(svc, a)).length;
    const res = await as(a, `${svc.api}/orders/batch`, { method: 'POST', json: { orders: legs } });
    expect(res.status).toBe(200);
    const results = res.body.results as {
      index: number;
      status: number;
      order?: Order;
      error?: { code: string };
    }[];
    expect(results.map((r) => r.index)).toEqual([...Array(20).keys()]);
    expect(results.slice(0, 8).map((r) => [r.status, r.error?.code ?? r.order.status])).toEqual([
      [201, 'FILLED'],
      [201, 'FILLED'],
      [422, 'POST_ONLY_WOULD_CROSS'],
      [404, 'NOT_FOUND'],
      [422, 'INSUFFICIENT_FUNDS'],
      [201, 'OPEN'],
      [409, 'DUPLICATE_CLIENT_ORDER_ID'],
      [400, 'VALIDATION_FAILED'],
    ]);
    expect(results.slice(8).every((r) => r.status === 201 && r.order.status === 'OPEN')).toBe(true);
    expect(results[0].order.fills.map((f: { price: number }) => f.price)).toEqual([R + 1]);
    expect(results[1].order.fills.map((f: { price: number }) => f.price)).toEqual([R + 2]);
    const placed = results.filter((r) => r.status === 201).map((r) => r.order.id as string);
    expect(placed).toHaveLength(15);
    // Every placed leg is stored, in leg order (ids rise with creation).
    const stored = await allOrders(svc, a);
    expect(stored.length - before).toBe(15);
    expect([...placed].sort()).toEqual(placed);
    for (const id of placed) expect(stored.some((o: Order) => o.id === id)).toBe(true);
    await as(a, `${svc.api}/orders/cancel-all`, { method: 'POST', json: {} });
  });

  it('batch of 0 or 21 legs (or none) is 400 and places nothing', async () => {
    const m = TRADABLE[9];
    const before = (await allOrders(svc, a)).length;
    const leg = limit(m, 'BUY', 'YES', m.reference - 10, 1);
    for (const json of [
      { orders: [] },
      { orders: Array.from({ length: 21 }, () => leg) },
      {},
      { orders: leg },
    ]) {
      expectValidation(await as(a, `${svc.api}/orders/batch`, { method: 'POST', json }), 'orders');
    }
    expect((await allOrders(svc, a)).length).toBe(before);
  });

  it('GET /orders: status and market filters, cursor pagination newest first; GET /orders/{id} with fills', async () => {
    const c = await trader(svc, 'lister@orders.test');
    const [m1, m2] = [TRADABLE[10], TRADABLE[11]];
    const ids: string[] = [];
    const p = async (body: OrderBody) => {
      const o = await place(svc, c, body);
      ids.push(o.id);
      return o;
    };
    const open1 = await p(limit(m1, 'BUY', 'YES', m1.reference - 10, 1));
    const cancelled = await p(limit(m1, 'BUY', 'YES', m1.reference - 11, 1));
    await cancel(svc, c, cancelled.id);
    const partial = await p(limit(m1, 'BUY', 'YES', m1.reference, 10));
    await place(svc, b, limit(m1, 'SELL', 'YES', m1.reference, 4, { time_in_force: 'IOC' }));
    const filled = await p(market(m2, 'SELL', 'YES', 150));
    const expired = await p(limit(m2, 'BUY', 'YES', 1, 1, { time_in_force: 'IOC' }));
    const open2 = await p(limit(m2, 'SELL', 'NO', 100 - (m2.reference - 10), 2));
    const open3 = await p(limit(m2, 'BUY', 'NO', 100 - (m2.reference + 10), 3));

    // Pages of 3, newest first, no duplicate and no gap.
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: JsonResponse = await as(
        c,
        `${svc.api}/orders?limit=3${cursor === null ? '' : `&cursor=${cursor}`}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(3);
      seen.push(...res.body.data.map((o: Order) => o.id as string));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());

    const q = async (query: string) =>
      (await allOrders(svc, c, query)).map((o: Order) => o.id as string);
    expect(await q('status=OPEN')).toEqual([open3.id, open2.id, open1.id]);
    expect(await q('status=PARTIALLY_FILLED')).toEqual([partial.id]);
    expect(await q('status=CANCELLED')).toEqual([cancelled.id]);
    expect(await q('status=FILLED')).toEqual([filled.id]);
    expect(await q('status=EXPIRED')).toEqual([expired.id]);
    expect(await q(`market_id=${m1.id}`)).toEqual([partial.id, cancelled.id, open1.id]);
    expect(await q(`market_id=${m2.id}&status=OPEN`)).toEqual([open3.id, open2.id]);
    // Filters and cursor together, one by one.
    const first = await as(c, `${svc.api}/orders?market_id=${m2.id}&status=OPEN&limit=1`);
    expect(first.body.data.map((o: Order) => o.id)).toEqual([open3.id]);
    const second = await as(
      c,
      `${svc.api}/orders?market_id=${m2.id}&status=OPEN&limit=1&cursor=${first.body.next_cursor}`,
    );
    expect(second.body.data.map((o: Order) => o.id)).toEqual([open2.id]);
    expect(second.body.next_cursor).toBeNull();

    expectValidation(await as(c, `${svc.api}/orders?status=DONE`), 'status');
    expectValidation(await as(c, `${svc.api}/orders?cursor=not-a-cursor`), 'cursor');
    expectValidation(await as(c, `${svc.api}/orders?limit=0`), 'limit');
    expectValidation(await as(c, `${svc.api}/orders?limit=201`), 'limit');
    expectValidation(await as(c, `${svc.api}/orders?colour=red`), 'colour');

    // One order with its fills; the list carries the same.
    const one = await getOrder(svc, c, partial.id);
    expect(one).toMatchObject({
      status: 'PARTIALLY_FILLED',
      filled_quantity: 4,
      remaining_quantity: 6,
      average_fill_price: m1.reference,
    });
    expect(one.fills).toEqual([
      expect.objectContaining({
        price: m1.reference,
        yes_price: m1.reference,
        quantity: 4,
        liquidity: 'MAKER',
      }),
    ]);
    const listed = (await allOrders(svc, c)).find((o: Order) => o.id === partial.id);
    expect(listed).toEqual(one);
    const f = await getOrder(svc, c, filled.id);
    expect(f.fills.map((x: { price: number }) => x.price)).toEqual([
      m2.reference - 1,
      m2.reference - 2,
    ]);
    expect(f.fills.reduce((s: number, x: { quantity: number }) => s + x.quantity, 0)).toBe(150);

    // Another user's order id is 404, as is an unknown or malformed id.
    const theirs = expectContractError(
      await as(a, `${svc.api}/orders/${partial.id}`),
      404,
      'NOT_FOUND',
    );
    expect(theirs.details).toEqual({ order_id: partial.id });
    expectContractError(
      await as(c, `${svc.api}/orders/ord_zzzzzzzzzzzzzzzzzzzzzz`),
      404,
      'NOT_FOUND',
    );
    expectContractError(await as(c, `${svc.api}/orders/nope`), 404, 'NOT_FOUND');
    expect(await allOrders(svc, a, `market_id=${m2.id}`)).toEqual([]);
  });

  it('GET /orders pages 50 by default (CONTRACT: limit 1..200, default 50); limit=200 is accepted', async () => {
    const c = await trader(svc, 'pager@orders.test');
    const m = TRADABLE[12];
    for (const n of [20, 20, 11]) {
      const legs = Array.from({ length: n }, () => limit(m, 'BUY', 'YES', 2, 1));
      const res = await as(c, `${svc.api}/orders/batch`, {
        method: 'POST',
        json: { orders: legs },
      });
      expect(res.status).toBe(200);
    }
    const first = await as(c, `${svc.api}/orders`);
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(50);
    expect(first.body.next_cursor).not.toBeNull();
    const rest = await as(c, `${svc.api}/orders?cursor=${first.body.next_cursor}`);
    expect(rest.body.data).toHaveLength(1);
    expect(rest.body.next_cursor).toBeNull();
    const all = await as(c, `${svc.api}/orders?limit=200`);
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(51);
    expect(all.body.next_cursor).toBeNull();
  });
});

describe('orders: money is conserved', () => {
  let svc: Running;
  afterAll(async () => {
    await svc.close();
  });

  it('after a random-ish stream between two users and the house, balances and positions are what the fills imply', async () => {
    svc = await startOrdersApp();
    const users = [await trader(svc), await trader(svc, 'conservation@orders.test')];
    const markets = [TRADABLE[12], TRADABLE[13]];
    // Open both accounts (reading the wallet does), then take the total of money in the engine:
    // every balance (the house's too) plus 100 cents per open YES/NO pair.
    for (const u of users) expect((await as(u, `${svc.api}/wallet`)).status).toBe(200);
    const before = engineMoney(svc);

    const rnd = prng(20261122);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
    const open = new Map<string, { user: number; id: string }>();
    const amended = new Set<string>();
    const statuses: Record<string, number> = {};
    const count = (res: JsonResponse) => {
      const k = `${res.status}${res.body?.error ? ` ${res.body.error.code}` : ''}`;
      statuses[k] = (statuses[k] ?? 0) + 1;
    };
    for (let step = 0; step < 240; step++) {
      const ui = rnd() < 0.5 ? 0 : 1;
      const u = users[ui];
      const m = pick(markets);
      const roll = rnd();
      const action = pick(['BUY', 'SELL'] as const);
      const side = pick(['YES', 'NO'] as const);
      const qty = 1 + Math.floor(rnd() * 40);
      const yesPrice = m.reference - 6 + Math.floor(rnd() * 13);
      const price = side === 'YES' ? yesPrice : 100 - yesPrice;
      let res: JsonResponse;
      if (roll < 0.45) {
        res = await placeRaw(svc, u, limit(m, action, side, price, qty));
      } else if (roll < 0.55) {
        res = await placeRaw(svc, u, market(m, action, side, qty));
      } else if (roll < 0.62) {
        res = await placeRaw(svc, u, limit(m, action, side, price, qty, { time_in_force: 'IOC' }));
      } else if (roll < 0.66) {
        res = await placeRaw(svc, u, limit(m, action, side, price, qty, { time_in_force: 'FOK' }));
      } else if (roll < 0.8) {
        const mine = [...open.values()].filter((o) => o.user === ui);
        if (mine.length === 0) continue;
        const target = pick(mine);
        res = await cancel(svc, u, target.id);
        open.delete(target.id);
      } else if (roll < 0.95) {
        const mine = [...open.values()].filter((o) => o.user === ui);
        if (mine.length === 0) continue;
        const target = pick(mine);
        const body = rnd() < 0.5 ? { quantity: qty } : { price: Math.min(99, Math.max(1, price)) };
        res = await as(u, `${svc.api}/orders/${target.id}`, { method: 'PATCH', json: body });
        amended.add(target.id);
      } else {
        res = await as(u, `${svc.api}/orders/cancel-all`, {
          method: 'POST',
          json: { market_id: m.id },
        });
        for (const [id, o] of open) if (o.user === ui) open.delete(id);
      }
      count(res);
      expect(res.status).toBeLessThan(500);
      const o = res.body;
      if ((res.status === 200 || res.status === 201) && typeof o?.id === 'string') {
        if (o.status === 'OPEN' || o.status === 'PARTIALLY_FILLED')
          open.set(o.id, { user: ui, id: o.id });
        else open.delete(o.id);
      }
    }
    // The stream did trade, between the two users and with the house; business refusals
    // (funds, no change, not open) are allowed, server errors are not.
    expect(statuses['201']).toBeGreaterThan(100);
    const ids = users.map((u) => u.userId);
    const trades = paperQuery<{ maker_user_id: string; taker_user_id: string }>(
      svc,
      'SELECT maker_user_id, taker_user_id FROM trades',
    );
    const between = trades.filter(
      (t) => ids.includes(t.maker_user_id) && ids.includes(t.taker_user_id),
    );
    const crossUsers = between.filter((t) => t.maker_user_id !== t.taker_user_id);
    expect(crossUsers.length).toBeGreaterThan(5);
    expect(trades.length - between.length).toBeGreaterThan(5);

    for (const [ui, u] of users.entries()) {
      const orders = await allOrders(svc, u);
      // Per order: fills add up, never beyond the quantity, never outside an unamended limit.
      type Fill = {
        id: string;
        yes_price: number;
        price: number;
        quantity: number;
        liquidity: string;
      };
      const fills: { fill: Fill; order: Order }[] = [];
      for (const o of orders) {
        const f = o.fills as Fill[];
        expect(f.reduce((s, x) => s + x.quantity, 0)).toBe(o.filled_quantity);
        expect(f.reduce((s, x) => s + x.price * x.quantity, 0)).toBe(o.filled_cost_cents);
        expect(o.filled_quantity).toBeLessThanOrEqual(o.quantity);
        expect(o.status === 'FILLED').toBe(o.filled_quantity === o.quantity);
        if (o.type === 'LIMIT' && !amended.has(o.id)) {
          for (const x of f) {
            if (o.action === 'BUY') expect(x.price).toBeLessThanOrEqual(o.price);
            else expect(x.price).toBeGreaterThanOrEqual(o.price);
          }
        }
        for (const x of f) fills.push({ fill: x, order: o });
      }
      expect(new Set(fills.map((x) => `${x.fill.id}/${x.order.id}`)).size).toBe(fills.length);
      // Replay the fills with the netting rule: the balance and holdings must be what they imply.
      const implied = replayFills(orders);
      const w = await wallet(svc, u);
      expect(w.balance).toBe(STARTING_BALANCE + implied.cash);
      const stored = storedHoldings(svc, u.userId);
      for (const m of markets) {
        expect({ user: ui, market: m.id, ...(stored.get(m.id) ?? { yes: 0, no: 0 }) }).toEqual({
          user: ui,
          market: m.id,
          ...(implied.holdings.get(m.id) ?? { yes: 0, no: 0 }),
        });
      }
    }
    expect(engineMoney(svc)).toBe(before);
  });
});
