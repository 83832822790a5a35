import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, type Running } from '../support/harness.js';
import {
  as,
  getOrder,
  keyFor,
  limit,
  ORDER_SCOPES,
  placeRaw,
  STARTING_BALANCE,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { scenario, scenarioById } from '../support/scenarios.js';
import { expectLedgerConsistent, ledger, positions, walletOf } from '../support/wallet.js';
import { WsClient } from '../support/ws.js';

const SCOPES = [...ORDER_SCOPES, 'wallet:write', 'websocket'];

/** Each scenario effect as a client observes it (paper engine, feed stopped). */
describe('sandbox scenarios: effects', () => {
  let svc: Running;
  let a: Trader;
  const [m, other] = [TRADABLE[0], TRADABLE[1]];

  beforeAll(async () => {
    svc = await startOrdersApp();
    a = await trader(svc, 'a@scenarios-effects.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('creates a scenario: 201 with its match, effect, times, remaining and environment', async () => {
    const res = await as(a, `${svc.api}/sandbox/scenarios`, {
      method: 'POST',
      json: {
        match: { operation: 'GET /markets/{id}', market_id: other.id },
        effect: { type: 'DELAY', ms: 1 },
        times: 2,
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^scn_/),
      match: { operation: 'GET /markets/{id}', market_id: other.id, client_order_id_prefix: null },
      effect: { type: 'DELAY', ms: 1 },
      times: 2,
      remaining: 2,
      created_at: '2026-11-22T12:00:00.000Z',
      environment: 'test',
    });
    const del = await as(a, `${svc.api}/sandbox/scenarios/${res.body.id}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expectContractError(
      await as(a, `${svc.api}/sandbox/scenarios/${res.body.id}`),
      404,
      'NOT_FOUND',
    );
  });

  it('REJECT answers the documented code with its status and error body, once, then the operation runs', async () => {
    const s = await scenario(svc, a, {
      match: { operation: 'POST /orders' },
      effect: { type: 'REJECT', code: 'INSUFFICIENT_FUNDS' },
    });
    const shaped = await placeRaw(svc, a, limit(m, 'BUY', 'YES', 10, 1));
    const err = expectContractError(shaped, 422, 'INSUFFICIENT_FUNDS');
    expect(err.details).toMatchObject({ scenario_id: s.id });
    expect(shaped.headers.get('svc-scenario')).toBe(s.id);
    expect((await scenarioById(svc, a, s.id)).remaining).toBe(0);
    // Spent: the next order is placed normally, unmarked.
    const next = await placeRaw(svc, a, limit(m, 'BUY', 'YES', 10, 1));
    expect(next.status).toBe(201);
    expect(next.headers.get('svc-scenario')).toBeNull();
    await as(a, `${svc.api}/orders/${next.body.id}`, { method: 'DELETE' });
  });

  it('an Idempotency-Key replay of a shaped answer replays it and spends nothing', async () => {
    const s = await scenario(svc, a, {
      match: { operation: 'POST /orders' },
      effect: { type: 'REJECT', code: 'MARKET_NOT_OPEN' },
      times: 2,
    });
    const headers = { 'idempotency-key': 'scenario-replay-1' };
    const first = await placeRaw(svc, a, limit(m, 'BUY', 'YES', 10, 1), { headers });
    expectContractError(first, 422, 'MARKET_NOT_OPEN');
    const again = await placeRaw(svc, a, limit(m, 'BUY', 'YES', 10, 1), { headers });
    expectContractError(again, 422, 'MARKET_NOT_OPEN');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await scenarioById(svc, a, s.id)).remaining).toBe(1);
    await as(a, `${svc.api}/sandbox/scenarios/${s.id}`, { method: 'DELETE' });
  });

  it('PARTIAL_FILL fills that much against the house and cancels the rest with SCENARIO; money and positions exact', async () => {
    const before = await walletOf(svc, a);
    const s = await scenario(svc, a, {
      match: { operation: 'POST /orders', market_id: m.id },
      effect: { type: 'PARTIAL_FILL', quantity: 30 },
    });
    const ask = m.reference + 1; // the house's best ask: 100 contracts
    const res = await placeRaw(
      svc,
      a,
      limit(m, 'BUY', 'YES', ask, 50, { client_order_id: 'pf-1' }),
    );
    expect(res.status).toBe(201);
    expect(res.headers.get('svc-scenario')).toBe(s.id);
    expect(res.body).toMatchObject({
      quantity: 50,
      filled_quantity: 30,
      remaining_quantity: 0,
      status: 'CANCELLED',
      cancel_reason: 'SCENARIO',
      client_order_id: 'pf-1',
    });
    expect(
      res.body.fills.map((f: { price: number; quantity: number }) => [f.price, f.quantity]),
    ).toEqual([[ask, 30]]);
    expect(await getOrder(svc, a, res.body.id)).toMatchObject({
      filled_quantity: 30,
      status: 'CANCELLED',
      cancel_reason: 'SCENARIO',
    });
    const after = await walletOf(svc, a);
    expect(after.balance_cents).toBe(before.balance_cents - 30 * ask);
    expect(after.reserved_cents).toBe(before.reserved_cents);
    const held = (await positions(svc, a)).filter((p) => p.market_id === m.id);
    expect(held).toMatchObject([{ side: 'YES', quantity: 30, average_price: ask }]);
    expectLedgerConsistent(await ledger(svc, a), after.balance_cents);
  });

  it('PARTIAL_FILL fills only what the book holds within the limit; the rest is cancelled', async () => {
    const before = await walletOf(svc, a);
    await scenario(svc, a, {
      match: { operation: 'POST /orders', market_id: other.id },
      effect: { type: 'PARTIAL_FILL', quantity: 500 },
    });
    // Below the house's asks: nothing crosses, so nothing fills and nothing rests.
    const res = await placeRaw(svc, a, limit(other, 'BUY', 'YES', other.reference - 3, 20));
    expect(res.body).toMatchObject({
      filled_quantity: 0,
      status: 'CANCELLED',
      cancel_reason: 'SCENARIO',
    });
    expect(await walletOf(svc, a)).toEqual(before);
  });

  it('DELAY answers after the wait, then normally', async () => {
    const s = await scenario(svc, a, {
      match: { operation: 'GET /wallet' },
      effect: { type: 'DELAY', ms: 400 },
    });
    const t0 = Date.now();
    const res = await as(a, `${svc.api}/wallet`);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(390);
    expect(res.status).toBe(200);
    expect(res.headers.get('svc-scenario')).toBe(s.id);
  });

  it('RATE_LIMIT answers 429 RATE_LIMITED as the limits do, with Retry-After; a retry with the same Idempotency-Key then runs', async () => {
    const s = await scenario(svc, a, {
      match: { operation: 'POST /orders' },
      effect: { type: 'RATE_LIMIT', retry_after_seconds: 17 },
    });
    const headers = { 'idempotency-key': 'scenario-429' };
    const res = await placeRaw(svc, a, limit(m, 'BUY', 'YES', 5, 1), { headers });
    const err = expectContractError(res, 429, 'RATE_LIMITED');
    expect(err.details).toMatchObject({
      limit_scope: 'key',
      retry_after_seconds: 17,
      scenario_id: s.id,
    });
    expect(res.headers.get('retry-after')).toBe('17');
    expect(res.headers.get('svc-scenario')).toBe(s.id);
    const retry = await placeRaw(svc, a, limit(m, 'BUY', 'YES', 5, 1), { headers });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    await as(a, `${svc.api}/orders/${retry.body.id}`, { method: 'DELETE' });
  });

  it('UNAVAILABLE answers 503 SERVICE_UNAVAILABLE with Retry-After', async () => {
    const s = await scenario(svc, a, {
      match: { operation: 'GET /orders' },
      effect: { type: 'UNAVAILABLE', retry_after_seconds: 3 },
    });
    const res = await as(a, `${svc.api}/orders`);
    expectContractError(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.headers.get('retry-after')).toBe('3');
    expect(res.headers.get('svc-scenario')).toBe(s.id);
    expect((await as(a, `${svc.api}/orders`)).status).toBe(200);
  });

  it("DISCONNECT closes the requesting key's sockets with 1012, the operation runs, and the client reconnects", async () => {
    const second = await keyFor(svc, a.email, a.token, { scopes: SCOPES });
    const ws = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    const kept = await WsClient.authed(svc.baseUrl, { api_key: second.key });
    const s = await scenario(svc, a, {
      match: { operation: 'GET /wallet' },
      effect: { type: 'DISCONNECT' },
    });
    const res = await as(a, `${svc.api}/wallet`);
    expect(res.status).toBe(200);
    expect(res.body.environment).toBe('test');
    expect(res.headers.get('svc-scenario')).toBe(s.id);
    expect(await ws.waitClose()).toMatchObject({ code: 1012 });
    // Only the key that made the request loses its connections.
    expect(kept.closed).toBeNull();
    const again = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    expect((await again.subscribe(['orders'])).type).toBe('subscribed');
    await again.close();
    await kept.close();
  });

  it('the starting balance is untouched by shaped refusals', async () => {
    // Every refusal above changed nothing: only the partial fill moved money.
    const rows = await ledger(svc, a);
    expect(rows.filter((r) => r.type === 'TRADE').length).toBe(1);
    expect(rows.at(-1)?.amount_cents).toBe(STARTING_BALANCE);
  });
});
