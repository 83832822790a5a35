import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Running } from '../support/harness.js';
import {
  as,
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
    svc = await startOrdersApp({ env: { WS_MAX_BUFFERED_BYTES: '1024' } });
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
});
