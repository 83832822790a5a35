import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JsonResponse, Running } from '../support/harness.js';
import {
  allOrders,
  as,
  book,
  expectValidation,
  levelAt,
  limit,
  market,
  startOrdersApp,
  TRADABLE,
  trader,
  wallet,
  type Trader,
} from '../support/orders.js';

/**
 * POST /orders/batch answers an invalid leg in its own result (issue 21): the 400
 * VALIDATION_FAILED POST /orders would have answered, fields named as POST /orders names them,
 * while the valid legs run. Only an invalid envelope refuses the whole request.
 */
describe('orders batch: per-leg validation', () => {
  let svc: Running;
  let a: Trader;

  beforeAll(async () => {
    svc = await startOrdersApp();
    a = await trader(svc);
  });
  afterAll(async () => {
    await svc.close();
  });

  const batch = (orders: unknown): Promise<JsonResponse> =>
    as(a, `${svc.api}/orders/batch`, { method: 'POST', json: { orders } });

  const legFields = (leg: { error: { details: { fields: { field: string }[] } } }) =>
    leg.error.details.fields.map((f) => f.field);

  it('valid legs run and invalid ones answer their own 400; the wallet moves by the valid legs only', async () => {
    const m = TRADABLE[0];
    const R = m.reference;
    const before = await wallet(svc, a);
    const ordersBefore = (await allOrders(svc, a)).length;
    const askBefore = levelAt((await book(svc, a, m.id)).asks, R + 1);
    const res = await batch([
      market(m, 'BUY', 'YES', 3), // takes 3 at R+1
      { ...limit(m, 'BUY', 'YES', R - 20, 2), price: 0 }, // schema: price out of range
      limit(m, 'BUY', 'YES', R - 20, 4, { client_order_id: 'leg-2' }), // rests, reserves
      { ...limit(m, 'BUY', 'YES', R - 20, 1), colour: 'red' }, // schema: unknown field
      { ...market(m, 'BUY', 'YES', 1), price: 50 }, // service rule: MARKET takes no price
      7, // not an object: what POST /orders answers for a body 7
    ]);
    expect(res.status).toBe(200);
    const r = res.body.results;
    expect(r.map((l: { index: number }) => l.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(r.map((l: { status: number }) => l.status)).toEqual([201, 400, 201, 400, 400, 400]);
    for (const i of [1, 3, 4, 5]) {
      expect(r[i].order).toBeUndefined();
      expect(r[i].error).toMatchObject({
        code: 'VALIDATION_FAILED',
        status: 400,
        request_id: res.headers.get('x-request-id'),
      });
    }
    expect(legFields(r[1])).toEqual(['price']);
    expect(legFields(r[3])).toEqual(['colour']);
    expect(legFields(r[4])).toEqual(['price']);
    expect(legFields(r[5])).toEqual(['body']);
    // The leg's error is the one POST /orders answers for the same body, request id aside.
    const single = expectValidation(
      await as(a, `${svc.api}/orders`, {
        method: 'POST',
        json: { ...limit(m, 'BUY', 'YES', R - 20, 2), price: 0 },
      }),
      'price',
    );
    expect({ ...r[1].error, request_id: null }).toEqual({ ...single, request_id: null });

    // Effects: the two valid legs' orders exist, nothing of the others.
    expect(r[0].order).toMatchObject({ status: 'FILLED', filled_quantity: 3 });
    expect(r[2].order).toMatchObject({ status: 'OPEN', client_order_id: 'leg-2', quantity: 4 });
    const orders = await allOrders(svc, a);
    expect(orders.length - ordersBefore).toBe(2);
    expect(orders.slice(0, 2).map((o: { id: string }) => o.id)).toEqual([
      r[2].order.id,
      r[0].order.id,
    ]);
    expect(levelAt((await book(svc, a, m.id)).asks, R + 1)).toBe(askBefore - 3);
    const after = await wallet(svc, a);
    expect(after.balance).toBe(before.balance - 3 * (R + 1));
    if (after.api !== null && before.api !== null) {
      expect(after.api.reserved_cents).toBe((before.api.reserved_cents as number) + 4 * (R - 20));
    }
  });

  it('all legs invalid: 200, every leg 400, nothing placed and the wallet unchanged', async () => {
    const m = TRADABLE[1];
    const before = await wallet(svc, a);
    const ordersBefore = await allOrders(svc, a);
    const res = await batch([
      { ...limit(m, 'BUY', 'YES', 40, 1), quantity: 0 },
      { ...limit(m, 'BUY', 'YES', 40, 1), side: 'MAYBE' },
      { ...limit(m, 'BUY', 'YES', 40, 1), price: undefined }, // LIMIT without price
      {},
    ]);
    expect(res.status).toBe(200);
    const r = res.body.results;
    expect(r.map((l: { status: number }) => l.status)).toEqual([400, 400, 400, 400]);
    expect(legFields(r[0])).toEqual(['quantity']);
    expect(legFields(r[1])).toEqual(['side']);
    expect(legFields(r[2])).toEqual(['price']);
    expect(legFields(r[3]).sort()).toEqual(['action', 'market_id', 'quantity', 'side', 'type']);
    expect(await allOrders(svc, a)).toEqual(ordersBefore);
    expect(await wallet(svc, a)).toEqual(before);
  });

  it('an invalid envelope refuses the whole batch with 400 naming it, and places nothing', async () => {
    const m = TRADABLE[2];
    const leg = limit(m, 'BUY', 'YES', m.reference - 10, 1);
    const ordersBefore = await allOrders(svc, a);
    const before = await wallet(svc, a);
    const cases: [unknown, string][] = [
      [{ orders: [] }, 'orders'],
      [{ orders: Array.from({ length: 21 }, () => leg) }, 'orders'],
      [{ orders: leg }, 'orders'],
      [{ orders: 'x' }, 'orders'],
      [{}, 'orders'],
      [{ orders: [leg], extra: 1 }, 'extra'],
      [[leg], 'body'],
    ];
    for (const [json, field] of cases) {
      const res = await as(a, `${svc.api}/orders/batch`, { method: 'POST', json });
      const err = expectValidation(res, field);
      expect(res.body.results).toBeUndefined();
      expect(err.details.fields).toHaveLength(1);
    }
    expect(await allOrders(svc, a)).toEqual(ordersBefore);
    expect(await wallet(svc, a)).toEqual(before);
  });
});
