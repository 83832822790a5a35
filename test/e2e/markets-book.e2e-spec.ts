import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, http, type Running } from '../support/harness.js';
import {
  as,
  expectValidation,
  keyFor,
  limit,
  place,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';

const ladder = (from: number, step: number, quantity = 100) =>
  [0, 1, 2, 3, 4].map((i) => ({ price: from + step * i, quantity }));

/**
 * Market reads per engine: GET /markets/{id}/orderbook, GET /markets/{id}/trades and the prices
 * of GET /markets and GET /markets/{id}. A test key reads the paper engine; no key or a live key
 * the live engine. The feed is stopped: the paper book is the house ladder around each reference.
 */
describe('market reads per engine', () => {
  let svc: Running;
  let paper: Trader;
  let live: Trader;
  const m = TRADABLE[5];
  const R = m.reference;

  beforeAll(async () => {
    svc = await startOrdersApp();
    paper = await trader(svc, 'book@markets.test');
    live = await keyFor(svc, paper.email, paper.token, {
      environment: 'live',
      scopes: ['orders:read', 'orders:write', 'markets:read', 'wallet:read', 'wallet:write'],
    });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('a test key sees the paper book: the house ladder, best first, YES cents', async () => {
    const res = await as(paper, `${svc.api}/markets/${m.id}/orderbook`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      market_id: m.id,
      environment: 'test',
      bids: ladder(R - 1, -1),
      asks: ladder(R + 1, 1),
    });
    const top = await as(paper, `${svc.api}/markets/${m.id}/orderbook?depth=2`);
    expect(top.body.bids).toEqual(ladder(R - 1, -1).slice(0, 2));
    expect(top.body.asks).toEqual(ladder(R + 1, 1).slice(0, 2));
  });

  it("a resting user order appears at its YES price, aggregated with the level's others", async () => {
    await place(svc, paper, limit(m, 'BUY', 'NO', 30, 7)); // a YES ask at 70
    await place(svc, paper, limit(m, 'SELL', 'NO', 100 - (R - 7), 3)); // a YES bid at R-7
    await place(svc, paper, limit(m, 'BUY', 'YES', R - 1, 5)); // joins the house at R-1
    const res = await as(paper, `${svc.api}/markets/${m.id}/orderbook?depth=50`);
    expect(res.body.asks).toEqual([...ladder(R + 1, 1), { price: 70, quantity: 7 }]);
    expect(res.body.bids).toEqual([
      { price: R - 1, quantity: 105 },
      ...ladder(R - 1, -1).slice(1),
      { price: R - 7, quantity: 3 },
    ]);
    // Depth counts levels per side: 5 stops before the user's far orders, 6 includes them.
    const five = await as(paper, `${svc.api}/markets/${m.id}/orderbook?depth=5`);
    expect(five.body.asks).toEqual(ladder(R + 1, 1));
    expect(five.body.bids.at(-1)).toEqual({ price: R - 5, quantity: 100 });
    const six = await as(paper, `${svc.api}/markets/${m.id}/orderbook?depth=6`);
    expect(six.body.asks.at(-1)).toEqual({ price: 70, quantity: 7 });
    expect(six.body.bids.at(-1)).toEqual({ price: R - 7, quantity: 3 });
  });

  it('no key or a live key sees the live book, which has no house liquidity', async () => {
    const anon = await http(`${svc.api}/markets/${m.id}/orderbook`);
    expect(anon.body).toEqual({ market_id: m.id, environment: 'live', bids: [], asks: [] });
    const dep = await as(live, `${svc.api}/wallet/deposits`, {
      method: 'POST',
      json: { amount_cents: 10_000 },
    });
    expect(dep.status).toBe(201);
    await place(svc, live, limit(m, 'BUY', 'YES', 12, 4));
    for (const res of [
      await http(`${svc.api}/markets/${m.id}/orderbook`),
      await as(live, `${svc.api}/markets/${m.id}/orderbook`),
    ]) {
      expect(res.body).toEqual({
        market_id: m.id,
        environment: 'live',
        bids: [{ price: 12, quantity: 4 }],
        asks: [],
      });
    }
    const paperBook = await as(paper, `${svc.api}/markets/${m.id}/orderbook?depth=50`);
    expect(paperBook.body.bids.some((l: { price: number }) => l.price === 12)).toBe(false);
  });

  it('GET /markets and GET /markets/{id} take best bid/ask, last price and volume from the engine of the caller', async () => {
    const o = await place(svc, paper, limit(m, 'BUY', 'YES', R + 2, 150)); // 100 at R+1, 50 at R+2
    expect(o.filled_quantity).toBe(150);
    const paperView = await as(paper, `${svc.api}/markets/${m.id}`);
    expect(paperView.body).toMatchObject({
      environment: 'test',
      best_bid: R - 1,
      best_ask: R + 2,
      last_price: R + 2,
      volume: 150,
    });
    const listed = await as(paper, `${svc.api}/markets?limit=200`);
    expect(listed.body.data.find((x: { id: string }) => x.id === m.id)).toEqual(paperView.body);
    const untouched = listed.body.data.find((x: { id: string }) => x.id === TRADABLE[6].id);
    expect(untouched).toMatchObject({
      best_bid: TRADABLE[6].reference - 1,
      best_ask: TRADABLE[6].reference + 1,
      last_price: null,
      volume: 0,
    });
    for (const res of [
      await http(`${svc.api}/markets/${m.id}`),
      await as(live, `${svc.api}/markets/${m.id}`),
    ]) {
      expect(res.body).toMatchObject({
        environment: 'live',
        best_bid: 12,
        best_ask: null,
        last_price: null,
        volume: 0,
      });
    }
    const anonList = await http(`${svc.api}/markets?limit=200`);
    expect(anonList.body.data.find((x: { id: string }) => x.id === TRADABLE[6].id)).toMatchObject({
      environment: 'live',
      best_bid: null,
      best_ask: null,
      last_price: null,
      volume: 0,
    });
  });

  it('GET /markets/{id}/trades lists the caller engine trades newest first, with a cursor', async () => {
    const res = await as(paper, `${svc.api}/markets/${m.id}/trades`);
    expect(res.status).toBe(200);
    // The 150 bought above: 100 at R+1 then 50 at R+2; the BUY YES at R-1 above did not trade.
    expect(res.body).toEqual({
      data: [
        {
          id: expect.stringMatching(/^fil_/),
          market_id: m.id,
          price: R + 2,
          no_price: 100 - (R + 2),
          quantity: 50,
          taker_side: 'YES',
          source: 'BOOK',
          created_at: svc.clock.nowDate().toISOString(),
        },
        {
          id: expect.stringMatching(/^fil_/),
          market_id: m.id,
          price: R + 1,
          no_price: 100 - (R + 1),
          quantity: 100,
          taker_side: 'YES',
          source: 'BOOK',
          created_at: svc.clock.nowDate().toISOString(),
        },
      ],
      next_cursor: null,
    });
    // An ask-side taker (BUY NO takes the house bid) is a NO taker.
    await place(svc, paper, limit(m, 'BUY', 'NO', 101 - R, 2));
    const first = await as(paper, `${svc.api}/markets/${m.id}/trades?limit=1`);
    expect(first.body.data).toEqual([
      expect.objectContaining({ price: R - 1, quantity: 2, taker_side: 'NO' }),
    ]);
    const rest = await as(
      paper,
      `${svc.api}/markets/${m.id}/trades?limit=2&cursor=${first.body.next_cursor}`,
    );
    expect(rest.body.data.map((t: { id: string }) => t.id)).toEqual(
      res.body.data.map((t: { id: string }) => t.id),
    );
    expect(rest.body.next_cursor).toBeNull();
    // The cursor belongs to this market's trades: another market, or another list, refuses it.
    for (const url of [
      `${svc.api}/markets/${TRADABLE[6].id}/trades?cursor=${first.body.next_cursor}`,
      `${svc.api}/orders?cursor=${first.body.next_cursor}`,
      `${svc.api}/transactions/cursor?cursor=${first.body.next_cursor}`,
    ]) {
      const refused = await as(paper, url);
      expect({ url, status: refused.status }).toEqual({ url, status: 400 });
      expect(refused.body.error.details.fields).toEqual([
        {
          field: 'cursor',
          message:
            'cursor must come from this list (a cursor of another list: use the next_cursor this list returned)',
        },
      ]);
    }
    // Nor does the live engine's list of the same market take the paper list's cursor.
    expect(
      (await http(`${svc.api}/markets/${m.id}/trades?cursor=${first.body.next_cursor}`)).status,
    ).toBe(400);
    // Lists of one user in the two engines are two lists: a paper cursor does not page live.
    const paperOrders = await as(paper, `${svc.api}/orders?limit=1`);
    expect(paperOrders.body.next_cursor).toEqual(expect.any(String));
    const crossed = await as(live, `${svc.api}/orders?cursor=${paperOrders.body.next_cursor}`);
    expect(crossed.status).toBe(400);
    expect(crossed.body.error.details.fields[0].message).toContain('another list');
    // The live engine has no trades in it.
    expect((await http(`${svc.api}/markets/${m.id}/trades`)).body).toEqual({
      data: [],
      next_cursor: null,
    });
  });

  it('refuses a bad depth or page with 400, an unknown market with 404', async () => {
    for (const depth of ['0', '100', '-1', '1.5', 'ten', '']) {
      expectValidation(await http(`${svc.api}/markets/${m.id}/orderbook?depth=${depth}`), 'depth');
      expectValidation(
        await as(paper, `${svc.api}/markets/${m.id}/orderbook?depth=${depth}`),
        'depth',
      );
    }
    expectValidation(await http(`${svc.api}/markets/${m.id}/trades?limit=0`), 'limit');
    expectValidation(await http(`${svc.api}/markets/${m.id}/trades?cursor=nope`), 'cursor');
    for (const id of ['mkt_doesnotexist', 'not-a-market', 'MKT_X']) {
      for (const path of ['orderbook', 'trades']) {
        expectContractError(await http(`${svc.api}/markets/${id}/${path}`), 404, 'NOT_FOUND');
        expectContractError(await as(paper, `${svc.api}/markets/${id}/${path}`), 404, 'NOT_FOUND');
      }
    }
  });

  it('a key without markets:read is refused; the OpenAPI document describes both reads', async () => {
    const k = await keyFor(svc, paper.email, paper.token, { scopes: ['wallet:read'] });
    for (const path of ['orderbook', 'trades']) {
      const err = expectContractError(
        await as(k, `${svc.api}/markets/${m.id}/${path}`),
        403,
        'INSUFFICIENT_SCOPE',
      );
      expect(err.details.required_scopes).toEqual(['markets:read']);
    }
    const doc = (await http(`${svc.api}/openapi.json`)).body;
    for (const p of ['/api/v1/markets/{id}/orderbook', '/api/v1/markets/{id}/trades']) {
      const op = doc.paths[p].get;
      expect([p, op.tags, op['x-auth'], op['x-required-scopes']]).toEqual([
        p,
        ['Markets'],
        'optional',
        ['markets:read'],
      ]);
    }
    const depth = doc.paths['/api/v1/markets/{id}/orderbook'].get.parameters.find(
      (x: { name: string }) => x.name === 'depth',
    );
    expect(depth.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 99, default: 10 });
  });
});

/**
 * The paper feed running inside the service (SANDBOX_FEED_INTERVAL_MS): the house re-quotes
 * around a reference that moves by itself, on the paper engine only.
 */
describe('the paper price feed moves the paper books by itself', () => {
  let svc: Running;
  let paper: Trader;

  beforeAll(async () => {
    svc = await startOrdersApp({ env: { SANDBOX_FEED_INTERVAL_MS: '20' } });
    paper = await trader(svc, 'feed@markets.test');
  });
  afterAll(async () => {
    await svc.close();
  });

  const bestBids = async (key: Trader | null): Promise<(number | null)[]> =>
    Promise.all(
      TRADABLE.map(async (m) => {
        const url = `${svc.api}/markets/${m.id}/orderbook?depth=1`;
        const res = key === null ? await http(url) : await as(key, url);
        expect(res.status).toBe(200);
        return (res.body.bids[0]?.price as number | undefined) ?? null;
      }),
    );

  it('paper best bids leave the seeded ladder within seconds; the live books stay empty', async () => {
    const seeded = TRADABLE.map((m) => m.reference - 1);
    let moved = 0;
    const t0 = Date.now();
    while (Date.now() - t0 < 5000) {
      const now = await bestBids(paper);
      moved = now.filter((b, i) => b !== null && b !== seeded[i]).length;
      if (moved >= 3) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(moved).toBeGreaterThanOrEqual(3);
    expect(await bestBids(null)).toEqual(TRADABLE.map(() => null));
  });
});
