import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, http, type Running } from '../support/harness.js';
import {
  allOrders,
  as,
  expectValidation,
  paperQuery,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { fund } from '../support/wallet.js';
import { REQUESTER_SCOPES, responder, rfqClient, walletCents, type Json } from '../support/rfq.js';

/**
 * Accepting quotes: the four action/side forms at the right price with both wallets to the cent,
 * the resting book untouched, the trade and orders as the trading API shows them, exactly-once
 * under parallel accepts, Idempotency-Key replay, and the refusals (side not offered, not OPEN,
 * funds short, market not open). Paper feed stopped, clock fixed at noon.
 */
describe('rfq: accepting quotes', () => {
  let svc: Running;
  let rfq: ReturnType<typeof rfqClient>;
  let resp: Trader;
  let n = 0;
  const fresh = async (): Promise<Trader> =>
    trader(svc, `req${++n}@rfq-accept.test`, { scopes: REQUESTER_SCOPES });
  const orderbook = async (marketId: string): Promise<Json> => {
    const res = await http(`${svc.api}/markets/${marketId}/orderbook`, {
      headers: { 'x-api-key': resp.key },
    });
    expect(res.status).toBe(200);
    return { bids: res.body.bids, asks: res.body.asks };
  };

  beforeAll(async () => {
    svc = await startOrdersApp();
    rfq = rfqClient(svc);
    resp = await responder(svc);
    await fund(svc, resp, 10_000_000);
  });
  afterAll(async () => {
    await svc.close();
  });

  // quote bid 40 / ask 45 on 10 contracts; [action, side, requester own price, YES price,
  // requester cash, responder cash]
  const FORMS: [string, string, number, number, number, number][] = [
    ['BUY', 'YES', 45, 45, -450, -550],
    ['SELL', 'NO', 55, 45, -450, -550],
    ['SELL', 'YES', 40, 40, -600, -400],
    ['BUY', 'NO', 60, 40, -600, -400],
  ];

  it.each(FORMS.map((f, i) => [i, ...f] as const))(
    'form %i: %s %s trades at %i (YES %i), both wallets to the cent, the book untouched',
    async (i, action, side, ownPrice, yesPrice, requesterCash, responderCash) => {
      const market = TRADABLE[i];
      const req = await fresh();
      const r = await rfq.create(req, market.id, 10);
      const q = await rfq.quote(resp, r.id, { bid: 40, ask: 45 });
      const reqBefore = await walletCents(svc, req);
      const respBefore = await walletCents(svc, resp);
      const bookBefore = await orderbook(market.id);
      const out = await rfq.accept(req, q.id, action, side);
      expect(out.rfq).toMatchObject({
        id: r.id,
        status: 'FILLED',
        accepted_quote_id: q.id,
        trade_id: out.trade.id,
      });
      expect(out.quote).toMatchObject({ id: q.id, status: 'ACCEPTED' });
      expect(out.order).toMatchObject({
        market_id: market.id,
        action,
        side,
        type: 'RFQ',
        rfq_id: r.id,
        quantity: 10,
        filled_quantity: 10,
        status: 'FILLED',
        environment: 'test',
      });
      expect(out.order.fills).toEqual([
        expect.objectContaining({
          id: out.trade.id,
          price: ownPrice,
          yes_price: yesPrice,
          quantity: 10,
        }),
      ]);
      expect(out.trade).toMatchObject({
        price: yesPrice,
        no_price: 100 - yesPrice,
        quantity: 10,
        source: 'RFQ',
      });
      const reqAfter = await walletCents(svc, req);
      const respAfter = await walletCents(svc, resp);
      expect(reqAfter.balance - reqBefore.balance).toBe(requesterCash);
      // The responder's hold (max(400, 550) = 550) is released by the trade.
      expect(respAfter.balance - respBefore.balance).toBe(responderCash);
      expect(respAfter.reserved - respBefore.reserved).toBe(-550);
      expect(await orderbook(market.id)).toEqual(bookBefore);
      // The trade prints with source RFQ; both parties' orders are type RFQ with rfq_id.
      const trades = await http(`${svc.api}/markets/${market.id}/trades`, {
        headers: { 'x-api-key': req.key },
      });
      expect(trades.body.data[0]).toMatchObject({
        id: out.trade.id,
        price: yesPrice,
        source: 'RFQ',
      });
      const reqOrders = await allOrders(svc, req, `?market_id=${market.id}`);
      expect(reqOrders).toEqual([
        expect.objectContaining({ id: out.order.id, type: 'RFQ', rfq_id: r.id }),
      ]);
      const respOrders = (await allOrders(svc, resp, `?market_id=${market.id}`)).filter(
        (o: Json) => o.rfq_id === r.id,
      );
      expect(respOrders).toEqual([
        expect.objectContaining({ type: 'RFQ', status: 'FILLED', filled_quantity: 10 }),
      ]);
      // The other (house) quote ended with the RFQ.
      expect((await rfq.quotes(req, r.id)).body.data).toEqual([]);
    },
  );

  it('refuses a side the quote lacks (422 QUOTE_SIDE_NOT_OFFERED) and bad bodies (400), trading nothing', async () => {
    const req = await fresh();
    const r = await rfq.create(req, TRADABLE[4].id, 5);
    const bidOnly = await rfq.quote(resp, r.id, { bid: 30 });
    for (const [action, side] of [
      ['BUY', 'YES'],
      ['SELL', 'NO'],
    ]) {
      const res = await rfq.acceptRaw(req, bidOnly.id, { action, side });
      expect(expectContractError(res, 422, 'QUOTE_SIDE_NOT_OFFERED').details).toEqual({
        side: 'ASK',
      });
    }
    expectValidation(await rfq.acceptRaw(req, bidOnly.id, { side: 'YES' }), 'action');
    expectValidation(
      await rfq.acceptRaw(req, bidOnly.id, { action: 'HOLD', side: 'YES' }),
      'action',
    );
    expectValidation(
      await rfq.acceptRaw(req, bidOnly.id, { action: 'BUY', side: 'MAYBE' }),
      'side',
    );
    expect((await rfq.get(req, r.id)).body.status).toBe('OPEN');
    // The responder cannot accept on someone else's RFQ: 404.
    expectContractError(
      await rfq.acceptRaw(resp, bidOnly.id, { action: 'SELL', side: 'YES' }),
      404,
      'NOT_FOUND',
    );
    expectContractError(
      await rfq.acceptRaw(req, 'quo_unknown1', { action: 'SELL', side: 'YES' }),
      404,
      'NOT_FOUND',
    );
    const ask = await rfq.quote(resp, r.id, { ask: 70 });
    // The replaced quote is no longer OPEN.
    const stale = await rfq.acceptRaw(req, bidOnly.id, { action: 'SELL', side: 'YES' });
    expect(expectContractError(stale, 409, 'QUOTE_NOT_OPEN').details.status).toBe('REPLACED');
    await rfq.accept(req, ask.id, 'BUY', 'YES');
    const twice = await rfq.acceptRaw(req, ask.id, { action: 'BUY', side: 'YES' });
    expectContractError(twice, 409, 'RFQ_NOT_OPEN');
  });

  it('parallel accepts of two quotes on one RFQ, or one quote twice, trade exactly once', async () => {
    const market = TRADABLE[5];
    for (const twoQuotes of [true, false]) {
      const req = await fresh();
      const r = await rfq.create(req, market.id, 3);
      const mine = await rfq.quote(resp, r.id, { bid: 20, ask: 80 });
      const quotes: Json[] = await (async () => {
        for (;;) {
          const qs = (await rfq.quotes(req, r.id)).body.data as Json[];
          if (qs.length === 2) return qs;
          await new Promise((res) => setTimeout(res, 10));
        }
      })();
      const other = quotes.find((q) => q.id !== mine.id);
      const targets = twoQuotes
        ? [mine.id, other.id, mine.id, other.id]
        : [mine.id, mine.id, mine.id];
      const results = await Promise.all(
        targets.map((id) => rfq.acceptRaw(req, id, { action: 'BUY', side: 'YES' })),
      );
      expect(results.filter((x) => x.status === 200)).toHaveLength(1);
      for (const x of results.filter((res) => res.status !== 200)) {
        expect(x.status).toBe(409);
        expect(['RFQ_NOT_OPEN', 'QUOTE_NOT_OPEN']).toContain(x.body.error.code);
      }
      const stored = paperQuery<{ n: number }>(
        svc,
        `SELECT COUNT(*) AS n FROM orders WHERE rfq_id = ?`,
        r.id,
      );
      expect(stored[0].n).toBe(2);
      expect((await allOrders(svc, req, `?market_id=${market.id}`)).length).toBe(1);
    }
  });

  it('honours Idempotency-Key: a replay answers the first result and trades nothing more', async () => {
    const req = await fresh();
    const market = TRADABLE[6];
    const r = await rfq.create(req, market.id, 4);
    const q = await rfq.quote(resp, r.id, { bid: 30, ask: 60 });
    const key = { 'idempotency-key': `accept-${r.id}` };
    const first = await rfq.acceptRaw(req, q.id, { action: 'SELL', side: 'YES' }, key);
    expect(first.status).toBe(200);
    const balance = (await walletCents(svc, req)).balance;
    const again = await rfq.acceptRaw(req, q.id, { action: 'SELL', side: 'YES' }, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await walletCents(svc, req)).balance).toBe(balance);
    const other = await rfq.acceptRaw(req, q.id, { action: 'BUY', side: 'NO' }, key);
    expectContractError(other, 422, 'IDEMPOTENCY_KEY_REUSED');
  });

  it('a requester short of funds is 422 INSUFFICIENT_FUNDS (party REQUESTER) and nothing trades', async () => {
    const req = await fresh();
    const market = TRADABLE[7];
    // 30,000 contracts at 45: 1,350,000 cents, more than the 1,000,000 a paper account starts with.
    const r = await rfq.create(req, market.id, 30_000);
    const q = await rfq.quote(resp, r.id, { bid: 40, ask: 45 });
    const before = await walletCents(svc, req);
    const respBefore = await walletCents(svc, resp);
    const res = await rfq.acceptRaw(req, q.id, { action: 'BUY', side: 'YES' });
    expect(expectContractError(res, 422, 'INSUFFICIENT_FUNDS').details).toMatchObject({
      party: 'REQUESTER',
    });
    expect(await walletCents(svc, req)).toEqual(before);
    expect(await walletCents(svc, resp)).toEqual(respBefore);
    expect((await rfq.get(req, r.id)).body.status).toBe('OPEN');
    expect((await rfq.quotes(resp, r.id)).body.data[0].status).toBe('OPEN');
  });

  it('a market no longer OPEN: new RFQs 422 MARKET_NOT_OPEN, accepts 422 MARKET_NOT_OPEN', async () => {
    const req = await fresh();
    const market = TRADABLE[TRADABLE.length - 1];
    const r = await rfq.create(req, market.id, 2);
    const q = await rfq.quote(resp, r.id, { bid: 40, ask: 45 });
    const resolved = await as(resp, `${svc.api}/sandbox/markets/${market.id}/resolve`, {
      method: 'POST',
      json: { outcome: 'YES' },
    });
    expect(resolved.status).toBe(200);
    expectContractError(
      await rfq.acceptRaw(req, q.id, { action: 'BUY', side: 'YES' }),
      422,
      'MARKET_NOT_OPEN',
    );
    expectContractError(
      await rfq.createRaw(req, { market_id: market.id, quantity: 1 }),
      422,
      'MARKET_NOT_OPEN',
    );
    expect((await rfq.get(req, r.id)).body.status).toBe('OPEN');
  });
});
