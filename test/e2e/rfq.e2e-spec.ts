import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, type Running } from '../support/harness.js';
import {
  expectValidation,
  keyFor,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { until } from '../support/webhooks.js';
import {
  liveKey,
  REQUESTER_SCOPES,
  responder,
  RESPONDER_SCOPES,
  rfqClient,
  walletCents,
  type Json,
} from '../support/rfq.js';

/**
 * RFQs and quotes, the rules short of trading: creating, listing, reading and cancelling RFQs;
 * who may quote, what a quote may say, replacement and withdrawal with their holds; worlds apart;
 * the requester never named to responders. Paper feed stopped, clock fixed at noon.
 */
describe('rfq: requests and quotes', () => {
  let svc: Running;
  let rfq: ReturnType<typeof rfqClient>;
  let alice: Trader;
  let bob: Trader;
  let resp: Trader;
  const [m1, m2] = TRADABLE;

  beforeAll(async () => {
    svc = await startOrdersApp();
    rfq = rfqClient(svc);
    alice = await trader(svc, 'alice@rfq.test', { scopes: RESPONDER_SCOPES });
    bob = await trader(svc, 'bob@rfq.test', { scopes: REQUESTER_SCOPES });
    resp = await responder(svc);
  });
  afterAll(async () => {
    await svc.close();
  });

  it('creates an RFQ with the contract fields, default expiry 300 s, and lists and reads it', async () => {
    const created = await rfq.create(alice, m1.id, 25);
    expect(created).toEqual({
      id: expect.stringMatching(/^rfq_[0-9a-z]+$/),
      market_id: m1.id,
      quantity: 25,
      status: 'OPEN',
      expires_at: '2026-11-22T12:05:00.000Z',
      accepted_quote_id: null,
      trade_id: null,
      created_at: '2026-11-22T12:00:00.000Z',
      environment: 'test',
    });
    expect((await rfq.get(alice, created.id)).body).toEqual(created);
    const list = await rfq.call(alice, 'GET', '?status=OPEN');
    expect(list.status).toBe(200);
    expect(list.body.data.map((r: Json) => r.id)).toContain(created.id);
    const filled = await rfq.call(alice, 'GET', '?status=FILLED');
    expect(filled.body.data).toEqual([]);
    expect((await rfq.create(alice, m1.id, 1, 10)).expires_at).toBe('2026-11-22T12:00:10.000Z');
  });

  it('refuses bad RFQ bodies with 400 naming the field, and creates nothing', async () => {
    const before = (await rfq.call(alice, 'GET', '?limit=200')).body.data.length;
    for (const [body, field] of [
      [{ quantity: 5 }, 'market_id'],
      [{ market_id: 'nope', quantity: 5 }, 'market_id'],
      [{ market_id: m1.id }, 'quantity'],
      [{ market_id: m1.id, quantity: 0 }, 'quantity'],
      [{ market_id: m1.id, quantity: 1.5 }, 'quantity'],
      [{ market_id: m1.id, quantity: '5' }, 'quantity'],
      [{ market_id: m1.id, quantity: 5, expires_in_seconds: 9 }, 'expires_in_seconds'],
      [{ market_id: m1.id, quantity: 5, expires_in_seconds: 3601 }, 'expires_in_seconds'],
      [{ market_id: m1.id, quantity: 5, expires_in_seconds: null }, 'expires_in_seconds'],
    ] as [unknown, string][]) {
      expectValidation(await rfq.createRaw(alice, body), field);
    }
    expectValidation(await rfq.call(alice, 'GET', '?status=NOPE'), 'status');
    const unknown = await rfq.createRaw(alice, {
      market_id: 'mkt_00000000000000000000',
      quantity: 5,
    });
    expect(expectContractError(unknown, 404, 'NOT_FOUND').details).toEqual({
      market_id: 'mkt_00000000000000000000',
    });
    expect((await rfq.call(alice, 'GET', '?limit=200')).body.data.length).toBe(before);
  });

  it('another user, or the other world, gets 404 for an RFQ id; a bad id too', async () => {
    const mine = await rfq.create(alice, m1.id, 3);
    const aliceLive = await liveKey(svc, alice);
    for (const t of [bob, aliceLive]) {
      expectContractError(await rfq.get(t, mine.id), 404, 'NOT_FOUND');
      expectContractError(await rfq.cancel(t, mine.id), 404, 'NOT_FOUND');
    }
    expectContractError(await rfq.get(alice, 'rfq_nope!'), 404, 'NOT_FOUND');
    const liveList = await rfq.call(aliceLive, 'GET', '');
    expect(liveList.body.data.map((r: Json) => r.id)).not.toContain(mine.id);
    // A responder sees it among the open RFQs of its world only.
    const respLive = await responder(svc, 'live');
    const paperOpen = (await rfq.open(resp, '?limit=200')).body.data.map((r: Json) => r.id);
    const liveOpen = (await rfq.open(respLive, '?limit=200')).body.data.map((r: Json) => r.id);
    expect(paperOpen).toContain(mine.id);
    expect(liveOpen).not.toContain(mine.id);
  });

  it('cancels an OPEN RFQ with its quotes (holds released); a second cancel is 409 RFQ_NOT_OPEN', async () => {
    const r = await rfq.create(bob, m2.id, 10);
    const before = await walletCents(svc, resp);
    const q = await rfq.quote(resp, r.id, { bid: 40, ask: 45 });
    expect((await walletCents(svc, resp)).reserved).toBe(before.reserved + 550);
    const cancelled = await rfq.cancel(bob, r.id);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('CANCELLED');
    expect((await walletCents(svc, resp)).reserved).toBe(before.reserved);
    const mine = (await rfq.quotes(resp, r.id)).body.data;
    expect(mine).toEqual([expect.objectContaining({ id: q.id, status: 'CANCELLED' })]);
    const again = await rfq.cancel(bob, r.id);
    expect(expectContractError(again, 409, 'RFQ_NOT_OPEN').details).toMatchObject({
      status: 'CANCELLED',
    });
    expectContractError(await rfq.quoteRaw(resp, r.id, { bid: 40 }), 409, 'RFQ_NOT_OPEN');
  });

  it('holds 422 RFQ_LIMIT_REACHED at 100 OPEN RFQs per user and world', async () => {
    const carol = await trader(svc, 'carol@rfq.test', { scopes: REQUESTER_SCOPES });
    for (let i = 0; i < 100; i++) await rfq.create(carol, m1.id, 1);
    const refused = await rfq.createRaw(carol, { market_id: m1.id, quantity: 1 });
    expect(expectContractError(refused, 422, 'RFQ_LIMIT_REACHED').details).toEqual({ limit: 100 });
    // Another world has its own count; cancelling one frees a place.
    const carolLive = await liveKey(svc, carol, REQUESTER_SCOPES);
    expect((await rfq.createRaw(carolLive, { market_id: m1.id, quantity: 1 })).status).toBe(201);
    const first = (await rfq.call(carol, 'GET', '?limit=1')).body.data[0];
    await rfq.cancel(carol, first.id);
    expect((await rfq.createRaw(carol, { market_id: m1.id, quantity: 1 })).status).toBe(201);
  });

  it('quotes need rfq:respond and an approved account (403), checked on every quote operation', async () => {
    const r = await rfq.create(bob, m1.id, 5);
    // alice holds rfq:respond but is not approved.
    for (const res of [
      await rfq.quoteRaw(alice, r.id, { bid: 40 }),
      await rfq.open(alice),
      await rfq.withdraw(alice, 'quo_abc'),
      await rfq.quotes(alice, r.id),
    ]) {
      expectContractError(res, 403, 'RFQ_RESPONDER_NOT_APPROVED');
    }
    // bob lacks the scope: INSUFFICIENT_SCOPE before anything else.
    const scoped = await rfq.quoteRaw(bob, r.id, { bid: 40 });
    expect(expectContractError(scoped, 403, 'INSUFFICIENT_SCOPE').details.required_scopes).toEqual([
      'rfq:respond',
    ]);
    expect((await rfq.quotes(bob, r.id)).body.data.every((q: Json) => q.status === 'OPEN')).toBe(
      true,
    );
  });

  it('refuses bad quotes: sides outside 1..99, bid >= ask, no side, expiry outside 1..300', async () => {
    const r = await rfq.create(bob, m1.id, 5);
    const before = await walletCents(svc, resp);
    for (const [body, field] of [
      [{}, 'bid'],
      [{ expires_in_seconds: 30 }, 'bid'],
      [{ bid: 0 }, 'bid'],
      [{ bid: 100 }, 'bid'],
      [{ ask: 0 }, 'ask'],
      [{ ask: 100 }, 'ask'],
      [{ bid: 50, ask: 50 }, 'ask'],
      [{ bid: 51, ask: 50 }, 'ask'],
      [{ bid: 40.5 }, 'bid'],
      [{ bid: '40' }, 'bid'],
      [{ bid: null, ask: 50 }, 'bid'],
      [{ bid: 40, expires_in_seconds: 0 }, 'expires_in_seconds'],
      [{ bid: 40, expires_in_seconds: 301 }, 'expires_in_seconds'],
    ] as [unknown, string][]) {
      expectValidation(await rfq.quoteRaw(resp, r.id, body), field);
    }
    expect(await walletCents(svc, resp)).toEqual(before);
    expectContractError(await rfq.quoteRaw(resp, 'rfq_missing0', { bid: 40 }), 404, 'NOT_FOUND');
  });

  it('quoting your own RFQ is 422 SELF_QUOTE', async () => {
    const respRfq = await rfq.create(resp, m1.id, 5);
    const res = await rfq.quoteRaw(resp, respRfq.id, { bid: 40, ask: 45 });
    expectContractError(res, 422, 'SELF_QUOTE');
    await rfq.cancel(resp, respRfq.id);
  });

  it('holds the larger side; a new quote REPLACES the previous one (hold moved); withdraw releases', async () => {
    const r = await rfq.create(bob, m2.id, 10);
    const base = (await walletCents(svc, resp)).reserved;
    const q1 = await rfq.quote(resp, r.id, { bid: 30, ask: 35 });
    expect(q1).toEqual({
      id: expect.stringMatching(/^quo_[0-9a-z]+$/),
      rfq_id: r.id,
      bid: 30,
      ask: 35,
      quantity: 10,
      status: 'OPEN',
      expires_at: '2026-11-22T12:00:30.000Z',
      created_at: expect.any(String),
      environment: 'test',
    });
    // max(30 * 10, (100 - 35) * 10) = 650
    expect((await walletCents(svc, resp)).reserved).toBe(base + 650);
    const q2 = await rfq.quote(resp, r.id, { bid: 70, expires_in_seconds: 300 });
    expect(q2.expires_at).toBe('2026-11-22T12:05:00.000Z');
    expect((await walletCents(svc, resp)).reserved).toBe(base + 700);
    const mine = (await rfq.quotes(resp, r.id)).body.data;
    expect(mine.map((q: Json) => [q.id, q.status])).toEqual([
      [q1.id, 'REPLACED'],
      [q2.id, 'OPEN'],
    ]);
    // The requester sees only OPEN quotes (the house's among them in the paper world).
    const seen = await until(
      async () => (await rfq.quotes(bob, r.id)).body.data as Json[],
      (qs) => qs.length === 2,
      'the house quote',
    );
    expect(seen.map((q) => q.id)).toContain(q2.id);
    expect(seen.map((q) => q.id)).not.toContain(q1.id);
    const withdrawn = await rfq.withdraw(resp, q2.id);
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body.status).toBe('CANCELLED');
    expect((await walletCents(svc, resp)).reserved).toBe(base);
    expectContractError(await rfq.withdraw(resp, q2.id), 409, 'QUOTE_NOT_OPEN');
    // Someone else's quote is unknown to you.
    expectContractError(
      await rfq.withdraw(resp, seen.find((q) => q.id !== q2.id).id),
      404,
      'NOT_FOUND',
    );
  });

  it('a quote larger than the responder can hold is 422 INSUFFICIENT_FUNDS and changes nothing', async () => {
    const big = await rfq.create(bob, m1.id, 1_000_000);
    const before = await walletCents(svc, resp);
    const res = await rfq.quoteRaw(resp, big.id, { bid: 50 });
    expectContractError(res, 422, 'INSUFFICIENT_FUNDS');
    expect(await walletCents(svc, resp)).toEqual(before);
    expect((await rfq.quotes(resp, big.id)).body.data).toEqual([]);
  });

  it('never names the requester to responders', async () => {
    const r = await rfq.create(bob, m1.id, 7);
    const q = await rfq.quote(resp, r.id, { bid: 20, ask: 80 });
    const open = (await rfq.open(resp, '?limit=200')).body.data.find((x: Json) => x.id === r.id);
    expect(Object.keys(open).sort()).toEqual(
      ['created_at', 'environment', 'expires_at', 'id', 'market_id', 'quantity', 'status'].sort(),
    );
    const texts = [
      (await rfq.open(resp, '?limit=200')).text,
      (await rfq.quotes(resp, r.id)).text,
      JSON.stringify(q),
    ];
    for (const text of texts) {
      expect(text).not.toContain(bob.userId);
      expect(text).not.toContain(bob.email);
    }
  });

  it('a responder cannot read quotes of an RFQ it has not quoted beyond its own (empty), a stranger 404', async () => {
    const r = await rfq.create(bob, m1.id, 2);
    expect((await rfq.quotes(resp, r.id)).body.data).toEqual([]);
    const dave = await keyFor(svc, alice.email, alice.token, { scopes: REQUESTER_SCOPES });
    expectContractError(await rfq.quotes(dave, r.id), 404, 'NOT_FOUND');
  });
});
