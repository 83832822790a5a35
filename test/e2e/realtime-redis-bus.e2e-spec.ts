import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../src/config/app-config.js';
import { ConfigService } from '../../src/config/config.service.js';
import { RedisStreamsEventBus } from '../../src/modules/redis/redis-event-bus.js';
import { RedisConnection } from '../../src/modules/redis/redis-connection.js';
import { EventBus, type CommittedEvents } from '../../src/modules/trading/event-bus.js';
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
import { RedisServer } from '../support/redis-server.js';
import { WsClient, type WsMessage } from '../support/ws.js';

const m = TRADABLE[1];

/**
 * REDIS_URL: committed batches go through the Redis stream shared by instances. The app still
 * delivers to its own WebSocket subscribers at once and once; another instance (a bus in this
 * process, on the same Redis) receives its batches; with Redis stopped orders are served and
 * delivered locally, and when Redis returns the others resync and the app's clients get the
 * documented resync (fresh book snapshot, a seq gap on the channels that lost messages).
 */
describe('realtime on the Redis event stream', () => {
  let redis: RedisServer;
  let svc: Running;
  let t: Trader;
  let ws: WsClient;
  let peerConn: RedisConnection;
  let peer: RedisStreamsEventBus;
  const atPeer: CommittedEvents[] = [];

  beforeAll(async () => {
    redis = await RedisServer.start();
    // The peer is one deployment with the app: the same key prefix (by default derived from the
    // app's DATA_DIR, which the peer does not have).
    const shared = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'svc-bus:' };
    svc = await startOrdersApp({ env: shared });
    t = await trader(svc, undefined, { scopes: [...ORDER_SCOPES, 'websocket'] });
    ws = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    expect((await ws.subscribe([`orderbook:${m.id}`, 'fills'])).type).toBe('subscribed');
    // Another instance, as far as the stream can tell.
    peerConn = new RedisConnection(
      new ConfigService(loadConfig(shared), {
        jwtSecret: 'x'.repeat(32),
        encryptionKey: '0'.repeat(64),
      }),
    );
    await peerConn.onModuleInit();
    peer = new RedisStreamsEventBus(peerConn.client!, { maxLen: 1_000 });
    peer.stream.subscribe((b) => atPeer.push(b));
    peer.follow('test');
    await until(() => peer.following('test'));
  });
  afterAll(async () => {
    await ws?.close();
    await svc?.close();
    await peer?.onApplicationShutdown();
    peerConn?.onApplicationShutdown();
    await redis?.stop();
  });

  const fillsOf = (orderId: string, from = 0): WsMessage[] =>
    ws.events('fills', from).filter((x) => x.data.order_id === orderId);
  const tradesAtPeer = (orderId: string): number =>
    atPeer.filter((b) => b.events.some((e) => e.type === 'trade' && e.takerOrderId === orderId))
      .length;

  it('delivers a book delta and a private fill once, and the batch reaches the other instance', async () => {
    const from = ws.mark();
    const take = await place(svc, t, limit(m, 'BUY', 'YES', m.reference + 1, 2));
    expect(take.status).toBe('FILLED');
    await ws.waitFor((x) => x.channel === 'fills' && x.data.order_id === take.id, 3000, from);
    await ws.sync();
    // Once: the app's own entry in the stream is not handed to it a second time.
    expect(fillsOf(take.id, from)).toHaveLength(1);
    const deltas = ws.events(`orderbook:${m.id}`, from).filter((x) => x.data.kind === 'delta');
    expect(deltas.length).toBeGreaterThanOrEqual(1);
    await until(() => tradesAtPeer(take.id) === 1);
    // The app reads the paper world's stream: its WebSocket client is connected there.
    const appBus = svc.app.get(EventBus);
    expect(appBus).toBeInstanceOf(RedisStreamsEventBus);
    expect((appBus as RedisStreamsEventBus).following('test')).toBe(true);
    expect((appBus as RedisStreamsEventBus).following('live')).toBe(false);
    const remote = atPeer.find((b) => b.events.some((e) => e.type === 'trade'))!;
    expect(remote).toMatchObject({ environment: 'test', world: 'test', remote: true });
  });

  it("the reader starting to read the world (a resync, nothing lost) sends no snapshot where the world's engine is: the book goes on from the subscriber's own", async () => {
    const appBus = svc.app.get(EventBus) as RedisStreamsEventBus;
    const c = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    const ch = `orderbook:${m.id}`;
    expect((await c.subscribe([ch])).type).toBe('subscribed');
    await c.waitFor((x) => x.channel === ch);
    // What the reader hands on once it is positioned on a world newly followed (a WebSocket
    // client's first connection to it): `rebuilt`, no events, not `lost`.
    appBus.publish({
      environment: 'test',
      world: 'test',
      events: [],
      committedAt: Date.now(),
      rebuilt: true,
      remote: true,
    });
    await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 21, 1));
    await c.sync();
    expect(c.events(ch).map((x) => [x.seq, x.data.kind])).toEqual([
      [1, 'snapshot'],
      [2, 'delta'],
    ]);
    await c.close();
  });

  it('Redis stopped: orders are served and delivered here; back: the others and the clients resync', async () => {
    const logsBefore = svc.logs.length;
    await redis.stop();
    const from = ws.mark();
    const during = await place(svc, t, limit(m, 'BUY', 'YES', m.reference + 1, 1));
    expect(during.status).toBe('FILLED');
    for (let i = 0; i < 5; i++) {
      expect((await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 20, 1))).status).toBe(
        'OPEN',
      );
    }
    await ws.waitFor((x) => x.channel === 'fills' && x.data.order_id === during.id, 3000, from);
    const lastFillSeq = fillsOf(during.id, from)[0].seq as number;
    // Six batches not appended and a broken reader: one event-bus warning for the interval (and
    // one from the peer's reader, which logs through the same Nest logger in this process).
    const busWarnings = () =>
      svc.logs
        .slice(logsBefore)
        .filter((l) =>
          /could not append to the test event|reading the event streams failed|reader lost Redis/.test(
            l,
          ),
        );
    await until(() => busWarnings().length >= 2);
    expect(busWarnings()).toHaveLength(2);
    const peerBefore = atPeer.length;

    await redis.start();
    // The app owed a gap marker for the batch it could not append: the other instance resyncs.
    await until(() => atPeer.slice(peerBefore).some((b) => b.rebuilt === true && b.lost === true));
    expect(tradesAtPeer(during.id)).toBe(0);
    // The app's own reader reconnected: its orderbook subscriber gets a fresh snapshot...
    const snap = await ws.waitFor(
      (x) => x.channel === `orderbook:${m.id}` && x.data.kind === 'snapshot',
      8000,
      from,
    );
    const book = await as(t, `${svc.api}/markets/${m.id}/orderbook?depth=99`);
    expect({ bids: snap.data.bids, asks: snap.data.asks }).toEqual({
      bids: book.body.bids,
      asks: book.body.asks,
    });
    // ...and the next fill skips a seq: what the feed documents as "messages lost, resubscribe".
    const after = await place(svc, t, limit(m, 'BUY', 'YES', m.reference + 1, 1));
    await ws.waitFor((x) => x.channel === 'fills' && x.data.order_id === after.id, 3000, from);
    expect(fillsOf(after.id, from)[0].seq).toBe(lastFillSeq + 2);
    // Batches flow to the other instance again.
    await until(() => tradesAtPeer(after.id) === 1);
  });

  it('lets go of the world when its last WebSocket client leaves', async () => {
    const appBus = svc.app.get(EventBus) as RedisStreamsEventBus;
    const second = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    await ws.close();
    await second.sync();
    expect(appBus.following('test')).toBe(true);
    await second.close();
    await until(() => !appBus.following('test'));
  });
});

async function until(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
