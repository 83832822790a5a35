import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { http, type Running } from '../support/harness.js';
import { sessionFor } from '../support/keys.js';
import {
  ADMIN,
  as,
  keyFor,
  market,
  ORDER_SCOPES,
  place,
  startOrdersApp,
  trader,
  TRADABLE,
  type Trader,
} from '../support/orders.js';
import { WsClient } from '../support/ws.js';

const WS_SCOPES = [...ORDER_SCOPES, 'websocket', 'notifications:read'];

/**
 * The private realtime channel `notifications` (CONTRACT.md Notifications, Worlds): each
 * notification, once stored, reaches its owner's connections of its world that subscribed to it,
 * as the object the list shows; never another world's socket or another user's; subscribing
 * needs notifications:read.
 */
describe('realtime: the notifications channel', () => {
  let svc: Running;
  let admin: string;
  let seq = 0;
  const sockets: WsClient[] = [];

  beforeAll(async () => {
    svc = await startOrdersApp();
    admin = await sessionFor(svc.api, ADMIN);
  });
  afterEach(async () => {
    for (const s of sockets.splice(0)) await s.close();
  });
  afterAll(async () => {
    await svc.close();
  });

  async function user(): Promise<{ paper: Trader; live: Trader }> {
    const paper = await trader(svc, `ws-ntf-${++seq}-${Date.now()}@notify.test`, {
      scopes: WS_SCOPES,
    });
    const live = await keyFor(svc, paper.email, paper.token, {
      environment: 'live',
      scopes: ['websocket', 'notifications:read'],
    });
    return { paper, live };
  }

  async function socket(auth: { api_key: string } | { token: string }): Promise<WsClient> {
    const c = await WsClient.authed(svc.baseUrl, auth);
    sockets.push(c);
    return c;
  }

  async function subscribed(auth: { api_key: string } | { token: string }): Promise<WsClient> {
    const c = await socket(auth);
    expect(await c.subscribe(['notifications'])).toEqual({
      type: 'subscribed',
      channels: ['notifications'],
    });
    return c;
  }

  /** A denied tier request on the key: one notification in the key's world. */
  async function denied(t: Trader): Promise<void> {
    const ask = await http(`${svc.api}/api-keys/${t.keyId}/tier-request`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}` },
      json: { tier: 'PRO', reason: 'realtime tests' },
    });
    expect(ask.status).toBe(202);
    const deny = await http(`${svc.api}/admin/tier-requests/${ask.body.id}/deny`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(deny.status).toBe(200);
  }

  const newest = async (t: Trader) =>
    (await as(t, `${svc.api}/notifications/cursor?limit=1`)).body.data[0];

  it('a MARKET_RESOLVED reaches the holder on its paper socket, not its live socket nor anyone else', async () => {
    const m = TRADABLE[1];
    const a = await user();
    const other = await user();
    const paperSocket = await subscribed({ api_key: a.paper.key });
    const liveSocket = await subscribed({ api_key: a.live.key });
    const sessionSocket = await subscribed({ token: a.paper.token });
    const otherSocket = await subscribed({ api_key: other.paper.key });
    await place(svc, a.paper, market(m, 'BUY', 'YES', 2));
    const resolved = await as(a.paper, `${svc.api}/sandbox/markets/${m.id}/resolve`, {
      method: 'POST',
      json: { outcome: 'NO' },
    });
    expect(resolved.status).toBe(200);
    const msg = await paperSocket.waitFor(
      (x) => x.type === 'event' && x.channel === 'notifications',
    );
    const stored = await newest(a.paper);
    expect(stored).toMatchObject({
      type: 'MARKET_RESOLVED',
      environment: 'test',
      data: { market_id: m.id, outcome: 'NO', payout_cents: 0 },
    });
    expect(msg).toEqual({
      type: 'event',
      channel: 'notifications',
      seq: 1,
      ts: Date.parse(stored.created_at as string),
      time: stored.created_at,
      data: stored,
    });
    for (const s of [paperSocket, liveSocket, sessionSocket, otherSocket]) await s.sync();
    expect(paperSocket.events('notifications')).toHaveLength(1);
    expect(liveSocket.events('notifications')).toEqual([]);
    expect(sessionSocket.events('notifications')).toEqual([]);
    expect(otherSocket.events('notifications')).toEqual([]);
  });

  it('a live notification reaches the live sockets (key and session), not the paper one; seq rises per notification', async () => {
    const a = await user();
    const paperSocket = await subscribed({ api_key: a.paper.key });
    const liveSocket = await subscribed({ api_key: a.live.key });
    const sessionSocket = await subscribed({ token: a.paper.token });
    await denied(a.live);
    await denied(a.live);
    const [first, second] = await liveSocket.waitForCount(
      (x) => x.type === 'event' && x.channel === 'notifications',
      2,
    );
    expect([first.seq, second.seq]).toEqual([1, 2]);
    expect(second.data).toEqual(await newest(a.live));
    expect(second.data).toMatchObject({ type: 'TIER_REQUEST_DENIED', environment: 'live' });
    await sessionSocket.waitForCount((x) => x.channel === 'notifications', 2);
    await paperSocket.sync();
    expect(paperSocket.events('notifications')).toEqual([]);
    // And a paper one reaches the paper socket only.
    await denied(a.paper);
    const paperMsg = await paperSocket.waitFor((x) => x.channel === 'notifications');
    expect(paperMsg.data).toEqual(await newest(a.paper));
    expect(paperMsg.data.environment).toBe('test');
    for (const s of [liveSocket, sessionSocket]) await s.sync();
    expect(liveSocket.events('notifications')).toHaveLength(2);
    expect(sessionSocket.events('notifications')).toHaveLength(2);
  });

  it('subscribing needs notifications:read: refused INSUFFICIENT_SCOPE, the connection stays open and hears nothing', async () => {
    const a = await user();
    const bare = await keyFor(svc, a.paper.email, a.paper.token, { scopes: ['websocket'] });
    const c = await socket({ api_key: bare.key });
    const refusal = await c.subscribe(['notifications']);
    expect(refusal).toMatchObject({
      type: 'error',
      code: 'INSUFFICIENT_SCOPE',
      details: { required_scopes: ['notifications:read'] },
    });
    await denied(a.paper);
    const witness = await subscribed({ api_key: a.paper.key });
    await denied(a.paper);
    await witness.waitFor((x) => x.channel === 'notifications');
    await c.sync();
    expect(c.closed).toBeNull();
    expect(c.events('notifications')).toEqual([]);
    // Unsubscribing stops them.
    witness.send({ type: 'unsubscribe', channels: ['notifications'] });
    await witness.waitFor((x) => x.type === 'unsubscribed');
    await denied(a.paper);
    await witness.sync();
    expect(witness.events('notifications')).toHaveLength(1);
  });
});
