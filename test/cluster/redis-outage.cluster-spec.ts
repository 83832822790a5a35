import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { http, type JsonResponse } from '../support/harness.js';
import { sessionFor } from '../support/keys.js';
import { keyFor, type Trader } from '../support/orders.js';
import type { ServiceProcess } from '../support/process.js';
import { RedisServer } from '../support/redis-server.js';
import { ClientBook, WsClient, type WsMessage } from '../support/ws.js';
import {
  clusterClient,
  enterpriseTrader,
  openMarket,
  startCluster,
  waitWriter,
  type Cluster,
  type ClusterClient,
} from './cluster-fixture.js';
import { describeWorldClock } from './world-clock.cluster-cases.js';

/** The stream case's order streams: one key each, at most one order every PACE_MS. */
const STREAMS = 15;
const PACE_MS = 1000;
/** This test's orders rest at these prices and below, far under the house's quotes. */
const OWN_PRICES = 11;
/** How long after Redis answers again forwarding must work (docs/sections/outage.md). */
const RECOVERY_BOUND_MS = 10_000;
/** How long a request may take while Redis is down: a prompt 503, never a hang. */
const DOWN_ANSWER_BOUND_MS = 3_000;
/** A platform route on a loaded machine (it never waits for Redis beyond the limits' 50 ms). */
const PLATFORM_BOUND_MS = 5_000;
/**
 * How long a forwarded request caught by the stop may wait: its deadline (3 s) and the grace for
 * a commit (1 s), then 503; the rest is slack for a loaded machine.
 */
const IN_FLIGHT_BOUND_MS = 6_000;

/**
 * Three instances on one PostgreSQL and one Redis; Redis is stopped, then started again on the
 * same port (empty: no persistence, as `npm run services` runs it). While it is down every
 * instance keeps answering: what it serves itself (platform routes, the writer's own world) is
 * served, with limits failing open; what must be forwarded to the writer is refused at once with
 * 503 WRITER_UNAVAILABLE and Retry-After. When it is back, forwarding resumes, and a follower's
 * WebSocket client is resynced (a fresh orderbook snapshot, a seq skipped on `orders`) and then
 * hears live events again, ending with the engine's book.
 *
 * The same instances and Redis then serve the world-clock cases (world-clock.cluster-cases.ts):
 * one cluster boot for both, each with a world and keys of its own.
 */
let redis: RedisServer;
let cluster: Cluster;

beforeAll(async () => {
  redis = await RedisServer.start();
  // No paper feed: the book moves only with the tests' orders, so the client's book can be
  // compared with the engine's at any quiet moment.
  cluster = await startCluster(3, {
    redisUrl: redis.url,
    env: { SANDBOX_FEED_INTERVAL_MS: '0' },
  });
}, 420_000);

afterAll(async () => {
  await cluster?.stop();
  await redis?.stop();
}, 60_000);

describe('cluster: Redis stopped under three instances', () => {
  let t: Trader;
  let market: string;
  let writer: ServiceProcess;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let ws: WsClient;
  const book = new ClientBook();
  /** The trader's requests; `client.acked`: every order acknowledged (201), wherever and whenever. */
  let client: ClusterClient;
  /** The order of the first case, cancelled on the writer while Redis is down. */
  let before = '';

  beforeAll(async () => {
    writer = await waitWriter(cluster.services.admin, cluster.instances);
    [a, b] = cluster.instances.filter((i) => i !== writer);
    t = await enterpriseTrader(cluster.instances[0]);
    market = await openMarket(cluster.instances[0], t);
    client = clusterClient(t, market, 3);
  }, 120_000);

  afterAll(async () => {
    await ws?.close();
  }, 60_000);

  /** Resting bids far below the house's quotes (nothing fills), timed; 201s land in `acked`. */
  const place = (svc: ServiceProcess, price: number, key?: string) =>
    client.timed.place(svc, { price, key });
  const get = (svc: ServiceProcess, path: string, auth?: Record<string, string>) =>
    client.timed.get(svc, path, auth);

  const expectWriterUnavailable = (res: JsonResponse, ms: number): void => {
    expect([res.status, res.body?.error?.code]).toEqual([503, 'WRITER_UNAVAILABLE']);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(ms).toBeLessThan(DOWN_ANSWER_BOUND_MS);
  };

  const orderEvent = (id: string) => (m: WsMessage) =>
    m.type === 'event' && m.channel === 'orders' && m.data.order_id === id;

  it('before the outage: an order placed through one follower is heard on the other follower’s socket', async () => {
    ws = await WsClient.authed(a.baseUrl, { api_key: t.key });
    ws.onMessage((m) => {
      if (m.type === 'event' && m.channel === `orderbook:${market}`) book.apply(m);
    });
    const sub = await ws.subscribe([`orderbook:${market}`, 'orders']);
    expect(sub.type).toBe('subscribed');
    const { res } = await place(b, 4);
    expect(res.status).toBe(201);
    before = res.body.id as string;
    await ws.waitFor(orderEvent(res.body.id as string), 10_000);
  });

  it('Redis stopping under a stream of orders through every instance: each answer is 201 or a prompt 503 WRITER_UNAVAILABLE, never a 500 or a hang', async () => {
    const answers: { svc: ServiceProcess; start: number; ms: number; res: JsonResponse }[] = [];
    let stop = false;
    // Keys of their own, each sending at most one order a second (as the failover case's
    // streams): POST /orders takes 60 a minute per key, every attempt counted, and with Redis
    // down each instance counts that limit alone. One fast stream on the trader's key used it up
    // (429 RATE_LIMITED in the stream, and in the later cases' orders on the writer).
    const routes = Array.from({ length: STREAMS }, (_, n) => [writer, a, b][n % 3]);
    const keys = await Promise.all(routes.map(() => keyFor(a, t.email, t.token)));
    const worker = async (svc: ServiceProcess, n: number): Promise<void> => {
      // Staggered, so that some stream sends every PACE_MS / STREAMS ms.
      await new Promise((r) => setTimeout(r, (n * PACE_MS) / STREAMS));
      while (!stop) {
        const start = Date.now();
        const { res, ms } = await client.timed.place(svc, { price: 3, apiKey: keys[n].key });
        answers.push({ svc, start, ms, res });
        await new Promise((r) => setTimeout(r, Math.max(0, start + PACE_MS - Date.now())));
      }
    };
    const workers = routes.map(worker);
    // Orders flow (forwarded ones acknowledged too), then Redis stops under them.
    // Every stream has sent (a full PACE_MS and more), and at least STREAMS orders are in.
    const streaming = Date.now() + 2 * PACE_MS;
    const flowing = Date.now() + 20_000;
    while (
      Date.now() < flowing &&
      (Date.now() < streaming || answers.filter((x) => x.res.status === 201).length < STREAMS)
    ) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await redis.stop();
    const stoppedAt = Date.now();
    // Until the writer has placed an order and each follower answered one, sent after the stop.
    const sentAfter = (svc: ServiceProcess, status?: number) =>
      answers.some(
        (x) =>
          x.svc === svc && x.start > stoppedAt && (status === undefined || x.res.status === status),
      );
    const deadline = stoppedAt + 20_000;
    while (!(sentAfter(writer, 201) && sentAfter(a) && sentAfter(b)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    stop = true;
    await Promise.all(workers);
    const after = answers.filter((x) => x.start > stoppedAt);
    console.log(
      `redis-outage: ${answers.length} orders around the stop, ${answers.filter((x) => x.res.status === 201).length} acknowledged; ` +
        `slowest answer ${Math.max(...answers.map((x) => x.ms))} ms, slowest after the stop ${Math.max(...after.map((x) => x.ms))} ms`,
    );
    expect(
      answers.filter((x) => x.svc !== writer && x.start < stoppedAt && x.res.status === 201).length,
    ).toBeGreaterThan(0);
    for (const x of answers) {
      if (x.res.status !== 201) {
        expect([x.res.status, x.res.body?.error?.code]).toEqual([503, 'WRITER_UNAVAILABLE']);
        expect(x.res.headers.get('retry-after')).toBe('1');
      }
      expect(x.ms).toBeLessThan(IN_FLIGHT_BOUND_MS);
    }
    // After the stop: the writer keeps placing orders, the followers refuse theirs at once.
    expect(after.filter((x) => x.svc === writer && x.res.status === 201).length).toBeGreaterThan(0);
    for (const x of after.filter((y) => y.svc !== writer)) {
      expect([x.res.status, x.ms < DOWN_ANSWER_BOUND_MS]).toEqual([503, true]);
    }
  });

  it('while Redis is down: platform routes answer 200 everywhere (limits fail open), forwarded requests 503 WRITER_UNAVAILABLE at once, the writer serves its world', async () => {
    // Platform routes are served where they arrive, each charged against limits that now fail
    // open: a login (a write), then reads with the session and with the API key, a few rounds on
    // every instance, so a limit that failed closed would show.
    const seen: string[] = [];
    for (let round = 0; round < 3; round++) {
      for (const [n, svc] of [writer, a, b].entries()) {
        const started = Date.now();
        const token = await sessionFor(svc.api);
        seen.push(`login ${Date.now() - started}ms`);
        const reads: [string, Record<string, string>][] = [
          ['/auth/me', client.headers()],
          ['/api-keys', { authorization: `Bearer ${token}` }],
          ['/health', {}],
          ['/health/ready', {}],
        ];
        for (const [path, auth] of reads) {
          const { res, ms } = await get(svc, path, auth);
          seen.push(`${n === 0 ? 'writer' : 'follower'} ${path} ${res.status} ${ms}ms`);
          expect([path, res.status]).toEqual([path, 200]);
          expect(ms).toBeLessThan(PLATFORM_BOUND_MS);
          // Each instance answers its own probe, and reports Redis away (yet stays ready).
          if (path === '/health/ready') expect(res.body.checks.redis).toBe('unavailable');
        }
      }
    }
    console.log(`redis-outage: while down ${seen.slice(0, 12).join(', ')}`);
    // The world's reads are the writer's: served there, refused on the followers below.
    const markets = await get(writer, '/markets?limit=5');
    expect(markets.res.status).toBe(200);
    // World-bound requests on the followers cannot reach the writer: refused, promptly.
    for (const svc of [a, b]) {
      const placed = await place(svc, 5);
      expectWriterUnavailable(placed.res, placed.ms);
      for (const path of ['/orders?limit=1', '/markets?limit=5']) {
        const read = await get(svc, path);
        expectWriterUnavailable(read.res, read.ms);
      }
    }
    // The writer serves its own world: orders and a cancel, committed while Redis is away.
    const first = await place(writer, 6);
    const second = await place(writer, 7);
    expect([first.res.status, second.res.status]).toEqual([201, 201]);
    const cancel = await http(`${writer.api}/orders/${before}`, {
      method: 'DELETE',
      headers: client.headers(),
      signal: AbortSignal.timeout(15_000),
    });
    expect(cancel.status).toBe(200);
  });

  it(`when Redis returns: forwarding works again within ${RECOVERY_BOUND_MS} ms, the follower’s socket resyncs, hears live events, and ends with the engine’s book`, async () => {
    const from = ws.mark();
    const ordersSeqBefore = Math.max(0, ...ws.events('orders').map((m) => m.seq as number));
    await redis.start();
    const backAt = Date.now();
    // Each follower forwards again: retried as a client should (same request, same
    // Idempotency-Key, after Retry-After), never answered anything but 503 meanwhile.
    const recovery: string[] = [];
    for (const svc of [a, b]) {
      const key = randomUUID();
      let refusals = 0;
      for (;;) {
        const { res, ms } = await place(svc, 8, key);
        if (res.status === 201) break;
        expectWriterUnavailable(res, ms);
        refusals++;
        expect(Date.now() - backAt).toBeLessThan(RECOVERY_BOUND_MS);
        await new Promise((r) => setTimeout(r, 250));
      }
      recovery.push(`${Date.now() - backAt} ms (${refusals} refused first)`);
    }
    console.log(`redis-outage: forwarding back after Redis returned: ${recovery.join(', ')}`);
    expect(Date.now() - backAt).toBeLessThan(RECOVERY_BOUND_MS);

    // The resync: a fresh snapshot on the orderbook channel (the book the client holds is
    // replaced by the engine's, the outage's orders and cancel included).
    const snapshot = await ws.waitFor(
      (m) =>
        m.type === 'event' && m.channel === `orderbook:${market}` && m.data.kind === 'snapshot',
      RECOVERY_BOUND_MS,
      from,
    );
    console.log(`redis-outage: resync snapshot ${Date.now() - backAt} ms after Redis returned`);
    const prices = snapshot.data.bids.map((l: { price: number }) => l.price);
    // The writer's orders of the outage are on it, the order it cancelled then is not.
    expect(prices).toEqual(expect.arrayContaining([6, 7]));
    expect(prices).not.toContain(4);

    // Live again: orders placed through both followers and the writer are heard on the socket.
    const after = [await place(b, 9), await place(writer, 10), await place(a, 11)];
    for (const { res } of after) {
      expect(res.status).toBe(201);
      await ws.waitFor(orderEvent(res.body.id as string), RECOVERY_BOUND_MS, from);
    }
    // The orders channel told the client it missed messages: one seq skipped after the return.
    const seqs = ws.events('orders', from).map((m) => m.seq as number);
    const skipped = [ordersSeqBefore, ...seqs].some((s, i, all) => i > 0 && s > all[i - 1] + 1);
    expect(skipped).toBe(true);

    // The client's book (snapshot + deltas) is the engine's, at every price this test's orders
    // rest at. (The house's quotes are left out: they are not stored, so a follower's copy of the
    // engine, which serves the snapshots of its sockets, never holds them; see the report.)
    await ws.sync();
    const rest = await get(writer, `/markets/${market}/orderbook?depth=99`);
    expect(rest.res.status).toBe(200);
    const own = (ls: { price: number; quantity: number }[]) =>
      ls
        .filter((l) => l.price <= OWN_PRICES)
        .map((l) => ({ price: l.price, quantity: l.quantity }));
    const seen = book.levels();
    expect({ bids: own(seen.bids), asks: own(seen.asks) }).toEqual({
      bids: own(rest.res.body.bids),
      asks: own(rest.res.body.asks),
    });
    expect(own(seen.bids).map((l) => l.price)).toEqual([11, 10, 9, 8, 7, 6, 3]);

    // Nothing acknowledged was lost: every order answered 201 (before, during, after) is there,
    // read through a follower (forwarded again).
    for (const id of client.acked) {
      const one = await get(a, `/orders/${id}`);
      expect([id, one.res.status]).toEqual([id, 200]);
    }
  });
});

// After the outage's cases: Redis is back and every instance is seen to use it again.
describeWorldClock(() => ({ cluster, redis }));
