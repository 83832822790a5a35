import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { http, type Running } from '../support/harness.js';
import { OpenApiConformance } from '../support/openapi-conformance.js';
import { as, TRADABLE, trader, type Trader } from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import { createEndpoint, startWebhookApp, until } from '../support/webhooks.js';
import { WsClient, type WsMessage } from '../support/ws.js';
import {
  advance,
  liveKey,
  REQUESTER_SCOPES,
  responder,
  RESPONDER_SCOPES,
  rfqClient,
  type Json,
} from '../support/rfq.js';

const HOOKS = ['webhooks:read', 'webhooks:write'];
const RFQ_HOOKS = ['rfq.quote_received', 'rfq.quote_accepted', 'rfq.expired'];

/**
 * What the parties hear: the private realtime channel rfq (requester: quote.received,
 * quote.cancelled, rfq.expired; approved responders: rfq.created, rfq.closed; both:
 * quote.accepted), the rfq.* webhooks and the RFQ_* notifications, never naming the requester to
 * a responder; the trade on trades:<market_id>.
 */
describe('rfq: realtime channel, webhooks, notifications', () => {
  let svc: Running;
  let rfq: ReturnType<typeof rfqClient>;
  let hooks: Receiver;
  let req: Trader;
  let resp: Trader;
  let stranger: Trader;
  let reqWs: WsClient;
  let respWs: WsClient;
  let respLiveWs: WsClient;
  let strangerWs: WsClient;
  let oas: OpenApiConformance;
  const market = TRADABLE[0];
  const rfqEvents = (ws: WsClient, event: string): Json[] =>
    ws
      .events('rfq')
      .map((m: WsMessage) => m.data)
      .filter((d: Json) => d.event === event);
  const notifications = async (t: Trader): Promise<Json[]> =>
    (await as(t, `${svc.api}/notifications/cursor?limit=200`)).body.data as Json[];

  beforeAll(async () => {
    svc = await startWebhookApp();
    rfq = rfqClient(svc);
    oas = new OpenApiConformance((await http(`${svc.api}/openapi.json`)).body);
    hooks = await Receiver.start();
    req = await trader(svc, 'req@rfq-events.test', { scopes: [...REQUESTER_SCOPES, ...HOOKS] });
    resp = await trader(svc, 'responder@sandbox.test', { scopes: [...RESPONDER_SCOPES, ...HOOKS] });
    stranger = await trader(svc, 'stranger@rfq-events.test', { scopes: REQUESTER_SCOPES });
    const respLive = await responder(svc, 'live');
    await createEndpoint(svc, req, hooks.url('/req'), RFQ_HOOKS);
    await createEndpoint(svc, resp, hooks.url('/resp'), RFQ_HOOKS);
    reqWs = await WsClient.authed(svc.baseUrl, { api_key: req.key });
    respWs = await WsClient.authed(svc.baseUrl, { api_key: resp.key });
    respLiveWs = await WsClient.authed(svc.baseUrl, { api_key: respLive.key });
    strangerWs = await WsClient.authed(svc.baseUrl, { api_key: stranger.key });
    for (const ws of [reqWs, respWs, respLiveWs, strangerWs]) await ws.subscribe(['rfq']);
    await reqWs.subscribe([`trades:${market.id}`]);
  });
  afterAll(async () => {
    for (const ws of [reqWs, respWs, respLiveWs, strangerWs]) await ws.close();
    await hooks.close();
    await svc.close();
  });

  it('the rfq channel needs orders:read or rfq:respond', async () => {
    const bare = await trader(svc, 'bare@rfq-events.test', {
      scopes: ['websocket', 'markets:read'],
    });
    const ws = await WsClient.authed(svc.baseUrl, { api_key: bare.key });
    ws.send({ type: 'subscribe', channels: ['rfq'] });
    const err = await ws.waitFor((m) => m.type === 'error');
    expect(err.code).toBe('INSUFFICIENT_SCOPE');
    await ws.close();
  });

  it('create, quote, withdraw, accept: each party hears its events, the responder never the requester', async () => {
    const r = await rfq.create(req, market.id, 6);
    const created = await respWs.waitFor((m) => m.channel === 'rfq' && m.data.rfq?.id === r.id);
    expect(created.data).toEqual({
      event: 'rfq.created',
      rfq: {
        id: r.id,
        market_id: market.id,
        quantity: 6,
        status: 'OPEN',
        expires_at: r.expires_at,
        created_at: r.created_at,
        environment: 'test',
      },
    });
    const q1 = await rfq.quote(resp, r.id, { bid: 40, ask: 45 });
    await reqWs.waitFor((m) => m.channel === 'rfq' && m.data.quote?.id === q1.id);
    expect(rfqEvents(reqWs, 'quote.received').find((d) => d.quote.id === q1.id)).toEqual({
      event: 'quote.received',
      rfq_id: r.id,
      market_id: market.id,
      quote: q1,
    });
    await rfq.withdraw(resp, q1.id);
    await reqWs.waitFor((m) => m.data?.event === 'quote.cancelled' && m.data.quote_id === q1.id);
    const q1b = await rfq.quote(resp, r.id, { bid: 39, ask: 46 });
    // A replacement: told on the channel (quote.cancelled REPLACED, then the new quote) and by
    // webhook, but no second inbox notification.
    const q2 = await rfq.quote(resp, r.id, { bid: 41, ask: 44 });
    await reqWs.waitFor((m) => m.data?.event === 'quote.received' && m.data.quote.id === q2.id);
    await reqWs.waitFor(
      (m) =>
        m.data?.event === 'quote.cancelled' &&
        m.data.quote_id === q1b.id &&
        m.data.status === 'REPLACED',
    );
    const out = await rfq.accept(req, q2.id, 'BUY', 'YES');
    const mineAccepted = await reqWs.waitFor((m) => m.data?.event === 'quote.accepted');
    expect(mineAccepted.data).toMatchObject({
      rfq: { id: r.id, status: 'FILLED' },
      trade: out.trade,
    });
    const theirs = await respWs.waitFor((m) => m.data?.event === 'quote.accepted');
    expect(theirs.data).toEqual({
      event: 'quote.accepted',
      rfq_id: r.id,
      market_id: market.id,
      quote: out.quote,
      trade: out.trade,
    });
    await respWs.waitFor((m) => m.data?.event === 'rfq.closed' && m.data.rfq_id === r.id);
    // The trade prints on trades:<market_id>.
    await reqWs.waitFor(
      (m) => m.channel === `trades:${market.id}` && JSON.stringify(m.data).includes(out.trade.id),
    );
    // Nobody else hears anything: not the other world, not an unapproved user; and the
    // responder's messages never name the requester.
    expect(respLiveWs.events('rfq')).toEqual([]);
    expect(strangerWs.events('rfq')).toEqual([]);
    expect(rfqEvents(reqWs, 'rfq.created')).toEqual([]);
    const respText = JSON.stringify(respWs.events('rfq'));
    expect(respText).not.toContain(req.userId);
    expect(respText).not.toContain(req.email);

    // Webhooks: received and accepted for the requester, accepted for the responder.
    const reqHooks = await hooks.waitFor('/req', 3);
    const types = reqHooks.map((h) => h.json.type as string);
    expect(types.filter((t) => t === 'rfq.quote_received').length).toBeGreaterThanOrEqual(2);
    await until(
      () => hooks.at('/req').map((h) => h.json.type as string),
      (ts) => ts.includes('rfq.quote_accepted'),
      'the requester rfq.quote_accepted webhook',
    );
    const [respHook] = await hooks.waitFor('/resp', 1);
    expect(respHook.json).toMatchObject({
      type: 'rfq.quote_accepted',
      environment: 'test',
      data: { rfq_id: r.id, quote: { id: q2.id }, trade: { id: out.trade.id } },
    });
    expect(respHook.body).not.toContain(req.userId);
    // Every delivery, the requester's and the responder's copies alike, matches its published schema.
    const delivered = [...hooks.at('/req'), ...hooks.at('/resp')];
    expect(delivered.filter((h) => h.json.type === 'rfq.quote_accepted')).toHaveLength(2);
    for (const h of delivered) expect(oas.webhookProblems(h.json.type, h.json)).toEqual([]);
    // Notifications: the requester hears of quotes, the responder of its accepted quote.
    const reqNotes = await notifications(req);
    const received = reqNotes.filter((n) => n.type === 'RFQ_QUOTE_RECEIVED');
    expect(received.some((n) => n.data.quote.id === q1.id)).toBe(true);
    expect(received.some((n) => n.data.quote.id === q1b.id)).toBe(true);
    expect(received.some((n) => n.data.quote.id === q2.id)).toBe(false);
    const respNotes = await notifications(resp);
    const accepted = respNotes.find((n) => n.type === 'RFQ_QUOTE_ACCEPTED');
    expect(accepted).toMatchObject({ environment: 'test', data: { rfq_id: r.id } });
    expect(JSON.stringify(respNotes)).not.toContain(req.userId);
  });

  it('expiry: rfq.expired to the requester (realtime and webhook), rfq.closed to responders', async () => {
    const r = await rfq.create(req, market.id, 2, 10);
    advance(svc, 10_000);
    const expired = await reqWs.waitFor(
      (m) => m.data?.event === 'rfq.expired' && m.data.rfq.id === r.id,
    );
    expect(expired.data.rfq.status).toBe('EXPIRED');
    await respWs.waitFor((m) => m.data?.event === 'rfq.closed' && m.data.rfq_id === r.id);
    const hook = await until(
      () => hooks.at('/req').find((h) => h.json.type === 'rfq.expired'),
      (h) => h !== undefined,
      'the rfq.expired webhook',
    );
    expect(hook!.json.data.rfq).toMatchObject({ id: r.id, status: 'EXPIRED' });
    expect(oas.webhookProblems('rfq.expired', hook!.json)).toEqual([]);
  });

  it('the live world hears its own RFQs only', async () => {
    const reqLive = await liveKey(svc, req, REQUESTER_SCOPES);
    const r = await rfq.create(reqLive, market.id, 1);
    await respLiveWs.waitFor((m) => m.data?.event === 'rfq.created' && m.data.rfq.id === r.id);
    expect(respLiveWs.events('rfq').every((m) => m.data.rfq?.environment !== 'test')).toBe(true);
    const paperHeard = respWs.events('rfq').some((m) => m.data.rfq?.id === r.id);
    expect(paperHeard).toBe(false);
    expect(
      (await http(`${svc.api}/rfq/${r.id}`, { headers: { 'x-api-key': req.key } })).status,
    ).toBe(404);
  });
});
