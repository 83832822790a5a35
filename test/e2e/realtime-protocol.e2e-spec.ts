import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import type { Running } from '../support/harness.js';
import {
  cancel,
  limit,
  ORDER_SCOPES,
  as,
  place,
  startOrdersApp,
  trader,
  TRADABLE,
  type Trader,
} from '../support/orders.js';
import { RealtimeHub } from '../../src/modules/realtime/realtime-hub.service.js';
import { ClientBook, sleep, WsClient, type WsMessage } from '../support/ws.js';

/** Polls `read` (every 10 ms, up to 5 s of real time for a loaded machine) until it is `want`. */
async function becomes<T>(read: () => T, want: T): Promise<T> {
  const deadline = Date.now() + 5000;
  let seen = read();
  while (seen !== want && Date.now() < deadline) {
    await sleep(10);
    seen = read();
  }
  return seen;
}

const WS_SCOPES = [...ORDER_SCOPES, 'websocket'];
const m = TRADABLE[0];
const ALL = [
  `orderbook:${m.id}`,
  `trades:${m.id}`,
  'ticker',
  'orders',
  'fills',
  'positions',
  'wallet',
];

/** seq of each event channel, in arrival order. */
function seqs(c: WsClient, from = 0): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const msg of c.messages.slice(from)) {
    if (msg.type !== 'event') continue;
    const list = out.get(msg.channel) ?? [];
    list.push(msg.seq);
    out.set(msg.channel, list);
  }
  return out;
}

describe('realtime: subscriptions, messages and sequence numbers', () => {
  let svc: Running;
  let a: Trader;

  beforeAll(async () => {
    svc = await startOrdersApp({
      env: { WS_MAX_SUBSCRIPTIONS: '8', WS_HEARTBEAT_MS: '200', WS_MAX_CONNECTIONS_PER_IP: '50' },
    });
    a = await trader(svc, undefined, { scopes: WS_SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('auth and subscribe sent back to back (without waiting for auth_ok) both succeed', async () => {
    const c = await WsClient.connect(svc.baseUrl);
    c.send({ type: 'auth', api_key: a.key });
    c.send({ type: 'subscribe', channels: ['ticker'] });
    c.send({ type: 'ping' });
    await c.waitFor((x) => x.type === 'pong');
    expect(c.messages.map((x) => x.type)).toEqual(['auth_ok', 'subscribed', 'pong']);
    expect(c.closed).toBeNull();
    await c.close();
  });

  it('the default burst (2 x WS_MAX_SUBSCRIPTIONS + 50) takes auth, a subscribe and a resubscribe per channel', async () => {
    // WS_MAX_SUBSCRIPTIONS is 8 here: a burst of 66.
    const c = await WsClient.connect(svc.baseUrl);
    c.send({ type: 'auth', api_key: a.key });
    for (let round = 0; round < 2; round++) {
      for (const ch of ALL) c.send({ type: 'subscribe', channels: [ch] });
    }
    const pings = 66 - 1 - 2 * ALL.length;
    for (let i = 0; i < pings; i++) c.send({ type: 'ping' });
    await c.waitForCount((x) => x.type === 'pong', pings);
    expect(c.messages.filter((x) => x.type === 'subscribed')).toHaveLength(2 * ALL.length);
    expect(c.messages.filter((x) => x.type === 'error')).toEqual([]);
    // One more is past it.
    const from = c.mark();
    c.send({ type: 'ping' });
    expect(await c.waitFor((x) => x.type === 'error', 3000, from)).toMatchObject({
      code: 'RATE_LIMITED',
      details: { limit_per_second: 20, burst: 66 },
    });
    expect(c.closed).toBeNull();
    await c.close();
  });

  it('subscribe acknowledges, sends the orderbook snapshot; unsubscribe acknowledges', async () => {
    const c = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    const from = c.mark();
    c.send({ type: 'subscribe', channels: [`orderbook:${m.id}`, 'ticker'] });
    const snap = await c.waitFor((x) => x.type === 'event', 3000, from);
    expect(c.messages.slice(from)).toEqual([
      { type: 'subscribed', channels: [`orderbook:${m.id}`, 'ticker'] },
      snap,
    ]);
    // The house quotes 5 levels of 100 each side, 1 cent from the reference (feed stopped).
    expect(snap).toEqual({
      type: 'event',
      channel: `orderbook:${m.id}`,
      seq: 1,
      ts: svc.clock.now(),
      time: svc.clock.nowDate().toISOString(),
      data: {
        kind: 'snapshot',
        bids: [1, 2, 3, 4, 5].map((i) => ({ price: m.reference - i, quantity: 100 })),
        asks: [1, 2, 3, 4, 5].map((i) => ({ price: m.reference + i, quantity: 100 })),
      },
    });
    const u = c.mark();
    c.send({ type: 'unsubscribe', channels: ['ticker', `orderbook:${m.id}`] });
    const ack = await c.waitFor((x) => x.type === 'unsubscribed', 3000, u);
    expect(ack).toEqual({ type: 'unsubscribed', channels: ['ticker', `orderbook:${m.id}`] });
    // Nothing arrives on them any more.
    const after = c.mark();
    await place(svc, a, limit(m, 'BUY', 'YES', m.reference - 10, 1));
    await c.sync();
    expect(c.messages.slice(after)).toEqual([{ type: 'pong' }]);
    await c.close();
  });

  it('a public channel nobody follows any more is forgotten (unsubscribe and close)', async () => {
    // A market no other test here subscribes to, so the count starts without its channels.
    const q = TRADABLE[TRADABLE.length - 1];
    const hub = svc.app.get(RealtimeHub);
    const before = hub.followedChannels;
    const c = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    const d = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    c.send({ type: 'subscribe', channels: [`trades:${q.id}`, `orderbook:${q.id}`, 'orders'] });
    d.send({ type: 'subscribe', channels: [`trades:${q.id}`] });
    await c.waitFor((x) => x.type === 'subscribed');
    await d.waitFor((x) => x.type === 'subscribed');
    expect(hub.followedChannels).toBe(before + 2); // private channels are not public sets
    c.send({ type: 'unsubscribe', channels: [`orderbook:${q.id}`] });
    await c.waitFor((x) => x.type === 'unsubscribed');
    expect(hub.followedChannels).toBe(before + 1);
    await d.close();
    await sleep(50);
    expect(hub.followedChannels).toBe(before + 1); // c still follows trades
    await c.close();
    // The server drops the connection once its socket is gone: waited for, not a fixed 50 ms.
    expect(await becomes(() => hub.followedChannels, before)).toBe(before);
  });

  it('a sandbox reset tells the private channels: orders account.reset, flat positions, one wallet RESET', async () => {
    // Markets no other test here touches: the IOC takes house liquidity.
    const q = TRADABLE[2];
    const p = TRADABLE[3];
    const t = await trader(svc, 'reset-stream@orders.test', {
      scopes: [...WS_SCOPES, 'wallet:write'],
    });
    const resting = await place(svc, t, limit(q, 'BUY', 'YES', q.reference - 10, 2));
    await place(svc, t, limit(p, 'BUY', 'YES', p.reference + 5, 1, { time_in_force: 'IOC' }));
    const c = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    expect((await c.subscribe(['orders', 'positions', 'wallet'])).type).toBe('subscribed');
    const from = c.mark();
    const res = await as(t, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(res.status).toBe(200);
    await c.waitFor((x) => x.type === 'event' && x.channel === 'wallet', 3000, from);
    await c.sync();
    const got = c.messages.slice(from).filter((x) => x.type === 'event');
    const on = (channel: string) => got.filter((x) => x.channel === channel).map((x) => x.data);
    expect(on('orders')).toEqual([{ event: 'account.reset', cancelled_orders: 1 }]);
    const flat = (marketId: string) => ({
      market_id: marketId,
      side: null,
      quantity: 0,
      average_price: null,
      cost_basis_cents: 0,
      unrealized_pnl_cents: 0,
      mark_price: expect.any(Number),
      yes: 0,
      no: 0,
      yes_cost_cents: 0,
      no_cost_cents: 0,
      realized_pnl_cents: 0,
    });
    expect(on('positions')).toEqual(expect.arrayContaining([flat(q.id), flat(p.id)]));
    expect(on('positions')).toHaveLength(2);
    const wallet = on('wallet');
    expect(wallet).toHaveLength(1);
    expect(wallet[0]).toMatchObject({
      reason: 'RESET',
      balance_cents: 1_000_000,
      reserved_cents: 0,
      available_cents: 1_000_000,
    });
    const stillOpen = await as(t, `${svc.api}/orders?status=OPEN`);
    expect(stillOpen.body.data.map((o: { id: string }) => o.id)).not.toContain(resting.id);

    // Paper money added by the sandbox is FUNDING on the stream, as in the ledger (not a DEPOSIT
    // of real money).
    const funded = c.mark();
    const fund = await as(t, `${svc.api}/sandbox/wallet/fund`, {
      method: 'POST',
      json: { amount_cents: 5 },
    });
    expect(fund.status).toBe(201);
    expect(fund.body.transaction.type).toBe('FUNDING');
    const msg = await c.waitFor((x) => x.type === 'event' && x.channel === 'wallet', 3000, funded);
    expect(msg.data).toMatchObject({ reason: 'FUNDING', delta_cents: 5, balance_cents: 1_000_005 });

    // Only the reserved amount moves when an order rests, is amended or cancelled: one
    // RESERVATION message per command, matching GET /wallet each time.
    const walletNow = async () => (await as(t, `${svc.api}/wallet`)).body;
    const next = async (from: number) =>
      (await c.waitFor((x) => x.type === 'event' && x.channel === 'wallet', 3000, from)).data;
    let at = c.mark();
    const rest = await place(svc, t, limit(q, 'BUY', 'YES', q.reference - 10, 4));
    const rested = await next(at);
    expect(rested).toEqual({
      balance_cents: 1_000_005,
      delta_cents: 0,
      reason: 'RESERVATION',
      reserved_cents: 4 * (q.reference - 10),
      available_cents: 1_000_005 - 4 * (q.reference - 10),
    });
    expect(await walletNow()).toMatchObject({
      reserved_cents: rested.reserved_cents,
      available_cents: rested.available_cents,
    });
    at = c.mark();
    expect(
      (await as(t, `${svc.api}/orders/${rest.id}`, { method: 'PATCH', json: { quantity: 2 } }))
        .status,
    ).toBe(200);
    expect(await next(at)).toMatchObject({
      reason: 'RESERVATION',
      reserved_cents: 2 * (q.reference - 10),
    });
    at = c.mark();
    expect((await as(t, `${svc.api}/orders/${rest.id}`, { method: 'DELETE' })).status).toBe(200);
    expect(await next(at)).toMatchObject({ reason: 'RESERVATION', reserved_cents: 0 });
    expect((await walletNow()).reserved_cents).toBe(0);
    expect(stillOpen.body.data).toEqual([]);
    await c.close();
  });

  it('a resolution on the stream: cancelled orders, settled position, payout, RESOLVED ticker, empty book', async () => {
    const x = TRADABLE[4]; // resolved here: no other test in this file uses it
    const t = await trader(svc, 'resolve-stream@orders.test', { scopes: WS_SCOPES });
    const resting = await place(svc, t, limit(x, 'BUY', 'YES', x.reference - 10, 2));
    const bought = await place(
      svc,
      t,
      limit(x, 'BUY', 'YES', x.reference + 5, 1, { time_in_force: 'IOC' }),
    );
    expect(bought.status).toBe('FILLED');
    const c = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    const channels = ['orders', 'positions', 'wallet', 'ticker', `orderbook:${x.id}`];
    const from = c.mark();
    expect((await c.subscribe(channels)).type).toBe('subscribed');
    await c.waitFor((m) => m.type === 'event' && m.channel === `orderbook:${x.id}`, 3000, from);
    const res = await as(t, `${svc.api}/sandbox/markets/${x.id}/resolve`, {
      method: 'POST',
      json: { outcome: 'YES' },
    });
    expect(res.status).toBe(200);
    await c.waitFor((m) => m.type === 'event' && m.channel === 'ticker', 3000, from);
    await c.sync();
    const on = (ch: string) => c.events(ch, from).map((m) => m.data as Record<string, unknown>);
    expect(on('orders')).toEqual([
      expect.objectContaining({
        event: 'order.cancelled',
        order_id: resting.id,
        cancel_reason: 'MARKET_RESOLVED',
      }),
    ]);
    expect(on('positions')).toEqual([
      {
        market_id: x.id,
        yes: 0,
        no: 0,
        yes_cost_cents: 0,
        no_cost_cents: 0,
        side: null,
        quantity: 0,
        average_price: null,
        cost_basis_cents: 0,
        unrealized_pnl_cents: 0,
        mark_price: expect.any(Number),
        settled: { outcome: 'YES', payout_cents: 100 },
        realized_pnl_cents: 100 - (bought.average_fill_price as number),
      },
    ]);
    expect(on('wallet')).toContainEqual(
      expect.objectContaining({ reason: 'SETTLEMENT', delta_cents: 100, reserved_cents: 0 }),
    );
    expect(on('ticker')).toContainEqual(
      expect.objectContaining({ market_id: x.id, status: 'RESOLVED' }),
    );
    const book = new ClientBook();
    for (const m of c.events(`orderbook:${x.id}`, from)) book.apply(m);
    expect(book.levels()).toEqual({ bids: [], asks: [] });
    const rest = await as(t, `${svc.api}/markets/${x.id}/orderbook`);
    expect([rest.body.bids, rest.body.asks]).toEqual([[], []]);
    await c.close();
  });

  it('an unknown channel or market: UNKNOWN_CHANNEL, nothing subscribed, the connection stays open', async () => {
    const c = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    for (const [channels, channel] of [
      [['nope'], 'nope'],
      [['ticker', 'orderbook:mkt_doesnotexist'], 'orderbook:mkt_doesnotexist'],
      [['trades:not-an-id'], 'trades:not-an-id'],
    ] as const) {
      const err = await c.subscribe([...channels]);
      expect(err).toMatchObject({
        type: 'error',
        code: 'UNKNOWN_CHANNEL',
        message: expect.any(String),
        details: { channel },
      });
    }
    // The valid channel of a failed request was not subscribed either.
    const from = c.mark();
    await place(svc, a, limit(m, 'BUY', 'YES', m.reference - 10, 1));
    await c.sync();
    expect(c.messages.slice(from)).toEqual([{ type: 'pong' }]);
    expect(c.closed).toBeNull();
    expect(await c.subscribe(['ticker'])).toEqual({ type: 'subscribed', channels: ['ticker'] });
    await c.close();
  });

  it('malformed subscribe and unknown message types are error messages, not closes', async () => {
    const c = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    for (const bad of [
      { type: 'subscribe' },
      { type: 'subscribe', channels: [] },
      { type: 'subscribe', channels: [1] },
      { type: 'unsubscribe', channels: 'ticker' },
      { type: 'hello' },
    ]) {
      const from = c.mark();
      c.send(bad);
      const err = await c.waitFor((x) => x.type === 'error', 3000, from);
      expect(err.code).toBe('BAD_MESSAGE');
    }
    const from = c.mark();
    c.sendRaw('{not json');
    expect((await c.waitFor((x) => x.type === 'error', 3000, from)).code).toBe('BAD_MESSAGE');
    await c.sync();
    expect(c.closed).toBeNull();
    await c.close();
  });

  it('the market channels need only the websocket scope, as published (REST reads need markets:read)', async () => {
    const wsOnly = await trader(svc, undefined, { scopes: ['websocket'] });
    const rest = await as(wsOnly, `${svc.api}/markets/${m.id}/orderbook`);
    expect(rest.status).toBe(403);
    expect(rest.body.error.code).toBe('INSUFFICIENT_SCOPE');
    const c = await WsClient.authed(svc.baseUrl, { api_key: wsOnly.key });
    const channels = ['ticker', `orderbook:${m.id}`, `trades:${m.id}`];
    expect(await c.subscribe(channels)).toEqual({ type: 'subscribed', channels });
    const snap = await c.waitFor((x) => x.type === 'event' && x.data?.kind === 'snapshot');
    expect(snap.channel).toBe(`orderbook:${m.id}`);
    expect(c.closed).toBeNull();
    await c.close();
  });

  it('a private channel without its scope: INSUFFICIENT_SCOPE error; the connection stays open', async () => {
    const ro = await trader(svc, undefined, { scopes: ['websocket', 'markets:read'] });
    const c = await WsClient.authed(svc.baseUrl, { api_key: ro.key });
    for (const [channel, scope] of [
      ['orders', 'orders:read'],
      ['fills', 'orders:read'],
      ['positions', 'wallet:read'],
      ['wallet', 'wallet:read'],
    ]) {
      const err = await c.subscribe([channel]);
      expect(err).toEqual({
        type: 'error',
        code: 'INSUFFICIENT_SCOPE',
        message: expect.any(String),
        details: { required_scopes: [scope] },
      });
    }
    // Public channels need only websocket.
    expect(await c.subscribe(['ticker', `trades:${m.id}`])).toEqual({
      type: 'subscribed',
      channels: ['ticker', `trades:${m.id}`],
    });
    await c.sync();
    expect(c.closed).toBeNull();
    await c.close();
  });

  it('subscription limit: SUBSCRIPTION_LIMIT, nothing of the request subscribed, open', async () => {
    const c = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    const markets = TRADABLE.slice(0, 5).map((x) => `trades:${x.id}`);
    expect((await c.subscribe([...markets, 'ticker'])).type).toBe('subscribed'); // 6 of 8
    // Re-subscribing what is already held does not count again.
    expect((await c.subscribe(['ticker', markets[0]])).type).toBe('subscribed');
    const err = await c.subscribe(['orders', 'fills', 'wallet']); // 9 > 8
    expect(err).toEqual({
      type: 'error',
      code: 'SUBSCRIPTION_LIMIT',
      message: expect.any(String),
      details: { limit: 8 },
    });
    // None of the three was subscribed: an order gives no `orders` event.
    const from = c.mark();
    await place(svc, a, limit(m, 'BUY', 'YES', m.reference - 10, 1));
    await c.sync();
    expect(c.events('orders', from)).toEqual([]);
    // Unsubscribing frees room.
    c.send({ type: 'unsubscribe', channels: [markets[0]] });
    expect((await c.subscribe(['orders', 'fills'])).type).toBe('subscribed'); // 7
    expect((await c.subscribe(['wallet'])).type).toBe('subscribed'); // 8
    expect(c.closed).toBeNull();
    await c.close();
  });

  it('ping -> pong', async () => {
    const c = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    const from = c.mark();
    c.send({ type: 'ping' });
    await c.waitFor((x) => x.type === 'pong', 3000, from);
    expect(c.messages.slice(from)).toEqual([{ type: 'pong' }]);
    await c.close();
  });

  it('seq rises by exactly 1 per channel per connection; events carry the commit time', async () => {
    const b = await trader(svc, 'responder@sandbox.test', { scopes: WS_SCOPES });
    const c1 = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    const c2 = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    expect((await c1.subscribe(ALL)).type).toBe('subscribed');
    await c1.waitFor((x) => x.type === 'event' && x.data?.kind === 'snapshot');
    // c2 subscribes later and to fewer channels: its seq counts start at 1 on its own.
    const r = m.reference;
    // a's bid at r is the best bid (the house bids r-1..r-5).
    const resting = await place(svc, a, limit(m, 'BUY', 'YES', r, 4));
    expect((await c2.subscribe([`orderbook:${m.id}`, 'orders'])).type).toBe('subscribed');
    const more = await Promise.all(
      [r - 7, r - 6, r - 5].map((p) => place(svc, a, limit(m, 'BUY', 'YES', p, 2))),
    );
    await place(svc, a, limit(m, 'BUY', 'YES', r + 2, 150)); // takes 100 @r+1 and 50 @r+2
    await place(svc, b, limit(m, 'SELL', 'YES', r, 2)); // b takes 2 of a's bid at r
    expect((await cancel(svc, a, resting.id)).status).toBe(200);
    const amend = await as(a, `${svc.api}/orders/${more[0].id}`, {
      method: 'PATCH',
      json: { quantity: 1 },
    });
    expect(amend.status).toBe(200);
    await c1.sync();
    await c2.sync();
    for (const c of [c1, c2]) {
      const s = seqs(c);
      for (const [channel, list] of s) {
        expect({ channel, list }).toEqual({
          channel,
          list: Array.from({ length: list.length }, (_, i) => i + 1),
        });
      }
    }
    const s1 = seqs(c1);
    for (const ch of ALL) expect((s1.get(ch) ?? []).length).toBeGreaterThan(0);
    expect(seqs(c2).get('orders')!.length).toBeLessThan(s1.get('orders')!.length);
    // Every event carries the commit time on the service clock: epoch ms, and ISO-8601 UTC.
    for (const e of c1.messages.filter((x) => x.type === 'event')) {
      expect(e.ts).toBe(svc.clock.now());
      expect(e.time).toBe(svc.clock.nowDate().toISOString());
      expect(Object.keys(e)).toEqual(['type', 'channel', 'seq', 'ts', 'time', 'data']);
    }
    // Exact shapes of one message per channel kind.
    const delta = c1.events(`orderbook:${m.id}`).find((e) => e.data.kind === 'delta')!;
    expect(delta).toEqual({
      type: 'event',
      channel: `orderbook:${m.id}`,
      seq: 2,
      ts: svc.clock.now(),
      time: svc.clock.nowDate().toISOString(),
      data: { kind: 'delta', side: 'bids', price: r, quantity: 4 },
    });
    const trade = c1.events(`trades:${m.id}`)[0];
    expect(trade.data).toEqual({
      id: expect.stringMatching(/^fil_/),
      market_id: m.id,
      price: r + 1,
      no_price: 99 - r,
      quantity: 100,
      taker_side: 'YES',
      source: 'BOOK',
      created_at: new Date(svc.clock.now()).toISOString(),
    });
    // The stream's trade is the object GET /markets/{id}/trades answers, keys in the same order.
    const rest = await as(a, `${svc.api}/markets/${m.id}/trades`);
    const same = rest.body.data.find((t: { id: string }) => t.id === trade.data.id);
    expect(same).toEqual(trade.data);
    expect(Object.keys(same)).toEqual(Object.keys(trade.data));
    const tick = c1.events('ticker').at(-1)!;
    expect(tick.data).toEqual({
      market_id: m.id,
      status: 'OPEN',
      best_bid: expect.any(Number),
      best_ask: expect.any(Number),
      last_price: r,
      volume: expect.any(Number),
    });
    const accepted = c1.events('orders').find((e) => e.data.order_id === resting.id)!;
    expect(accepted.data).toEqual({
      event: 'order.accepted',
      order_id: resting.id,
      client_order_id: null,
      market_id: m.id,
      action: 'BUY',
      side: 'YES',
      type: 'LIMIT',
      price: r,
      quantity: 4,
      status: 'OPEN',
      self_trade_prevention: 'CANCEL_TAKER',
    });
    const cancelled = c1.events('orders').find((e) => e.data.event === 'order.cancelled')!;
    expect(cancelled.data).toEqual({
      event: 'order.cancelled',
      order_id: resting.id,
      status: 'CANCELLED',
      cancel_reason: expect.any(String),
      filled_quantity: 2,
    });
    const wallet = c1.events('wallet')[0];
    expect(wallet.data).toEqual({
      balance_cents: expect.any(Number),
      delta_cents: expect.any(Number),
      reason: expect.any(String),
      reserved_cents: expect.any(Number),
      available_cents: expect.any(Number),
    });
    const amended = c1.events('orders').find((e) => e.data.event === 'order.amended')!;
    expect(amended.data).toEqual({
      event: 'order.amended',
      order_id: more[0].id,
      price: r - 7,
      quantity: 1,
      remaining_quantity: 1,
      requeued: false,
    });
    const pos = c1.events('positions')[0];
    expect(pos.data).toMatchObject({ market_id: m.id, yes: expect.any(Number) });
    await c1.close();
    await c2.close();
  });

  it('resubscribing gives a fresh snapshot with seq 1, then deltas from 2', async () => {
    const c = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    const ch = `orderbook:${m.id}`;
    expect((await c.subscribe([ch])).type).toBe('subscribed');
    await c.waitFor((x) => x.type === 'event');
    await place(svc, a, limit(m, 'BUY', 'YES', m.reference - 12, 1));
    await place(svc, a, limit(m, 'BUY', 'YES', m.reference - 13, 1));
    await c.sync();
    expect(c.events(ch).map((e) => [e.seq, e.data.kind])).toEqual([
      [1, 'snapshot'],
      [2, 'delta'],
      [3, 'delta'],
    ]);
    const from = c.mark();
    expect((await c.subscribe([ch])).type).toBe('subscribed');
    await place(svc, a, limit(m, 'BUY', 'YES', m.reference - 14, 1));
    await c.sync();
    const again = c.events(ch, from);
    expect(again.map((e) => [e.seq, e.data.kind])).toEqual([
      [1, 'snapshot'],
      [2, 'delta'],
    ]);
    const bids = (again[0].data.bids as { price: number }[]).map((l) => l.price);
    expect(bids).toEqual(expect.arrayContaining([m.reference - 12, m.reference - 13]));
    expect(bids).not.toContain(m.reference - 14);
    expect(again[1].data).toEqual({
      kind: 'delta',
      side: 'bids',
      price: m.reference - 14,
      quantity: 1,
    });
    await c.close();
  });

  it('heartbeat: a client that does not answer pings is closed with 4000; others stay', async () => {
    const dead = await WsClient.authed(svc.baseUrl, { api_key: a.key }, { autoPong: false });
    const alive = await WsClient.authed(svc.baseUrl, { api_key: a.key });
    const idle = await WsClient.connect(svc.baseUrl, { autoPong: false }); // not even authed
    const closed = await dead.waitClose(3000);
    expect(closed.code).toBe(4000);
    // It was pinged (counted from the socket's creation) and did not answer.
    expect(dead.pings).toBeGreaterThanOrEqual(1);
    // Four more heartbeats (200 ms each) counted as they reach the answering client, rather than
    // 800 ms of wall time a loaded machine may fill with fewer.
    const pinged = alive.pings;
    const deadline = Date.now() + 5000;
    while (alive.pings < pinged + 4 && Date.now() < deadline) await sleep(20);
    expect(alive.pings).toBeGreaterThanOrEqual(pinged + 4);
    await alive.sync();
    expect(alive.closed).toBeNull();
    expect((await idle.waitClose(3000)).code).toBe(4000);
    await alive.close();
  });
});

describe('realtime: per-IP connection limit', () => {
  let svc: Running;

  beforeAll(async () => {
    svc = await startOrdersApp({ env: { WS_MAX_CONNECTIONS_PER_IP: '3' } });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('the connection over the limit gets CONNECTION_LIMIT and close 4429; a slot frees on close', async () => {
    const t = await trader(svc, undefined, { scopes: WS_SCOPES });
    const open = [
      await WsClient.authed(svc.baseUrl, { api_key: t.key }),
      await WsClient.authed(svc.baseUrl, { api_key: t.key }),
      await WsClient.connect(svc.baseUrl), // unauthenticated connections count too
    ];
    const over = await WsClient.connect(svc.baseUrl);
    expect((await over.waitClose()).code).toBe(4429);
    expect(over.messages).toEqual([
      { type: 'error', code: 'CONNECTION_LIMIT', message: expect.any(String) },
    ]);
    for (const c of open) expect(c.closed).toBeNull();
    await open[2].close();
    await sleep(50);
    const next = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    await next.sync();
    expect(next.closed).toBeNull();
    const over2 = await WsClient.connect(svc.baseUrl);
    expect((await over2.waitClose()).code).toBe(4429);
    for (const c of [open[0], open[1], next]) await c.close();
  });
});

describe('realtime: per-IP connection limit behind a trusted proxy (TRUSTED_PROXIES)', () => {
  let svc: Running;

  beforeAll(async () => {
    svc = await startOrdersApp({
      env: { WS_MAX_CONNECTIONS_PER_IP: '2', TRUSTED_PROXIES: '127.0.0.1' },
    });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('counts the client named by X-Forwarded-For, as the HTTP per-IP limits do', async () => {
    const t = await trader(svc, undefined, { scopes: WS_SCOPES });
    const from = (ip?: string) =>
      WsClient.authed(
        svc.baseUrl,
        { api_key: t.key },
        { headers: ip === undefined ? {} : { 'x-forwarded-for': ip } },
      );
    // Five clients behind the same proxy address: each has its own allowance of 2.
    const open = [
      await from('203.0.113.1'),
      await from('203.0.113.1'),
      await from('203.0.113.2'),
      await from('203.0.113.2'),
      await from('203.0.113.3'),
    ];
    const over = await WsClient.connect(svc.baseUrl, {
      headers: { 'x-forwarded-for': '203.0.113.1' },
    });
    expect((await over.waitClose()).code).toBe(4429);
    expect(over.messages).toEqual([
      { type: 'error', code: 'CONNECTION_LIMIT', message: expect.any(String) },
    ]);
    // The proxy's own connections (no header) are counted as the proxy.
    const direct = [await from(), await from()];
    const directOver = await WsClient.connect(svc.baseUrl);
    expect((await directOver.waitClose()).code).toBe(4429);
    for (const c of [...open, ...direct]) {
      await c.sync();
      expect(c.closed).toBeNull();
    }
    for (const c of [...open, ...direct]) await c.close();
  });
});

/** A message-shape helper kept here for readability of the assertions above. */
export type { WsMessage };

describe('realtime: per-connection message budget (WS_MESSAGE_RATE, WS_MESSAGE_BURST)', () => {
  let svc: Running;
  let t: Trader;

  beforeAll(async () => {
    svc = await startOrdersApp({ env: { WS_MESSAGE_RATE: '5', WS_MESSAGE_BURST: '10' } });
    t = await trader(svc, undefined, { scopes: WS_SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('messages past the budget are not handled; the first is answered RATE_LIMITED; it refills with time', async () => {
    const c = await WsClient.authed(svc.baseUrl, { api_key: t.key }); // auth: 1 of 10
    const from = c.mark();
    for (let i = 0; i < 9; i++) c.send({ type: 'ping' });
    // Past the burst: none of these is handled, and the client is told once.
    c.send({ type: 'subscribe', channels: ['ticker'] });
    c.send({ type: 'ping' });
    c.send({ type: 'ping' });
    await c.waitFor((x) => x.type === 'error', 3000, from);
    await sleep(100);
    expect(c.messages.slice(from)).toEqual([
      ...Array.from({ length: 9 }, () => ({ type: 'pong' })),
      {
        type: 'error',
        code: 'RATE_LIMITED',
        message: expect.stringContaining('More than 5 messages a second (burst 10)'),
        details: { retry_after_ms: 200, limit_per_second: 5, burst: 10 },
      },
    ]);
    expect(c.closed).toBeNull();
    // One second refills five messages: the subscribe that was refused goes through now.
    (svc.clock as ManualClock).advance(1000);
    const ack = await c.subscribe(['ticker']);
    expect(ack).toEqual({ type: 'subscribed', channels: ['ticker'] });
    await c.sync();
    expect(c.closed).toBeNull();
    await c.close();
  });

  it('a subscribe is charged a unit per channel (a snapshot each), not one per message', async () => {
    const c = await WsClient.authed(svc.baseUrl, { api_key: t.key }); // auth: 1 of 10
    const books = TRADABLE.slice(0, 4).map((x) => `orderbook:${x.id}`);
    const channels = [...books, `trades:${m.id}`, 'ticker', 'orders', 'fills', 'wallet'];
    expect(channels).toHaveLength(9);
    expect(await c.subscribe(channels)).toEqual({ type: 'subscribed', channels });
    await c.waitForCount((x) => x.type === 'event' && x.data.kind === 'snapshot', 4);
    // Nine channels took the nine units left: the next message waits for the refill.
    const from = c.mark();
    c.send({ type: 'ping' });
    const refused = await c.waitFor((x) => x.type === 'error', 3000, from);
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', details: { retry_after_ms: 200 } });
    (svc.clock as ManualClock).advance(200);
    await c.sync();
    expect(c.closed).toBeNull();
    await c.close();
  });

  it('subscribes sent back to back pay for their channels when handled: past the budget they subscribe nothing', async () => {
    const c = await WsClient.connect(svc.baseUrl);
    const trades = TRADABLE.slice(0, 7).map((x) => `trades:${x.id}`);
    expect(trades).toHaveLength(7);
    const subs = [
      ['ticker', 'orders', 'fills', 'wallet'],
      ['positions', ...trades.slice(0, 3)],
      trades.slice(3, 7),
    ];
    // On arrival: auth, three subscribes and a ping, a unit each (5 of 10 left).
    c.send({ type: 'auth', api_key: t.key });
    for (const channels of subs) c.send({ type: 'subscribe', channels });
    c.send({ type: 'ping' });
    await c.waitFor((x) => x.type === 'pong');
    const refused = {
      type: 'error',
      code: 'RATE_LIMITED',
      message: expect.stringContaining('4 channels are more than the budget has left'),
      // Sending it again needs 4 units (2 left): 400 ms at 5 a second.
      details: { retry_after_ms: 400, limit_per_second: 5, burst: 10, units: 4 },
    };
    // The first pays 3 more (2 left); the next two would need 3 each.
    expect(c.messages).toEqual([
      expect.objectContaining({ type: 'auth_ok' }),
      { type: 'subscribed', channels: subs[0] },
      refused,
      refused,
      { type: 'pong' },
    ]);
    (svc.clock as ManualClock).advance(400);
    expect(await c.subscribe(subs[1])).toEqual({ type: 'subscribed', channels: subs[1] });
    // More channels than the burst can never pass, even on a full budget: no retry_after_ms.
    (svc.clock as ManualClock).advance(2000);
    const eleven = [...trades, 'ticker', 'orders', 'fills', 'wallet'];
    expect(await c.subscribe(eleven)).toEqual({
      type: 'error',
      code: 'RATE_LIMITED',
      message: expect.stringContaining('11 channels exceed the burst of 10'),
      details: { limit_per_second: 5, burst: 10, units: 11 },
    });
    await c.close();
  });

  it('a client that keeps sending far past its budget is closed 4429; other connections are not', async () => {
    const other = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    const flood = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    for (let i = 0; i < 40; i++) flood.send({ type: 'ping' });
    expect(await flood.waitClose()).toEqual({ code: 4429, reason: 'message rate limit' });
    // Each answer in its turn: the nine pings the budget let through, the first refusal, then
    // (the eleventh refusal overflowing the burst of forgiveness) the last error and the close.
    expect(flood.messages.slice(1)).toEqual([
      ...Array.from({ length: 9 }, () => ({ type: 'pong' })),
      expect.objectContaining({
        type: 'error',
        code: 'RATE_LIMITED',
        details: expect.objectContaining({ retry_after_ms: 200 }),
      }),
      {
        type: 'error',
        code: 'RATE_LIMITED',
        message: 'Kept sending far past the message budget: connection closed',
        details: { limit_per_second: 5, burst: 10 },
      },
    ]);
    await other.sync();
    expect(other.closed).toBeNull();
    await other.close();
  });

  it('protocol-level pings count too: a ping flood is closed 4429 without a pong per ping', async () => {
    const flood = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    let pongs = 0;
    flood.ws.on('pong', () => pongs++);
    for (let i = 0; i < 40; i++) flood.ws.ping();
    expect((await flood.waitClose()).code).toBe(4429);
    expect(pongs).toBeLessThanOrEqual(9);
  });
});

describe('realtime: a sandbox reset after a restart', () => {
  it('names every market the account was in, a closed position with nothing realized included', async () => {
    const q = TRADABLE[4];
    const R = q.reference;
    let svc = await startOrdersApp();
    try {
      const a = await trader(svc, 'closed-flat@orders.test', {
        scopes: [...WS_SCOPES, 'wallet:write'],
      });
      const b = await trader(svc, 'bidder@orders.test', { scopes: WS_SCOPES });
      // Inside the house's spread (R-1 / R+1): A buys 1 from B's ask at R and sells it to B's
      // bid at R: flat, nothing realized.
      const ioc = { time_in_force: 'IOC' as const };
      await place(svc, b, limit(q, 'SELL', 'YES', R, 1));
      expect((await place(svc, a, limit(q, 'BUY', 'YES', R, 1, ioc))).filled_quantity).toBe(1);
      await place(svc, b, limit(q, 'BUY', 'YES', R, 1));
      expect((await place(svc, a, limit(q, 'SELL', 'YES', R, 1, ioc))).filled_quantity).toBe(1);
      await svc.close({ keepData: true });
      svc = await startOrdersApp({ dataDir: svc.dataDir });
      const c = await WsClient.authed(svc.baseUrl, { api_key: a.key });
      expect((await c.subscribe(['positions', 'wallet'])).type).toBe('subscribed');
      const from = c.mark();
      expect((await as(a, `${svc.api}/sandbox/reset`, { method: 'POST' })).status).toBe(200);
      await c.waitFor((x) => x.type === 'event' && x.channel === 'wallet', 3000, from);
      await c.sync();
      const flat = c.messages
        .slice(from)
        .filter((x) => x.type === 'event' && x.channel === 'positions')
        .map((x) => x.data.market_id);
      expect(flat).toEqual([q.id]);
      await c.close();
    } finally {
      await svc.close();
    }
  });
});
