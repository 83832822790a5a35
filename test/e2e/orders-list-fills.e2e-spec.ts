import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { EngineRegistry } from '../../src/modules/trading/engine-registry.js';
import type { Running } from '../support/harness.js';
import {
  as,
  getOrder,
  limit,
  market,
  ORDER_SCOPES,
  place,
  startOrdersApp,
  TRADABLE,
  trader,
  type Order,
  type Trader,
} from '../support/orders.js';

/**
 * GET /orders shows each order's fills as GET /orders/{id} does (taker and maker fills, in trade
 * order), reading the trades of a whole page in one query rather than one query per order.
 */
describe('GET /orders: the fills of a page', () => {
  let svc: Running;
  let a: Trader;
  let b: Trader;

  beforeAll(async () => {
    svc = await startOrdersApp();
    a = await trader(svc, 'fills-a@orders-list.test', { scopes: ORDER_SCOPES });
    b = await trader(svc, 'fills-b@orders-list.test', { scopes: ORDER_SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('one trade look-up per page; every order shows the fills it has on its own', async () => {
    const [m1, m2] = TRADABLE;
    // Takers with fills at several levels of the house ladder, orders that rest unfilled, and
    // one that takes from the ladder, rests above the house bid and is then hit by b (a maker).
    await place(svc, a, market(m1, 'BUY', 'YES', 30));
    await place(svc, a, limit(m1, 'BUY', 'YES', m1.reference - 10, 2));
    const both = await place(svc, a, limit(m2, 'BUY', 'YES', m2.reference + 3, 400));
    await place(svc, b, market(m2, 'BUY', 'YES', 5));
    await place(svc, b, market(m2, 'SELL', 'YES', 3));
    await place(svc, a, market(m2, 'BUY', 'NO', 4));
    await place(svc, a, limit(m2, 'BUY', 'NO', 1, 1));
    const mine = await getOrder(svc, a, both.id as string);
    expect(new Set(mine.fills.map((f: { liquidity: string }) => f.liquidity))).toEqual(
      new Set(['TAKER', 'MAKER']),
    );

    const rt = svc.app.get(EngineRegistry, { strict: false }).get('test');
    const perOrder = jest.spyOn(rt, 'storedTrades');
    const perPage = jest.spyOn(rt, 'storedTradesOfOrders');
    const page = await as(a, `${svc.api}/orders?limit=200`);
    const calls = [perOrder.mock.calls.length, perPage.mock.calls.length];
    perOrder.mockRestore();
    perPage.mockRestore();
    expect(page.status).toBe(200);
    const listed = page.body.data as Order[];
    expect(listed).toHaveLength(5);
    expect(calls).toEqual([0, 1]);
    for (const o of listed) expect(o).toEqual(await getOrder(svc, a, o.id as string));
    expect(listed.some((o) => o.fills.length === 0)).toBe(true);
  });
});
