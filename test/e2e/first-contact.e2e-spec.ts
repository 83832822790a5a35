// What an integrator meets first (issue 21): answers that say what is wrong and what to send.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectError, http, startApp, type Running } from '../support/harness.js';
import { WsClient } from '../support/ws.js';
import {
  as,
  getOrder,
  limit,
  market,
  place,
  placeRaw,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';

describe('first contact: errors that name the way forward', () => {
  let svc: Running;
  let t: Trader;
  beforeAll(async () => {
    svc = await startApp({ env: { RATE_LIMITS_ENABLED: 'false' } });
    t = await trader(svc);
  });
  afterAll(async () => {
    await svc.close();
  });

  it('MARKET_NOT_OPEN names the market status, in the message and in details.status', async () => {
    const m = TRADABLE[TRADABLE.length - 1];
    const resolved = await as(t, `${svc.api}/sandbox/markets/${m.id}/resolve`, {
      method: 'POST',
      json: { outcome: 'NO' },
    });
    expect(resolved.status).toBe(200);
    const err = expectError(
      await placeRaw(svc, t, limit(m, 'BUY', 'YES', 10, 1)),
      422,
      'MARKET_NOT_OPEN',
    );
    expect(err.details).toEqual({ market_id: m.id, status: 'RESOLVED' });
    expect(err.message).toBe('The market is RESOLVED, not OPEN: it takes no orders');
    // The sandbox price control says it the same way.
    const price = await as(t, `${svc.api}/sandbox/markets/${m.id}/price`, {
      method: 'POST',
      json: { price: 40 },
    });
    const priceErr = expectError(price, 422, 'MARKET_NOT_OPEN');
    expect(priceErr.details).toEqual({ market_id: m.id, status: 'RESOLVED' });
    expect(priceErr.message).toContain('RESOLVED');
  });

  it('a FOK that cannot fill ends EXPIRED with cancel_reason FOK_UNFILLABLE; an IOC remainder IOC_REMAINDER', async () => {
    const m = TRADABLE[0];
    const R = m.reference;
    const fok = await place(
      svc,
      t,
      limit(m, 'BUY', 'YES', R + 2, 10_000, { time_in_force: 'FOK' }),
    );
    expect(fok).toMatchObject({
      status: 'EXPIRED',
      filled_quantity: 0,
      cancel_reason: 'FOK_UNFILLABLE',
    });
    expect(await getOrder(svc, t, fok.id)).toMatchObject({
      status: 'EXPIRED',
      cancel_reason: 'FOK_UNFILLABLE',
    });
    const ioc = await place(svc, t, limit(m, 'BUY', 'YES', R - 20, 5, { time_in_force: 'IOC' }));
    expect(ioc).toMatchObject({ status: 'EXPIRED', cancel_reason: 'IOC_REMAINDER' });
    const mkt = await place(svc, t, market(m, 'BUY', 'YES', 100_000));
    expect(mkt.status).toBe('EXPIRED');
    expect(mkt.filled_quantity).toBeGreaterThan(0);
    expect(mkt.cancel_reason).toBe('IOC_REMAINDER');
    // The list and its filter agree.
    const list = await as(t, `${svc.api}/orders?status=EXPIRED&limit=10`);
    const reasons = Object.fromEntries(
      list.body.data.map((o: { id: string; cancel_reason: string }) => [o.id, o.cancel_reason]),
    );
    expect(reasons).toMatchObject({
      [fok.id]: 'FOK_UNFILLABLE',
      [ioc.id]: 'IOC_REMAINDER',
      [mkt.id]: 'IOC_REMAINDER',
    });
    // A resting order that was never final keeps null.
    const resting = await place(svc, t, limit(m, 'BUY', 'YES', 2, 1));
    expect(resting.cancel_reason).toBeNull();
  });

  it('a 415 names application/json: in the message, details.accepted_media_types and Accept', async () => {
    const body = JSON.stringify(limit(TRADABLE[1], 'BUY', 'YES', 2, 1));
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/json; charset=latin1',
    ]) {
      const res = await http(`${svc.api}/orders`, {
        method: 'POST',
        headers: { 'x-api-key': t.key, 'content-type': type },
        body,
      });
      const err = expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect([type, err.message]).toEqual([type, expect.stringContaining('application/json')]);
      expect(err.details).toEqual({ accepted_media_types: ['application/json'] });
      expect(res.headers.get('accept')).toBe('application/json');
    }
  });

  it('the public documents name no internal file', async () => {
    for (const path of ['/openapi.json', '/asyncapi.json']) {
      const res = await http(`${svc.api}${path}`);
      expect(res.status).toBe(200);
      expect([path, res.text.match(/CONTRACT\.md|SPEC\.md|STYLE\.md/g)]).toEqual([path, null]);
    }
  });

  it('the OpenAPI document states the 415 Accept header and the expiry reasons', async () => {
    const doc = (await http(`${svc.api}/openapi.json`)).body;
    const r415 = doc.paths['/api/v1/orders'].post.responses['415'];
    // Shared headers are components the response refers to.
    const accept = doc.components.headers[r415.headers.Accept.$ref.split('/').pop()];
    expect(accept.description).toContain('application/json');
    expect(r415.description).toContain('accepted_media_types');
    const order = doc.components.schemas.OrderDto ?? doc.components.schemas.OrderResponseDto;
    expect(order.properties.cancel_reason.enum).toEqual(
      expect.arrayContaining(['FOK_UNFILLABLE', 'IOC_REMAINDER']),
    );
  });

  it('a realtime positions message carries the REST fields of GET /positions/cursor, and keeps its own', async () => {
    const w = await trader(svc, 'positions-fields@first-contact.test', {
      scopes: ['orders:read', 'orders:write', 'markets:read', 'wallet:read', 'websocket'],
    });
    const m = TRADABLE[2];
    const c = await WsClient.authed(svc.baseUrl, { api_key: w.key });
    expect((await c.subscribe(['positions'])).type).toBe('subscribed');
    const from = c.mark();
    await place(svc, w, market(m, 'BUY', 'YES', 7));
    const msg = await c.waitFor(
      (x) => x.type === 'event' && x.channel === 'positions' && x.data.market_id === m.id,
      3000,
      from,
    );
    const rest = (await as(w, `${svc.api}/positions/cursor`)).body.data.find(
      (p: { market_id: string }) => p.market_id === m.id,
    );
    expect(rest).toMatchObject({ side: 'YES', quantity: 7 });
    expect(msg.data).toEqual({
      ...rest,
      yes: 7,
      no: 0,
      yes_cost_cents: rest.cost_basis_cents,
      no_cost_cents: 0,
    });
    await c.close();
  });

  it('a batch leg error has the error schema; quote levels state their fields as required', async () => {
    const doc = (await http(`${svc.api}/openapi.json`)).body;
    const schemas = doc.components.schemas;
    const legError = schemas.BatchLegResultDto.properties.error;
    const ref = legError.$ref ?? legError.allOf?.[0]?.$ref;
    expect(ref).toBe('#/components/schemas/ErrorDetailDto');
    expect(schemas.ErrorDetailDto.required).toEqual(
      expect.arrayContaining(['code', 'message', 'status', 'request_id', 'details']),
    );
    const levels = schemas.QuoteDto.properties.levels.items;
    expect(levels.required).toEqual(['price', 'quantity']);
    // A leg on an unknown market answers as POST /orders would, in that schema.
    const m = TRADABLE[3];
    const res = await as(t, `${svc.api}/orders/batch`, {
      method: 'POST',
      json: {
        orders: [
          limit(m, 'BUY', 'YES', 2, 1),
          { ...limit(m, 'BUY', 'YES', 2, 1), market_id: 'mkt_00000000000000000000' },
        ],
      },
    });
    expect(res.status).toBe(200);
    const [ok, bad] = res.body.results;
    expect(ok.status).toBe(201);
    expect(bad.status).toBe(404);
    expect(Object.keys(bad.error).sort()).toEqual([
      'code',
      'details',
      'message',
      'request_id',
      'status',
    ]);
    expect(bad.error).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    const quote = await as(t, `${svc.api}/orders/quote`, {
      method: 'POST',
      json: market(m, 'BUY', 'YES', 3),
    });
    expect(quote.status).toBe(200);
    for (const level of quote.body.levels)
      expect(Object.keys(level).sort()).toEqual(['price', 'quantity']);
  });
});
