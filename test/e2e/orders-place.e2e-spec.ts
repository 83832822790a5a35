import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, http, type Running } from '../support/harness.js';
import { createKey } from '../support/keys.js';
import {
  allOrders,
  as,
  book,
  getOrder,
  keyFor,
  levelAt,
  limit,
  market,
  NOON,
  paperQuery,
  place,
  placeRaw,
  startOrdersApp,
  TRADABLE,
  trader,
  wallet,
  expectValidation,
  type OrderBody,
  type Trader,
} from '../support/orders.js';
import { openDatabaseOf } from '../support/test-database.js';

/** Own-side price of a YES-terms price. */
const own = (side: 'YES' | 'NO', yesPrice: number): number =>
  side === 'YES' ? yesPrice : 100 - yesPrice;

/**
 * Placing orders on the paper engine (CONTRACT.md Orders; issue 4). The feed is stopped, so each
 * market's book is the house ladder: bids at R-1..R-5 and asks at R+1..R+5, 100 contracts each,
 * R being the seeded reference price; the price R itself is free for users' orders. Each test
 * trades in its own market so the tests do not see each other's orders.
 */
describe('orders: placing', () => {
  let svc: Running;
  let a: Trader;
  let b: Trader;

  beforeAll(async () => {
    svc = await startOrdersApp();
    a = await trader(svc);
    b = await trader(svc, 'second-trader@orders.test');
  });
  afterAll(async () => {
    await svc.close();
  });

  it('a LIMIT GTC order rests with every field of the contract, and GET returns it', async () => {
    const m = TRADABLE[0];
    const o = await place(
      svc,
      a,
      limit(m, 'BUY', 'YES', m.reference - 10, 7, { client_order_id: 'rest-1' }),
    );
    expect(o).toEqual({
      id: expect.stringMatching(/^ord_[0-9a-z]+$/),
      client_order_id: 'rest-1',
      market_id: m.id,
      action: 'BUY',
      side: 'YES',
      type: 'LIMIT',
      rfq_id: null,
      price: m.reference - 10,
      quantity: 7,
      filled_quantity: 0,
      remaining_quantity: 7,
      average_fill_price: null,
      filled_cost_cents: 0,
      status: 'OPEN',
      cancel_reason: null,
      time_in_force: 'GTC',
      post_only: false,
      self_trade_prevention: 'CANCEL_TAKER',
      environment: 'test',
      created_at: NOON,
      updated_at: NOON,
      fills: [],
    });
    expect(await getOrder(svc, a, o.id)).toEqual(o);
    const bk = await book(svc, a, m.id);
    expect(levelAt(bk.bids, m.reference - 10)).toBe(7);
    // The house ladder around it is untouched.
    expect(bk.bids.slice(0, 5)).toEqual(
      [1, 2, 3, 4, 5].map((i) => ({ price: m.reference - i, quantity: 100 })),
    );
    expect(bk.asks).toEqual(
      [1, 2, 3, 4, 5].map((i) => ({ price: m.reference + i, quantity: 100 })),
    );
  });

  it('every book-side mapping: BUY YES p / SELL NO 100-p bid at p, SELL YES p / BUY NO 100-p ask at p; trades print at the resting price', async () => {
    const m = TRADABLE[1];
    const R = m.reference;
    const bidMakers = [
      ['BUY', 'YES'],
      ['SELL', 'NO'],
    ] as const;
    const askMakers = [
      ['SELL', 'YES'],
      ['BUY', 'NO'],
    ] as const;
    let combos = 0;
    for (const [makers, makerSide, takers] of [
      [bidMakers, 'BID', askMakers],
      [askMakers, 'ASK', bidMakers],
    ] as const) {
      for (const [mAction, mSide] of makers) {
        for (const [tAction, tSide] of takers) {
          // The maker rests at YES R, the one price the house leaves free.
          const maker = await place(svc, a, limit(m, mAction, mSide, own(mSide, R), 5));
          expect(maker).toMatchObject({
            status: 'OPEN',
            price: own(mSide, R),
            remaining_quantity: 5,
          });
          const bk = await book(svc, a, m.id);
          expect(levelAt(makerSide === 'BID' ? bk.bids : bk.asks, R)).toBe(5);
          expect(levelAt(makerSide === 'BID' ? bk.asks : bk.bids, R)).toBe(0);
          // The taker's limit is 2 cents better than R for it: it still trades at R.
          const takerYesLimit = makerSide === 'BID' ? R - 2 : R + 2;
          const taker = await place(svc, b, limit(m, tAction, tSide, own(tSide, takerYesLimit), 5));
          expect(taker).toMatchObject({
            status: 'FILLED',
            filled_quantity: 5,
            remaining_quantity: 0,
            average_fill_price: own(tSide, R),
            filled_cost_cents: 5 * own(tSide, R),
          });
          expect(taker.fills).toEqual([
            {
              id: expect.stringMatching(/^fil_/),
              price: own(tSide, R),
              yes_price: R,
              quantity: 5,
              liquidity: 'TAKER',
              created_at: NOON,
            },
          ]);
          const after = await getOrder(svc, a, maker.id);
          expect(after).toMatchObject({
            status: 'FILLED',
            filled_quantity: 5,
            remaining_quantity: 0,
            average_fill_price: own(mSide, R),
            filled_cost_cents: 5 * own(mSide, R),
          });
          expect(after.fills).toEqual([
            {
              id: taker.fills[0].id,
              price: own(mSide, R),
              yes_price: R,
              quantity: 5,
              liquidity: 'MAKER',
              created_at: NOON,
            },
          ]);
          // Nothing left at R; the house levels next to it are whole.
          const end = await book(svc, a, m.id);
          expect(levelAt(end.bids, R) + levelAt(end.asks, R)).toBe(0);
          expect(levelAt(end.bids, R - 1)).toBe(100);
          expect(levelAt(end.asks, R + 1)).toBe(100);
          combos++;
        }
      }
    }
    expect(combos).toBe(8);
    const last = await http(`${svc.api}/markets/${m.id}`, { headers: { 'x-api-key': a.key } });
    expect(last.body.last_price).toBe(R);
  });

  it('a MARKET order walks several house levels with slippage; beyond the book its remainder expires', async () => {
    const m = TRADABLE[2];
    const R = m.reference;
    const buy = await place(svc, a, market(m, 'BUY', 'YES', 250));
    const cost = 100 * (R + 1) + 100 * (R + 2) + 50 * (R + 3);
    expect(buy).toMatchObject({
      type: 'MARKET',
      price: null,
      time_in_force: 'IOC',
      status: 'FILLED',
      filled_quantity: 250,
      remaining_quantity: 0,
      filled_cost_cents: cost,
      average_fill_price: cost / 250,
    });
    expect(
      buy.fills.map((f: { price: number; quantity: number }) => [f.price, f.quantity]),
    ).toEqual([
      [R + 1, 100],
      [R + 2, 100],
      [R + 3, 50],
    ]);
    // BUY NO is an ask: it takes the house bids, priced in NO cents.
    const no = await place(svc, a, market(m, 'BUY', 'NO', 150));
    const noCost = 100 * (100 - (R - 1)) + 50 * (100 - (R - 2));
    expect(no).toMatchObject({
      status: 'FILLED',
      filled_cost_cents: noCost,
      average_fill_price: noCost / 150,
    });
    expect(
      no.fills.map((f: { price: number; yes_price: number; quantity: number }) => [
        f.price,
        f.yes_price,
        f.quantity,
      ]),
    ).toEqual([
      [101 - R, R - 1, 100],
      [102 - R, R - 2, 50],
    ]);
    // 250 asks are left (50 + 100 + 100): a MARKET order for 1,000 takes them and expires the rest.
    const big = await place(svc, a, market(m, 'BUY', 'YES', 1000));
    expect(big).toMatchObject({ status: 'EXPIRED', filled_quantity: 250, remaining_quantity: 0 });
    expect(big.fills.map((f: { price: number }) => f.price)).toEqual([R + 3, R + 4, R + 5]);
    expect((await book(svc, a, m.id)).asks).toEqual([]);
  });

  it('IOC: what crosses fills, the remainder ends EXPIRED and nothing rests', async () => {
    const m = TRADABLE[3];
    const R = m.reference;
    const ioc = await place(svc, a, limit(m, 'BUY', 'YES', R + 2, 250, { time_in_force: 'IOC' }));
    expect(ioc).toMatchObject({
      status: 'EXPIRED',
      time_in_force: 'IOC',
      filled_quantity: 200,
      remaining_quantity: 0,
      filled_cost_cents: 100 * (R + 1) + 100 * (R + 2),
    });
    const bk = await book(svc, a, m.id);
    expect(bk.asks[0]).toEqual({ price: R + 3, quantity: 100 });
    expect(levelAt(bk.bids, R + 2)).toBe(0);
    const none = await place(svc, a, limit(m, 'BUY', 'YES', R - 10, 5, { time_in_force: 'IOC' }));
    expect(none).toMatchObject({ status: 'EXPIRED', filled_quantity: 0, fills: [] });
    expect(levelAt((await book(svc, a, m.id)).bids, R - 10)).toBe(0);
  });

  it('FOK that cannot fill whole fills nothing and ends EXPIRED; one that can fills whole', async () => {
    const m = TRADABLE[4];
    const R = m.reference;
    const before = await book(svc, a, m.id);
    const walletBefore = await wallet(svc, a);
    const fok = await place(svc, a, limit(m, 'BUY', 'YES', R + 2, 201, { time_in_force: 'FOK' }));
    expect(fok).toMatchObject({
      status: 'EXPIRED',
      time_in_force: 'FOK',
      filled_quantity: 0,
      remaining_quantity: 0,
      fills: [],
    });
    const mkt = await place(svc, a, market(m, 'SELL', 'YES', 501, { time_in_force: 'FOK' }));
    expect(mkt).toMatchObject({
      status: 'EXPIRED',
      time_in_force: 'FOK',
      filled_quantity: 0,
      fills: [],
    });
    expect(await book(svc, a, m.id)).toEqual(before);
    expect(await wallet(svc, a)).toEqual(walletBefore);
    const whole = await place(svc, a, limit(m, 'BUY', 'YES', R + 2, 200, { time_in_force: 'FOK' }));
    expect(whole).toMatchObject({ status: 'FILLED', filled_quantity: 200 });
    expect((await getOrder(svc, a, whole.id)).fills).toHaveLength(2);
  });

  it('post-only: crossing is 422 POST_ONLY_WOULD_CROSS and places nothing; resting is accepted', async () => {
    const m = TRADABLE[5];
    const R = m.reference;
    const before = {
      orders: (await allOrders(svc, a)).length,
      wallet: await wallet(svc, a),
      book: await book(svc, a, m.id),
    };
    for (const body of [
      limit(m, 'BUY', 'YES', R + 1, 5, { post_only: true }),
      limit(m, 'SELL', 'NO', 100 - (R + 3), 5, { post_only: true }), // a bid at R+3
      limit(m, 'SELL', 'YES', R - 1, 5, { post_only: true }),
      limit(m, 'BUY', 'NO', 100 - (R - 1), 5, { post_only: true }), // an ask at R-1
    ]) {
      expectContractError(await placeRaw(svc, a, body), 422, 'POST_ONLY_WOULD_CROSS');
    }
    expect({
      orders: (await allOrders(svc, a)).length,
      wallet: await wallet(svc, a),
      book: await book(svc, a, m.id),
    }).toEqual(before);
    const ok = await place(svc, a, limit(m, 'BUY', 'NO', 100 - R, 5, { post_only: true }));
    expect(ok).toMatchObject({ status: 'OPEN', post_only: true });
    expect(levelAt((await book(svc, a, m.id)).asks, R)).toBe(5);
    // post_only is for LIMIT GTC only.
    expectValidation(
      await placeRaw(
        svc,
        a,
        limit(m, 'BUY', 'YES', R, 5, { post_only: true, time_in_force: 'IOC' }),
      ),
      'post_only',
    );
    expectValidation(
      await placeRaw(svc, a, market(m, 'BUY', 'YES', 5, { post_only: true })),
      'post_only',
    );
  });

  it('quote answers what would fill now and changes nothing (book, wallet, orders)', async () => {
    const m = TRADABLE[6];
    const R = m.reference;
    await place(svc, a, limit(m, 'BUY', 'YES', R, 10));
    const snapshot = async () => ({
      orders: await allOrders(svc, a),
      wallet: await wallet(svc, a),
      book: await book(svc, a, m.id),
    });
    const before = await snapshot();
    const quote = (body: OrderBody) =>
      as(a, `${svc.api}/orders/quote`, { method: 'POST', json: body });
    const q1 = await quote(market(m, 'BUY', 'YES', 250));
    expect(q1.status).toBe(200);
    const cost = 100 * (R + 1) + 100 * (R + 2) + 50 * (R + 3);
    expect(q1.body).toMatchObject({
      filled_quantity: 250,
      average_price: cost / 250,
      cost_cents: cost,
      fully_filled: true,
      levels: [
        { price: R + 1, quantity: 100 },
        { price: R + 2, quantity: 100 },
        { price: R + 3, quantity: 50 },
      ],
    });
    expect(q1.body.cash_delta_cents).toBe(-cost);
    // SELL NO at 100-(R+1): a bid at R+1, it takes the ask at R+1 only, priced in NO cents.
    const q2 = await quote(limit(m, 'SELL', 'NO', 100 - (R + 1), 150));
    expect(q2.body).toMatchObject({
      filled_quantity: 100,
      fully_filled: false,
      levels: [{ price: 100 - (R + 1), quantity: 100 }],
    });
    // A FOK that cannot fill whole quotes nothing.
    const q3 = await quote(limit(m, 'BUY', 'YES', R + 1, 101, { time_in_force: 'FOK' }));
    expect(q3.body).toMatchObject({
      filled_quantity: 0,
      cost_cents: 0,
      levels: [],
      average_price: null,
    });
    // Never into the user's own bid at R (self-trade prevention): the default, CANCEL_TAKER,
    // stops there; CANCEL_MAKER walks past it to the house's bids.
    const q4 = await quote(market(m, 'SELL', 'YES', 15));
    expect(q4.body).toMatchObject({ filled_quantity: 0, levels: [] });
    const q5 = await quote(market(m, 'SELL', 'YES', 15, { self_trade_prevention: 'CANCEL_MAKER' }));
    expect(q5.body.levels).toEqual([{ price: R - 1, quantity: 15 }]);
    expectContractError(
      await quote(limit(m, 'BUY', 'YES', R + 1, 1, { post_only: true })),
      422,
      'POST_ONLY_WOULD_CROSS',
    );
    expectValidation(await quote({ ...market(m, 'BUY', 'YES', 1), price: 5 }), 'price');
    expect(await snapshot()).toEqual(before);
  });

  it("a refused first order or a quote opens no account: the user's paper world starts with the first accepted order", async () => {
    const fresh = await trader(svc, 'first-order@orders.test');
    const m = TRADABLE[0];
    const accounts = () =>
      paperQuery<{ balance_cents: number }>(
        svc,
        'SELECT balance_cents FROM accounts WHERE user_id = ?',
        fresh.userId,
      );
    const noPrice = { market_id: m.id, action: 'BUY', side: 'YES', type: 'LIMIT', quantity: 1 };
    expectValidation(await placeRaw(svc, fresh, noPrice), 'price');
    expectContractError(
      await placeRaw(svc, fresh, limit(m, 'BUY', 'YES', m.reference - 10, 100_001)),
      422,
      'ORDER_QUANTITY_LIMIT',
    );
    const batch = await as(fresh, `${svc.api}/orders/batch`, {
      method: 'POST',
      json: { orders: [noPrice] },
    });
    expect(batch.body.results[0].status).toBe(400);
    expect(accounts()).toEqual([]);
    // A quote changes nothing: it nets against a flat position, and opens no account.
    const q = await as(fresh, `${svc.api}/orders/quote`, {
      method: 'POST',
      json: market(m, 'SELL', 'YES', 3),
    });
    expect(q.status).toBe(200);
    expect(q.body.filled_quantity).toBe(3);
    // Selling YES from flat opens NO at 100 - p per contract.
    const sold = (q.body.levels as { price: number; quantity: number }[]).reduce(
      (sum, l) => sum + (100 - l.price) * l.quantity,
      0,
    );
    expect(q.body.cash_delta_cents).toBe(-sold);
    expect(accounts()).toEqual([]);
    expect(paperQuery(svc, 'SELECT * FROM ledger WHERE user_id = ?', fresh.userId)).toEqual([]);
    expect((await placeRaw(svc, fresh, limit(m, 'BUY', 'YES', m.reference - 10, 1))).status).toBe(
      201,
    );
    expect(accounts()).toEqual([{ balance_cents: 1_000_000 }]);
  });

  it('bad input (issue 4): 400 VALIDATION_FAILED naming the field, and nothing changes', async () => {
    const m = TRADABLE[7];
    const R = m.reference;
    const base = limit(m, 'BUY', 'YES', R - 3, 5);
    // [body, field]: schema rules and the service's cross-field rules alike; a batch answers each
    // per leg, as that leg's own 400 naming the field as POST /orders does (issue 21).
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, price: 0 }, 'price'],
      [{ ...base, price: 100 }, 'price'],
      [{ ...base, price: 1.5 }, 'price'],
      [{ ...base, price: '10' }, 'price'],
      [{ ...base, price: -5 }, 'price'],
      [{ ...base, quantity: 0 }, 'quantity'],
      [{ ...base, quantity: -1 }, 'quantity'],
      [{ ...base, quantity: 1.5 }, 'quantity'],
      [{ ...base, quantity: '5' }, 'quantity'],
      [{ ...base, quantity: 1e12 }, 'quantity'],
      [{ ...base, colour: 'red' }, 'colour'], // unknown field
      [{ ...base, market_id: undefined }, 'market_id'],
      [{ ...base, action: 'HOLD' }, 'action'],
      [{ ...base, side: 'MAYBE' }, 'side'],
      [{ ...base, type: 'STOP' }, 'type'],
      [{ ...base, time_in_force: 'DAY' }, 'time_in_force'],
      [{ ...base, post_only: 'yes' }, 'post_only'],
      [{ ...base, client_order_id: 'has spaces' }, 'client_order_id'],
      [{ ...base, client_order_id: 'x'.repeat(65) }, 'client_order_id'],
      [{ ...base, price: undefined }, 'price'], // LIMIT without price
      [{ ...market(m, 'BUY', 'YES', 5), price: 50 }, 'price'], // MARKET with price
      [{ ...market(m, 'BUY', 'YES', 5), time_in_force: 'GTC' }, 'time_in_force'],
    ];
    const snapshot = async () => ({
      orders: await allOrders(svc, a),
      wallet: await wallet(svc, a),
      book: await book(svc, a, m.id),
    });
    const before = await snapshot();
    for (const [body, field] of cases) {
      try {
        expectValidation(await placeRaw(svc, a, body), field);
        // The same body is refused by quote, and as a batch leg.
        expectValidation(
          await as(a, `${svc.api}/orders/quote`, { method: 'POST', json: body }),
          field,
        );
        const batch = await as(a, `${svc.api}/orders/batch`, {
          method: 'POST',
          json: { orders: [body] },
        });
        expect(batch.status).toBe(200);
        expect(batch.body.results).toHaveLength(1);
        const leg = batch.body.results[0];
        expect(leg).toMatchObject({
          index: 0,
          status: 400,
          error: { code: 'VALIDATION_FAILED' },
        });
        expect(leg.order).toBeUndefined();
        expect(leg.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
      } catch (e) {
        throw new Error(`${JSON.stringify(body)}: ${(e as Error).message}`, { cause: e });
      }
    }
    // A body that is not an object, or no JSON at all.
    expectContractError(
      await as(a, `${svc.api}/orders`, {
        method: 'POST',
        body: '{"market_id":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'MALFORMED_JSON',
    );
    expectValidation(await placeRaw(svc, a, [base]));
    expect(await snapshot()).toEqual(before);
  });

  it('unknown market ids are 404 NOT_FOUND, malformed ones 400 by the schema; both in the contract error body', async () => {
    const m = TRADABLE[8];
    const unknown = 'mkt_ffffffffffffffffffff';
    const before = await allOrders(svc, a);
    const nf = expectContractError(
      await placeRaw(svc, a, limit({ id: unknown }, 'BUY', 'YES', 50, 1)),
      404,
      'NOT_FOUND',
    );
    expect(nf.details).toEqual({ market_id: unknown });
    expectContractError(
      await as(a, `${svc.api}/orders/quote`, {
        method: 'POST',
        json: market({ id: unknown }, 'BUY', 'YES', 1),
      }),
      404,
      'NOT_FOUND',
    );
    expectContractError(
      await as(a, `${svc.api}/orders/cancel-all`, { method: 'POST', json: { market_id: unknown } }),
      404,
      'NOT_FOUND',
    );
    for (const bad of ['nope', 'mkt_UPPER', 'mkt_', `mkt_${'a'.repeat(37)}`, 'ord_abc']) {
      expectValidation(
        await placeRaw(svc, a, limit({ id: bad }, 'BUY', 'YES', 50, 1)),
        'market_id',
      );
      expectValidation(
        await as(a, `${svc.api}/orders/cancel-all`, { method: 'POST', json: { market_id: bad } }),
        'market_id',
      );
      expectValidation(await as(a, `${svc.api}/orders?market_id=${bad}`), 'market_id');
    }
    expect(await allOrders(svc, a)).toEqual(before);
    // A known market still works for the same caller.
    expect((await placeRaw(svc, a, limit(m, 'BUY', 'YES', m.reference - 20, 1))).status).toBe(201);
  });

  it('insufficient funds: 422 INSUFFICIENT_FUNDS and nothing changes', async () => {
    const m = TRADABLE[9];
    const before = { orders: await allOrders(svc, b), wallet: await wallet(svc, b) };
    expectContractError(
      await placeRaw(svc, b, limit(m, 'BUY', 'YES', 99, 20_000)),
      422,
      'INSUFFICIENT_FUNDS',
    );
    expect({ orders: await allOrders(svc, b), wallet: await wallet(svc, b) }).toEqual(before);
    // A resting bid reserves price x quantity: 24,000 at p leaves 1,000,000 - 24,000p available.
    const p = m.reference - 20;
    const big = await place(svc, b, limit(m, 'BUY', 'YES', p, 24_000));
    expect(big.status).toBe('OPEN');
    const available = 1_000_000 - 24_000 * p;
    const fits = Math.floor(available / p);
    const refused = await placeRaw(svc, b, limit(m, 'BUY', 'YES', p, fits + 1));
    const why = expectContractError(refused, 422, 'INSUFFICIENT_FUNDS');
    expect(why.details).toEqual({
      market_id: m.id,
      required_cents: (fits + 1) * p,
      available_cents: available,
    });
    expect((await placeRaw(svc, b, limit(m, 'BUY', 'YES', p, fits))).status).toBe(201);
    expect(
      (await as(b, `${svc.api}/orders/cancel-all`, { method: 'POST', json: {} })).body,
    ).toEqual({
      cancelled: 2,
    });
  });

  it('scopes: without orders:write every order mutation is 403 INSUFFICIENT_SCOPE; reads need orders:read', async () => {
    const m = TRADABLE[10];
    const resting = await place(svc, a, limit(m, 'BUY', 'YES', m.reference - 10, 1));
    const readOnly = await createKey(svc.api, a.token, { environment: 'test' });
    expect(readOnly.scopes).toContain('orders:read');
    expect(readOnly.scopes).not.toContain('orders:write');
    const ro = { key: readOnly.key };
    const body = limit(m, 'BUY', 'YES', m.reference - 10, 1);
    const writes: [string, string, unknown][] = [
      ['POST', '/orders', body],
      ['POST', '/orders/batch', { orders: [body] }],
      ['PATCH', `/orders/${resting.id}`, { quantity: 1 }],
      ['DELETE', `/orders/${resting.id}`, undefined],
      ['POST', '/orders/cancel-all', {}],
      ['POST', '/orders/cancel-batch', { order_ids: [resting.id] }],
    ];
    for (const [method, path, json] of writes) {
      const err = expectContractError(
        await as(ro, `${svc.api}${path}`, { method, json }),
        403,
        'INSUFFICIENT_SCOPE',
      );
      expect(err.details.required_scopes).toEqual(['orders:write']);
    }
    // Reads work with orders:read; the refused writes changed nothing.
    expect((await as(ro, `${svc.api}/orders/${resting.id}`)).body.status).toBe('OPEN');
    expect((await as(ro, `${svc.api}/orders/quote`, { method: 'POST', json: body })).status).toBe(
      200,
    );
    const none = await createKey(svc.api, a.token, {
      environment: 'test',
      scopes: ['markets:read'],
    });
    for (const [method, path, json] of [
      ['GET', '/orders', undefined],
      ['GET', `/orders/${resting.id}`, undefined],
      ['GET', '/orders/export', undefined],
      ['POST', '/orders/quote', body],
    ] as const) {
      const err = expectContractError(
        await as({ key: none.key }, `${svc.api}${path}`, { method, json }),
        403,
        'INSUFFICIENT_SCOPE',
      );
      expect(err.details.required_scopes).toEqual(['orders:read']);
    }
  });

  it('client_order_id is unique per key among open orders; reusable once the first is closed', async () => {
    const m = TRADABLE[11];
    const R = m.reference;
    const first = await place(
      svc,
      a,
      limit(m, 'BUY', 'YES', R - 10, 1, { client_order_id: 'strat-1' }),
    );
    const dup = expectContractError(
      await placeRaw(svc, a, limit(m, 'SELL', 'YES', R + 10, 1, { client_order_id: 'strat-1' })),
      409,
      'DUPLICATE_CLIENT_ORDER_ID',
    );
    expect(dup.details).toMatchObject({ client_order_id: 'strat-1', order_id: first.id });
    // Also inside a batch: the second leg fails on its own.
    const batch = await as(a, `${svc.api}/orders/batch`, {
      method: 'POST',
      json: {
        orders: [
          limit(m, 'BUY', 'YES', R - 11, 1, { client_order_id: 'strat-2' }),
          limit(m, 'BUY', 'YES', R - 12, 1, { client_order_id: 'strat-2' }),
        ],
      },
    });
    expect(batch.body.results.map((r: { status: number }) => r.status)).toEqual([201, 409]);
    expect(batch.body.results[1].error.code).toBe('DUPLICATE_CLIENT_ORDER_ID');
    // Another key of the same user has its own namespace.
    const other = await createKey(svc.api, a.token, {
      environment: 'test',
      scopes: ['orders:read', 'orders:write'],
      acknowledge_write_scopes: true,
    });
    const o2 = await as({ key: other.key }, `${svc.api}/orders`, {
      method: 'POST',
      json: limit(m, 'BUY', 'YES', R - 10, 1, { client_order_id: 'strat-1' }),
    });
    expect(o2.status).toBe(201);
    // Once the first is cancelled, the id is free again for this key.
    expect((await as(a, `${svc.api}/orders/${first.id}`, { method: 'DELETE' })).status).toBe(200);
    const again = await place(
      svc,
      a,
      limit(m, 'BUY', 'YES', R - 10, 1, { client_order_id: 'strat-1' }),
    );
    expect(again.id).not.toBe(first.id);
    // An order that never rests (filled at once) does not hold its id.
    const filled = await place(svc, a, market(m, 'BUY', 'YES', 1, { client_order_id: 'taker-1' }));
    expect(filled.status).toBe('FILLED');
    expect(
      (await placeRaw(svc, a, market(m, 'BUY', 'YES', 1, { client_order_id: 'taker-1' }))).status,
    ).toBe(201);
  });
});

describe('orders: resource caps (ORDER_MAX_QUANTITY, MAX_OPEN_ORDERS_PER_KEY, EXPORT_MAX_ROWS)', () => {
  let svc: Running;
  let a: Trader;

  beforeAll(async () => {
    svc = await startOrdersApp({
      env: { ORDER_MAX_QUANTITY: '50', MAX_OPEN_ORDERS_PER_KEY: '3', EXPORT_MAX_ROWS: '6' },
    });
    a = await trader(svc);
  });
  afterAll(async () => {
    await svc.close();
  });

  it('ORDER_MAX_QUANTITY: above it is 422 ORDER_QUANTITY_LIMIT (place, batch leg, amend); at it is accepted', async () => {
    const m = TRADABLE[0];
    const R = m.reference;
    const err = expectContractError(
      await placeRaw(svc, a, limit(m, 'BUY', 'YES', R - 10, 51)),
      422,
      'ORDER_QUANTITY_LIMIT',
    );
    expect(err.details).toEqual({ max_quantity: 50 });
    const batch = await as(a, `${svc.api}/orders/batch`, {
      method: 'POST',
      json: { orders: [limit(m, 'BUY', 'YES', R - 10, 51)] },
    });
    expect(batch.body.results[0]).toMatchObject({
      status: 422,
      error: { code: 'ORDER_QUANTITY_LIMIT' },
    });
    const ok = await place(svc, a, limit(m, 'BUY', 'YES', R - 10, 50));
    expectContractError(
      await as(a, `${svc.api}/orders/${ok.id}`, { method: 'PATCH', json: { quantity: 51 } }),
      422,
      'ORDER_QUANTITY_LIMIT',
    );
    expect((await getOrder(svc, a, ok.id)).quantity).toBe(50);
    expect((await as(a, `${svc.api}/orders/${ok.id}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('MAX_OPEN_ORDERS_PER_KEY: the next resting order is 422 OPEN_ORDERS_LIMIT, per key', async () => {
    const m = TRADABLE[1];
    const R = m.reference;
    const open = [];
    for (let i = 0; i < 3; i++)
      open.push(await place(svc, a, limit(m, 'BUY', 'YES', R - 10 - i, 1)));
    const err = expectContractError(
      await placeRaw(svc, a, limit(m, 'BUY', 'YES', R - 15, 1)),
      422,
      'OPEN_ORDERS_LIMIT',
    );
    expect(err.details).toEqual({ limit: 3 });
    expect(await allOrders(svc, a, 'status=OPEN')).toHaveLength(3);
    // Another key of the same user has its own count.
    const other = await createKey(svc.api, a.token, {
      environment: 'test',
      scopes: ['orders:read', 'orders:write'],
      acknowledge_write_scopes: true,
    });
    expect(
      (
        await as({ key: other.key }, `${svc.api}/orders`, {
          method: 'POST',
          json: limit(m, 'BUY', 'YES', R - 15, 1),
        })
      ).status,
    ).toBe(201);
    // Cancelling one frees a slot.
    expect((await as(a, `${svc.api}/orders/${open[0].id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await placeRaw(svc, a, limit(m, 'BUY', 'YES', R - 15, 1))).status).toBe(201);
    expectContractError(
      await placeRaw(svc, a, limit(m, 'BUY', 'YES', R - 16, 1)),
      422,
      'OPEN_ORDERS_LIMIT',
    );
    await as(a, `${svc.api}/orders/cancel-all`, { method: 'POST', json: {} });
    await as({ key: other.key }, `${svc.api}/orders/cancel-all`, { method: 'POST', json: {} });
  });

  it('ORDER_MAX_QUANTITY applies to quotes too: above it 422 ORDER_QUANTITY_LIMIT, at it a quote', async () => {
    const m = TRADABLE[0];
    const err = expectContractError(
      await as(a, `${svc.api}/orders/quote`, { method: 'POST', json: market(m, 'BUY', 'YES', 51) }),
      422,
      'ORDER_QUANTITY_LIMIT',
    );
    expect(err.details).toEqual({ max_quantity: 50 });
    const ok = await as(a, `${svc.api}/orders/quote`, {
      method: 'POST',
      json: market(m, 'BUY', 'YES', 50),
    });
    expect(ok.status).toBe(200);
    expect(ok.body.filled_quantity).toBe(50);
  });

  it('MAX_OPEN_ORDERS_PER_KEY counts orders that can rest: at the cap MARKET, IOC and FOK still trade', async () => {
    const m = TRADABLE[3];
    const R = m.reference;
    const fresh = await trader(svc, 'cap-takers@orders.test');
    for (let i = 0; i < 3; i++) await place(svc, fresh, limit(m, 'BUY', 'YES', R - 10 - i, 1));
    expectContractError(
      await placeRaw(svc, fresh, limit(m, 'BUY', 'YES', R - 15, 1)),
      422,
      'OPEN_ORDERS_LIMIT',
    );
    for (const body of [
      market(m, 'BUY', 'YES', 1),
      limit(m, 'BUY', 'YES', R + 5, 1, { time_in_force: 'IOC' }),
      market(m, 'SELL', 'YES', 1, { time_in_force: 'FOK' }),
    ]) {
      const res = await placeRaw(svc, fresh, body);
      expect(res.status).toBe(201);
      expect(res.body.status).toBe('FILLED');
    }
    // An IOC that finds nothing expires; it never counted.
    const none = await placeRaw(svc, fresh, limit(m, 'BUY', 'YES', 1, 1, { time_in_force: 'IOC' }));
    expect(none.status).toBe(201);
    expect(none.body.status).toBe('EXPIRED');
    expect(await allOrders(svc, fresh, 'status=OPEN')).toHaveLength(3);
    await as(fresh, `${svc.api}/orders/cancel-all`, { method: 'POST', json: {} });
  });

  it('orders placed with a session token are held to the same caps, counted per user', async () => {
    const m = TRADABLE[4];
    const owner = await trader(svc, 'cap-session@orders.test');
    // Sessions trade on the live engine: fund the live wallet with a live key first.
    const live = await keyFor(svc, owner.email, owner.token, {
      environment: 'live',
      scopes: ['wallet:read', 'wallet:write', 'orders:read', 'orders:write'],
    });
    const dep = await as(live, `${svc.api}/wallet/deposits`, {
      method: 'POST',
      json: { amount_cents: 100_000 },
    });
    expect(dep.status).toBe(201);
    const session = (body: unknown) =>
      http(`${svc.api}/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}` },
        json: body,
      });
    const first = await session(limit(m, 'BUY', 'YES', 10, 1, { client_order_id: 'same' }));
    expect(first.status).toBe(201);
    expect(first.body.environment).toBe('live');
    const dup = expectContractError(
      await session(limit(m, 'BUY', 'YES', 11, 1, { client_order_id: 'same' })),
      409,
      'DUPLICATE_CLIENT_ORDER_ID',
    );
    expect(dup.details).toEqual({ client_order_id: 'same', order_id: first.body.id });
    for (const p of [11, 12])
      expect((await session(limit(m, 'BUY', 'YES', p, 1))).status).toBe(201);
    const capped = expectContractError(
      await session(limit(m, 'BUY', 'YES', 13, 1)),
      422,
      'OPEN_ORDERS_LIMIT',
    );
    expect(capped.details).toEqual({ limit: 3 });
    // The user's API key has its own count, and its own client_order_id space.
    const viaKey = await as(live, `${svc.api}/orders`, {
      method: 'POST',
      json: limit(m, 'BUY', 'YES', 13, 1, { client_order_id: 'same' }),
    });
    expect(viaKey.status).toBe(201);
    expect(viaKey.body.environment).toBe('live');
    await as(live, `${svc.api}/orders/cancel-all`, { method: 'POST', json: {} });
  });

  it('EXPORT_MAX_ROWS: an export above it is 422 EXPORT_TOO_LARGE; at it streams', async () => {
    const fresh = await trader(svc, 'export-cap@orders.test');
    const m = TRADABLE[2];
    for (let i = 0; i < 6; i++) await place(svc, fresh, market(m, 'BUY', 'YES', 1));
    const ok = await as(fresh, `${svc.api}/orders/export`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(ok.text.trim().split('\n')).toHaveLength(7);
    const other = TRADABLE[3];
    const seventh = await place(svc, fresh, market(other, 'BUY', 'YES', 1));
    const err = expectContractError(
      await as(fresh, `${svc.api}/orders/export`),
      422,
      'EXPORT_TOO_LARGE',
    );
    expect(err.details).toEqual({ rows: 7, max_rows: 6 });
    expect(err.message).toMatch(/narrow it with status, market_id, created_from or created_to/);

    // The filters narrow it under the cap.
    const rowsOf = (text: string) => text.trim().split('\n').slice(1);
    const inM = await as(fresh, `${svc.api}/orders/export?market_id=${m.id}`);
    expect(inM.status).toBe(200);
    expect(rowsOf(inM.text)).toHaveLength(6);
    expect(rowsOf(inM.text).every((r) => r.split(',')[2] === m.id)).toBe(true);
    const inOther = await as(fresh, `${svc.api}/orders/export?market_id=${other.id}`);
    expect(rowsOf(inOther.text).map((r) => r.split(',')[0])).toEqual([seventh.id]);
    const byStatus = await as(
      fresh,
      `${svc.api}/orders/export?status=${String(seventh.status)}&market_id=${other.id}`,
    );
    expect(rowsOf(byStatus.text)).toHaveLength(1);
    // The window: created_from inclusive, created_to exclusive (this app's clock stands still,
    // so all seven share one instant).
    const created = String(seventh.created_at);
    const from = await as(
      fresh,
      `${svc.api}/orders/export?created_from=${created}&market_id=${other.id}`,
    );
    expect(rowsOf(from.text).map((r) => r.split(',')[0])).toEqual([seventh.id]);
    expectContractError(
      await as(fresh, `${svc.api}/orders/export?created_from=${created}`),
      422,
      'EXPORT_TOO_LARGE',
    );
    const to = await as(fresh, `${svc.api}/orders/export?created_to=${created}`);
    expect(to.status).toBe(200);
    expect(rowsOf(to.text)).toEqual([]);
    const none = await as(fresh, `${svc.api}/orders/export?created_from=2099-01-01T00:00:00Z`);
    expect(none.status).toBe(200);
    expect(none.text).toBe(ok.text.split('\n')[0] + '\n');
    const bad = expectContractError(
      await as(fresh, `${svc.api}/orders/export?created_to=yesterday`),
      400,
      'VALIDATION_FAILED',
    );
    expect(JSON.stringify(bad.details)).toContain(
      'created_to must be an ISO 8601 date, or date-time with Z or an offset (send + as %2B)',
    );
    // A date the calendar does not have is refused with the same words.
    const feb30 = expectContractError(
      await as(fresh, `${svc.api}/orders/export?created_to=2026-02-30`),
      400,
      'VALIDATION_FAILED',
    );
    expect(JSON.stringify(feb30.details)).toContain('created_to must be an ISO 8601 date, or');
    // HEAD answers the headers, without a body.
    const head = await fetch(`${svc.api}/orders/export?market_id=${m.id}`, {
      method: 'HEAD',
      headers: { 'x-api-key': fresh.key },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(await head.text()).toBe('');
  });
});

describe('orders: a market that is not OPEN', () => {
  it('HALTED and CLOSED markets take no orders: 422 MARKET_NOT_OPEN, nothing placed', async () => {
    const [halted, closed] = [TRADABLE[0], TRADABLE[1]];
    let svc = await startOrdersApp();
    const dataDir = svc.dataDir;
    await svc.close({ keepData: true });
    // No API halts or closes a market yet: the engine database says so, and a restart reads it.
    const db = openDatabaseOf(dataDir, 'paper');
    db.prepare(`UPDATE markets SET status = 'HALTED' WHERE id = ?`).run(halted.id);
    db.prepare(`UPDATE markets SET status = 'CLOSED' WHERE id = ?`).run(closed.id);
    db.close();
    svc = await startOrdersApp({ dataDir });
    try {
      const t = await trader(svc);
      for (const [m, status] of [
        [halted, 'HALTED'],
        [closed, 'CLOSED'],
      ] as const) {
        const res = await placeRaw(svc, t, limit(m, 'BUY', 'YES', 2, 1));
        expectContractError(res, 422, 'MARKET_NOT_OPEN');
        expect((await as(t, `${svc.api}/markets/${m.id}`)).body.status).toBe(status);
        const quote = await as(t, `${svc.api}/orders/quote`, {
          method: 'POST',
          json: limit(m, 'BUY', 'YES', 2, 1),
        });
        expectContractError(quote, 422, 'MARKET_NOT_OPEN');
      }
      expect(await allOrders(svc, t)).toEqual([]);
    } finally {
      await svc.close();
    }
  });
});
