import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, http, type Running } from '../support/harness.js';
import {
  as,
  expectValidation,
  keyFor,
  limit,
  market,
  place,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { positions, type Position } from '../support/wallet.js';

const DEPRECATION = '@1778198400'; // 2026-05-08T00:00:00Z

/**
 * GET /positions/cursor (keyset on market_id) and its deprecated predecessor GET /wallet/positions.
 * The feed is stopped: each book is the house ladder R-1..R-5 / R+1..R+5, 100 contracts a level.
 */
describe('GET /positions/cursor', () => {
  let svc: Running;
  let t: Trader;
  // Markets sorted by id: the order the API lists positions in.
  const markets = [...TRADABLE].sort((a, b) => (a.id < b.id ? -1 : 1));

  beforeAll(async () => {
    svc = await startOrdersApp();
    t = await trader(svc, 'positions@positions.test');
  });
  afterAll(async () => {
    await svc.close();
  });

  it('lists one netted position per market ordered by market_id, paged by a stable keyset', async () => {
    // Positions in the even-indexed markets first: YES in some, NO in others.
    const first = markets.filter((_, i) => i % 2 === 0).slice(0, 6);
    for (const [i, m] of first.entries()) {
      if (i % 2 === 0) await place(svc, t, limit(m, 'BUY', 'YES', m.reference + 1, i + 1));
      else await place(svc, t, limit(m, 'BUY', 'NO', 101 - m.reference, i + 1));
    }
    const all = await positions(svc, t);
    expect(all.map((p) => p.market_id)).toEqual(first.map((m) => m.id));
    expect(all.map((p) => [p.side, p.quantity])).toEqual([
      ['YES', 1],
      ['NO', 2],
      ['YES', 3],
      ['NO', 4],
      ['YES', 5],
      ['NO', 6],
    ]);
    for (const [i, p] of all.entries()) {
      const R = first[i].reference;
      const price = p.side === 'YES' ? R + 1 : 101 - R;
      expect(p).toEqual({
        market_id: first[i].id,
        side: p.side,
        quantity: i + 1,
        average_price: price,
        cost_basis_cents: price * (i + 1),
        realized_pnl_cents: 0,
        mark_price: R,
        unrealized_pnl_cents: -(i + 1),
      });
    }

    // Page by 2 while new positions open in markets sorting before and after the cursor.
    const seen: string[] = [];
    let cursor: string | null = null;
    let page = 0;
    const fresh = markets.filter((_, i) => i % 2 === 1);
    do {
      const q: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const res = await as(t, `${svc.api}/positions/cursor?limit=2${q}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((p: Position) => p.market_id));
      cursor = res.body.next_cursor;
      await place(svc, t, market(fresh[page], 'BUY', 'YES', 1));
      page++;
    } while (cursor !== null);
    expect(new Set(seen).size).toBe(seen.length);
    // Every position that existed when paging started was seen exactly once, in order; new
    // ones after the cursor may show up, new ones before it cannot.
    expect(seen.filter((id) => first.some((m) => m.id === id))).toEqual(first.map((m) => m.id));
    const ids = seen.slice();
    expect([...ids].sort()).toEqual(ids);
    expect((await positions(svc, t)).length).toBe(first.length + page);
  });

  it('a closed position leaves the list; include_closed=true shows it with its realized P&L', async () => {
    const m = markets[markets.length - 1];
    const R = m.reference;
    await place(svc, t, limit(m, 'BUY', 'YES', R + 1, 10));
    await place(svc, t, limit(m, 'SELL', 'YES', R - 1, 10));
    expect((await positions(svc, t)).some((p) => p.market_id === m.id)).toBe(false);
    const withClosed = await positions(svc, t, { include_closed: 'true' });
    expect(withClosed.find((p) => p.market_id === m.id)).toEqual({
      market_id: m.id,
      side: null,
      quantity: 0,
      average_price: null,
      cost_basis_cents: 0,
      realized_pnl_cents: 10 * (R - 1) - 10 * (R + 1),
      unrealized_pnl_cents: 0,
      mark_price: R,
    });
    expect(await positions(svc, t, { include_closed: 'false' })).toEqual(
      withClosed.filter((p) => p.quantity > 0),
    );
  });

  it('marks at the last price when one side of the book is empty', async () => {
    const other = await trader(svc, 'mark-last@positions.test');
    const m = markets[19];
    const R = m.reference;
    // A MARKET buy of 500 takes the whole ask ladder: 100 at each of R+1..R+5.
    const o = await place(svc, other, market(m, 'BUY', 'YES', 500));
    expect(o.filled_quantity).toBe(500);
    const cost = 100 * (5 * R + 15);
    expect(await positions(svc, other)).toEqual([
      {
        market_id: m.id,
        side: 'YES',
        quantity: 500,
        average_price: cost / 500,
        cost_basis_cents: cost,
        realized_pnl_cents: 0,
        mark_price: R + 5,
        unrealized_pnl_cents: 500 * (R + 5) - cost,
      },
    ]);
  });

  it('marks at a half-cent mid and rounds the unrealized P&L half up', async () => {
    const other = await trader(svc, 'mark-mid@positions.test');
    const m = markets[17];
    const R = m.reference;
    await place(svc, other, limit(m, 'BUY', 'YES', R + 1, 3));
    // A bid at R inside the spread: best bid R, best ask R+1, mid R + 0.5.
    await place(svc, other, limit(m, 'BUY', 'YES', R, 1));
    const [p] = await positions(svc, other);
    expect(p.mark_price).toBe(R + 0.5);
    // 3 x (R + 0.5) - 3 x (R + 1) = -1.5, rounded half up: -1.
    expect(p.unrealized_pnl_cents).toBe(-1);
  });

  it('refuses bad paging with 400 VALIDATION_FAILED and needs wallet:read', async () => {
    for (const [q, field] of [
      ['limit=0', 'limit'],
      ['limit=500', 'limit'],
      ['include_closed=yes', 'include_closed'],
      ['cursor=%%%', 'cursor'],
      ['cursor=WzEsMl0', 'cursor'],
    ]) {
      expectValidation(await as(t, `${svc.api}/positions/cursor?${q}`), field);
      expectValidation(await as(t, `${svc.api}/wallet/positions?${q}`), field);
    }
    expectContractError(await http(`${svc.api}/positions/cursor`), 401, 'UNAUTHENTICATED');
    const k = await keyFor(svc, t.email, t.token, { scopes: ['orders:read'] });
    for (const path of ['/positions/cursor', '/wallet/positions']) {
      const err = expectContractError(await as(k, `${svc.api}${path}`), 403, 'INSUFFICIENT_SCOPE');
      expect(err.details.required_scopes).toEqual(['wallet:read']);
    }
  });

  it('GET /wallet/positions answers the same data with the deprecation headers and no Sunset', async () => {
    const legacy = await as(t, `${svc.api}/wallet/positions?limit=3`);
    const current = await as(t, `${svc.api}/positions/cursor?limit=3`);
    expect(legacy.status).toBe(200);
    expect(legacy.body.data).toHaveLength(3);
    expect(legacy.body).toEqual(current.body);
    expect(legacy.headers.get('deprecation')).toBe(DEPRECATION);
    expect(legacy.headers.get('sunset')).toBeNull();
    expect(legacy.headers.get('link')).toBe('</api/v1/positions/cursor>; rel="successor-version"');
    expect(current.headers.get('deprecation')).toBeNull();
    expect(current.headers.get('link')).toBeNull();
    // Refusals carry them too: a foreign origin's credentialed call (403), no credential (401).
    const refusals = [
      await as(t, `${svc.api}/wallet/positions`, { headers: { origin: 'https://evil.example' } }),
      await http(`${svc.api}/wallet/positions`),
    ];
    expect(refusals.map((r) => r.status)).toEqual([403, 401]);
    for (const r of refusals) {
      expect(r.headers.get('deprecation')).toBe(DEPRECATION);
      expect(r.headers.get('link')).toBe('</api/v1/positions/cursor>; rel="successor-version"');
    }
  });

  it('the OpenAPI document marks GET /wallet/positions deprecated, the successor not', async () => {
    const doc = (await http(`${svc.api}/openapi.json`)).body;
    const legacy = doc.paths['/api/v1/wallet/positions'].get;
    expect(legacy).toMatchObject({
      deprecated: true,
      tags: ['Positions'],
      'x-lifecycle': 'DEPRECATED',
      'x-required-scopes': ['wallet:read'],
      'x-deprecation': {
        deprecated_on: '2026-05-08',
        sunset_on: null,
        successor: '/api/v1/positions/cursor',
      },
    });
    const current = doc.paths['/api/v1/positions/cursor'].get;
    expect(current.deprecated).toBeUndefined();
    expect(current.tags).toEqual(['Positions']);
    expect(current['x-lifecycle']).toBe('STABLE');
  });
});
