import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { logLines, type Running } from '../support/harness.js';
import {
  as,
  getOrder,
  keyFor,
  limit,
  ORDER_SCOPES,
  place,
  startOrdersApp,
  trader,
  TRADABLE,
  type Trader,
} from '../support/orders.js';
import { RealtimeHub } from '../../src/modules/realtime/realtime-hub.service.js';
import { ClientBook, sleep, WsClient } from '../support/ws.js';

const WS_SCOPES = [...ORDER_SCOPES, 'websocket'];
const m = TRADABLE[0];
const BOOK = `orderbook:${m.id}`;
const CHANNELS = [BOOK, `trades:${m.id}`, 'ticker', 'orders', 'wallet'];

/** Ids of the hub's connections the server has closed (its own close, before the TCP goes). */
function closedByServer(svc: Running): string[] {
  const hub = svc.app.get(RealtimeHub) as unknown as {
    connections: Set<{ id: string; closed: boolean }>;
  };
  return [...hub.connections].filter((c) => c.closed).map((c) => c.id);
}

/**
 * Slow consumers (WS_MAX_BUFFERED_BYTES = 1024): a client that stops reading is closed with 4008
 * once its send buffer passes the bound, instead of the server buffering without end; the others
 * keep being served.
 */
describe('realtime: slow consumer', () => {
  let svc: Running;
  let t: Trader;

  beforeAll(async () => {
    // The ping floods below are far past the default message budget, whose own test is in
    // realtime-protocol: here they are let through to reach the send-buffer bound.
    svc = await startOrdersApp({
      env: {
        WS_MAX_BUFFERED_BYTES: '1024',
        // A write per fan-out, as without coalescing: the loopback kernel buffers of a client
        // that stopped reading take far more bytes in few large writes than in many small ones
        // (they count each segment's overhead), so with coalesced writes the server's own buffer
        // only starts growing, and the bound is only reached, after many times the cycles below.
        // The bound is judged the same way in a coalesced batch (connection.spec.ts).
        WS_COALESCE_MS: '0',
        WS_MESSAGE_RATE: '1000000',
        WS_MESSAGE_BURST: '1000000',
      },
    });
    t = await trader(svc, undefined, { scopes: WS_SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('a client that stops reading is closed with 4008; a reading client keeps getting every update', async () => {
    const slow = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    const fast = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    expect((await slow.subscribe(CHANNELS)).type).toBe('subscribed');
    expect((await fast.subscribe([BOOK])).type).toBe('subscribed');
    await slow.waitFor((x) => x.type === 'event');
    await fast.waitFor((x) => x.type === 'event');
    slow.ws.pause(); // stops reading its socket: the kernel buffers fill, then the server's

    // Book updates: 20 resting bids at distinct levels below the house, then cancel them all.
    const legs = Array.from({ length: 20 }, (_, i) => limit(m, 'BUY', 'YES', 1 + i, 1));
    let cycles = 0;
    const t0 = Date.now();
    while (closedByServer(svc).length === 0) {
      if (Date.now() - t0 > 20_000) throw new Error(`not closed after ${cycles} cycles`);
      const b = await as(t, `${svc.api}/orders/batch`, { method: 'POST', json: { orders: legs } });
      expect(b.status).toBe(200);
      const c = await as(t, `${svc.api}/orders/cancel-all`, {
        method: 'POST',
        json: { market_id: m.id },
      });
      expect(c.status).toBe(200);
      cycles++;
    }
    expect(closedByServer(svc)).toHaveLength(1);
    // More updates after the close: the server no longer queues anything for the slow client.
    for (let i = 0; i < 5; i++) {
      await as(t, `${svc.api}/orders/batch`, { method: 'POST', json: { orders: legs } });
      await as(t, `${svc.api}/orders/cancel-all`, { method: 'POST', json: { market_id: m.id } });
    }

    // The reading client got every update, in order, and still does.
    await fast.sync(10_000);
    const book = new ClientBook();
    for (const e of fast.events(BOOK)) book.apply(e);
    expect(book.deltas).toBe((cycles + 5) * 40);
    const late = await place(svc, t, limit(m, 'BUY', 'YES', 2, 3));
    await fast.waitFor((x) => x.type === 'event' && x.data?.price === 2 && x.data?.quantity === 3);
    expect(fast.closed).toBeNull();
    expect(late.status).toBe('OPEN');

    // The slow client, once it reads again, finds an in-order prefix and then the 4008 close.
    slow.ws.resume();
    const closed = await slow.waitClose(15_000);
    expect(closed).toEqual({ code: 4008, reason: expect.stringContaining('slow consumer') });
    const slowBook = new ClientBook();
    for (const e of slow.events(BOOK)) slowBook.apply(e); // throws on a seq gap
    expect(slowBook.deltas).toBeGreaterThan(0);
    expect(slowBook.deltas).toBeLessThan(book.deltas);
    await sleep(100);
    expect(closedByServer(svc)).toEqual([]); // the closed connection was dropped

    // New connections are served.
    const again = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    expect((await again.subscribe([BOOK])).type).toBe('subscribed');
    await again.close();
    await fast.close();
  }, 45_000);

  it('a client flooding protocol pings without reading its pongs is closed with 4008 too', async () => {
    const flood = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    let pongs = 0;
    flood.ws.on('pong', () => pongs++);
    flood.ws.pause();
    // ws's own automatic pong would queue these without limit; the server answers them within
    // the send-buffer bound instead.
    const payload = Buffer.alloc(125, 0x61);
    const t0 = Date.now();
    while (closedByServer(svc).length === 0) {
      if (Date.now() - t0 > 20_000) throw new Error('not closed');
      for (let i = 0; i < 2000; i++) flood.ws.ping(payload);
      await sleep(5);
    }
    flood.ws.resume();
    const closed = await flood.waitClose(15_000);
    expect(closed).toEqual({ code: 4008, reason: expect.stringContaining('slow consumer') });
    expect(pongs).toBeGreaterThan(0);
  }, 45_000);

  it("a slow consumer stops keeping its key's orders alive when the server closes it, not when it reads again", async () => {
    // Cancel-on-disconnect exists for exactly this client: hung, not reading. Its 4008 close
    // frame waits behind what it did not read, so its socket may stay open until the heartbeat.
    const k = await keyFor(svc, t.email, t.token, { scopes: WS_SCOPES });
    const cod = (method: 'GET' | 'POST', json?: unknown) =>
      as(k, `${svc.api}/orders/cancel-on-disconnect`, { method, json });
    expect((await cod('POST', { grace_seconds: 0 })).status).toBe(200);
    const resting = await place(svc, k, limit(m, 'BUY', 'YES', 4, 1));
    const hung = await WsClient.authed(svc.baseUrl, { api_key: k.key });
    expect((await cod('GET')).body.connections).toBe(1);
    hung.ws.pause();
    const payload = Buffer.alloc(125, 0x62);
    const t0 = Date.now();
    while (closedByServer(svc).length === 0) {
      if (Date.now() - t0 > 20_000) throw new Error('not closed');
      for (let i = 0; i < 2000; i++) hung.ws.ping(payload);
      await sleep(5);
    }
    // Released at once: no connection keeps the key alive, and the grace (0 s) ran out.
    expect((await cod('GET')).body).toMatchObject({ enabled: true, connections: 0 });
    let order = await getOrder(svc, k, resting.id);
    for (const t1 = Date.now(); order.status === 'OPEN' && Date.now() - t1 < 3000;) {
      await sleep(50);
      order = await getOrder(svc, k, resting.id);
    }
    expect(order).toMatchObject({ status: 'CANCELLED', cancel_reason: 'CANCEL_ON_DISCONNECT' });
    // All while the socket is still open on the server's side.
    expect(closedByServer(svc)).toHaveLength(1);
    expect(hung.closed).toBeNull();
    hung.ws.resume();
    expect((await hung.waitClose(15_000)).code).toBe(4008);
  }, 45_000);

  it('a message over 64 KiB closes the connection with 1009; a large one under it is answered', async () => {
    const c = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    c.sendRaw(`{"type":"ping","pad":"${'x'.repeat(60_000)}"}`);
    await c.waitFor((x) => x.type === 'pong');
    expect(c.closed).toBeNull();
    c.sendRaw('x'.repeat(64 * 1024 + 1));
    expect((await c.waitClose(5000)).code).toBe(1009);
    // Before auth too: nobody can make the server hold a 100 MiB frame.
    const anon = await WsClient.connect(svc.baseUrl);
    anon.sendRaw('y'.repeat(200_000));
    expect((await anon.waitClose(5000)).code).toBe(1009);
  });

  it("a client's malformed frames close it (1002, 1007) without writing an error log line", async () => {
    const before = logLines(svc).filter((l) => Number(l.level) >= 50).length;
    for (const frame of [
      // FIN + RSV1..3 + text, masked, empty: reserved bits set.
      Buffer.from([0xf1, 0x80, 1, 2, 3, 4]),
      // A text frame of invalid UTF-8 (0xff), masked with zeros.
      Buffer.from([0x81, 0x81, 0, 0, 0, 0, 0xff]),
    ]) {
      const c = await WsClient.connect(svc.baseUrl);
      (c.ws as unknown as { _socket: { write(b: Buffer): void } })._socket.write(frame);
      expect([1002, 1007]).toContain((await c.waitClose(5000)).code);
    }
    await sleep(50);
    expect(logLines(svc).filter((l) => Number(l.level) >= 50)).toHaveLength(before);
  });
});
