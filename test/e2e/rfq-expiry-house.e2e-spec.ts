import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, type Running } from '../support/harness.js';
import { as, keyFor, startOrdersApp, TRADABLE, trader, type Trader } from '../support/orders.js';
import { sleep, until } from '../support/webhooks.js';
import {
  advance,
  liveKey,
  REQUESTER_SCOPES,
  responder,
  RESPONDER_SCOPES,
  rfqClient,
  walletCents,
  type Json,
} from '../support/rfq.js';

/** orders:write and wallet:write: what a sandbox reset needs. */
const RESET_SCOPES = RESPONDER_SCOPES;

/**
 * Time and the house: RFQs and quotes expire on the service clock (holds released), the paper
 * house responder quotes within a second, re-quotes as the reference moves and before its quotes
 * lapse, never in the live world; a sandbox reset cancels the user's paper RFQs and quotes.
 */
describe('rfq: expiry, house responder, reset', () => {
  let svc: Running;
  let rfq: ReturnType<typeof rfqClient>;
  let req: Trader;
  let resp: Trader;
  const houseQuotes = async (t: Trader, rfqId: string, mine: string[] = []): Promise<Json[]> =>
    ((await rfq.quotes(t, rfqId)).body.data as Json[]).filter((q) => !mine.includes(q.id));

  beforeAll(async () => {
    svc = await startOrdersApp();
    rfq = rfqClient(svc);
    req = await trader(svc, 'req@rfq-time.test', { scopes: RESET_SCOPES });
    resp = await responder(svc);
  });
  afterAll(async () => {
    await svc.close();
  });

  it('quotes and RFQs expire on the service clock, releasing holds; an expired RFQ cannot be accepted', async () => {
    const base = (await walletCents(svc, resp)).reserved;
    const r = await rfq.create(req, TRADABLE[0].id, 10, 20);
    const q = await rfq.quote(resp, r.id, { bid: 40, ask: 45, expires_in_seconds: 5 });
    expect((await walletCents(svc, resp)).reserved).toBe(base + 550);
    advance(svc, 5_000);
    // Read after the move: the quote has expired, its hold is gone.
    expect((await rfq.quotes(resp, r.id)).body.data).toEqual([
      expect.objectContaining({ id: q.id, status: 'EXPIRED' }),
    ]);
    expect((await walletCents(svc, resp)).reserved).toBe(base);
    const stale = await rfq.acceptRaw(req, q.id, { action: 'BUY', side: 'YES' });
    expectContractError(stale, 409, 'QUOTE_NOT_OPEN');
    const q2 = await rfq.quote(resp, r.id, { bid: 40, ask: 45, expires_in_seconds: 300 });
    advance(svc, 15_000);
    // The timer ends it without any request.
    await until(
      async () => (await walletCents(svc, resp)).reserved,
      (v) => v === base,
      'the RFQ expiry to release the hold',
      3000,
    );
    expect((await rfq.get(req, r.id)).body.status).toBe('EXPIRED');
    expect((await rfq.quotes(resp, r.id)).body.data.find((x: Json) => x.id === q2.id).status).toBe(
      'EXPIRED',
    );
    expectContractError(
      await rfq.acceptRaw(req, q2.id, { action: 'BUY', side: 'YES' }),
      409,
      'RFQ_NOT_OPEN',
    );
    expectContractError(await rfq.quoteRaw(resp, r.id, { bid: 40 }), 409, 'RFQ_NOT_OPEN');
    const open = (await rfq.open(resp, '?limit=200')).body.data.map((x: Json) => x.id);
    expect(open).not.toContain(r.id);
  });

  it('an accept against an expiry: one millisecond before expires_at it trades, at expires_at it is refused', async () => {
    const early = await rfq.create(req, TRADABLE[5].id, 2);
    const q1 = await rfq.quote(resp, early.id, { bid: 40, ask: 45, expires_in_seconds: 5 });
    advance(svc, 4_999);
    const won = await rfq.accept(req, q1.id, 'BUY', 'YES');
    expect(won.quote.status).toBe('ACCEPTED');
    advance(svc, 2_000);
    expect((await rfq.get(req, early.id)).body.status).toBe('FILLED');
    expect((await rfq.quotes(resp, early.id)).body.data[0].status).toBe('ACCEPTED');
    const late = await rfq.create(req, TRADABLE[5].id, 2);
    const q2 = await rfq.quote(resp, late.id, { bid: 40, ask: 45, expires_in_seconds: 5 });
    const before = await walletCents(svc, req);
    advance(svc, 5_000);
    const lost = await rfq.acceptRaw(req, q2.id, { action: 'BUY', side: 'YES' });
    expect(expectContractError(lost, 409, 'QUOTE_NOT_OPEN').details.status).toBe('EXPIRED');
    expect(await walletCents(svc, req)).toEqual(before);
  });

  it('the house quotes a paper RFQ two-way around the reference within one second', async () => {
    const market = TRADABLE[1];
    const r = await rfq.create(req, market.id, 8);
    // The house quotes on the turn after the creation is answered, so the very next read finds
    // its quote: well within the second, and asserted without a wall-clock window that a loaded
    // machine can miss between two requests.
    const [house, ...others] = await houseQuotes(req, r.id);
    expect(others).toEqual([]);
    expect(house).toMatchObject({
      rfq_id: r.id,
      bid: market.reference - 4,
      ask: market.reference + 4,
      quantity: 8,
      status: 'OPEN',
    });
    // One party can trade alone against it.
    const before = (await walletCents(svc, req)).balance;
    const out = await rfq.accept(req, house.id, 'BUY', 'YES');
    expect(out.trade.price).toBe(market.reference + 4);
    expect((await walletCents(svc, req)).balance).toBe(before - 8 * (market.reference + 4));
  });

  it('the house re-quotes when the reference moves and before its quote lapses', async () => {
    const market = TRADABLE[2];
    const r = await rfq.create(req, market.id, 5);
    const [first] = await until(
      () => houseQuotes(req, r.id),
      (qs) => qs.length === 1,
      'quote',
    );
    const moved = await as(req, `${svc.api}/sandbox/markets/${market.id}/price`, {
      method: 'POST',
      json: { price: market.reference + 10 },
    });
    expect(moved.status).toBe(200);
    const [second] = await until(
      () => houseQuotes(req, r.id),
      (qs) => qs.length === 1 && qs[0].id !== first.id,
      'the re-quote',
      3000,
    );
    expect(second).toMatchObject({ bid: market.reference + 6, ask: market.reference + 14 });
    advance(svc, 26_000);
    const [third] = await until(
      () => houseQuotes(req, r.id),
      (qs) => qs.length === 1 && qs[0].id !== second.id,
      'the refresh',
      3000,
    );
    expect(Date.parse(third.expires_at)).toBeGreaterThan(Date.parse(second.expires_at));
  });

  it('never quotes in the live world', async () => {
    const reqLive = await liveKey(svc, req, REQUESTER_SCOPES);
    const r = await rfq.create(reqLive, TRADABLE[3].id, 5);
    await sleep(1200);
    expect((await rfq.quotes(reqLive, r.id)).body.data).toEqual([]);
  });

  it('a sandbox reset cancels your paper RFQs (responders released) and your paper quotes', async () => {
    const other = await trader(svc, 'other@rfq-time.test', { scopes: REQUESTER_SCOPES });
    const respReset = await keyFor(svc, resp.email, resp.token, { scopes: RESET_SCOPES });
    const base = (await walletCents(svc, resp)).reserved;
    const mine = await rfq.create(req, TRADABLE[4].id, 10);
    const theirs = await rfq.create(other, TRADABLE[4].id, 10);
    await rfq.quote(resp, mine.id, { bid: 40 });
    const onTheirs = await rfq.quote(resp, theirs.id, { bid: 30 });
    const reqLive = await liveKey(svc, req, REQUESTER_SCOPES);
    const live = await rfq.create(reqLive, TRADABLE[4].id, 10);
    expect((await walletCents(svc, resp)).reserved).toBe(base + 400 + 300);
    const reset = await as(req, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(reset.status).toBe(200);
    expect(reset.body.cleared.rfqs).toBeGreaterThanOrEqual(1);
    expect((await rfq.get(req, mine.id)).body.status).toBe('CANCELLED');
    expect((await rfq.get(reqLive, live.id)).body.status).toBe('OPEN');
    expect((await walletCents(svc, resp)).reserved).toBe(base + 300);
    // The responder's own reset cancels its quotes on other users' RFQs.
    const respReset2 = await as(respReset, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(respReset2.status).toBe(200);
    expect(respReset2.body.cleared.rfq_quotes).toBe(1);
    expect((await walletCents(svc, resp)).reserved).toBe(0);
    expect((await rfq.quotes(other, theirs.id)).body.data.map((q: Json) => q.id)).not.toContain(
      onTheirs.id,
    );
    expect((await rfq.get(other, theirs.id)).body.status).toBe('OPEN');
  });
});
