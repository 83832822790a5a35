/**
 * Realtime delivery across instances: WebSocket subscribers on some instances (B, C) while paced
 * orders go through another (A). Each subscriber connection holds a public channel
 * (orderbook:<market>) and a private one (orders, of the ordering key's user). Every order is a
 * resting BUY YES at {@link PRICE} for 1 contract on the market, so each one raises the bid level
 * at that price by one: the first orderbook message (delta or snapshot) whose level total
 * reaches base + k is the delivery of the k-th accepted order, base being the level in the
 * snapshot the subscription opened with. On the orders channel an order's delivery is its
 * `order.accepted` message, found by order id. Latency is from the moment the order was written
 * to the socket (and, apart, from its acknowledgement: negative when the message reached the
 * other instance's subscriber before the answer reached the client) to the message's arrival,
 * all on this process's clock. The orders go over one keep-alive connection, so they are
 * accepted in the order they were sent.
 */
import { paced, pct, type Figures, type PacedAnswer } from './order-load.js';
import { RawWsClient } from './raw-ws-client.js';

/** The price every delivery order rests at, YES cents: far below any house quote. */
const PRICE = 1;
/**
 * How long the subscribers may take, after the last answer, to receive every order: generous,
 * because a follower that fell behind (a loaded machine) catches up late, and only a message
 * that never comes is a failure.
 */
const DRAIN_MS = Number(process.env.BENCH_DRAIN_SECONDS ?? 20) * 1000;

export interface DeliveryOptions {
  host: string;
  /** The instance the orders go through (A). */
  orderPort: number;
  /** The instances the subscribers are on (B, C), by name. */
  subscribers: { name: string; port: number }[];
  connectionsPerInstance: number;
  /** A test key with the websocket, orders:read and orders:write scopes. */
  key: string;
  market: string;
  rate: number;
  seconds: number;
  /** Orders of the first this-many seconds are sent but not counted (connections warm up). */
  warmupSeconds: number;
}

export interface Latencies {
  deliveries: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface ChannelDelivery {
  /** From the order's write to the message's arrival. */
  fromSend: Latencies;
  /** From the order's acknowledgement to the message's arrival (negative: message first). */
  fromAck: { p50Ms: number; p99Ms: number };
  /** Per subscriber instance: deliveries and p99 from send. */
  byInstance: Record<string, { deliveries: number; p99Ms: number }>;
  /**
   * p50 from send of the first and of the last tenth of the counted orders: a last tenth far
   * above the first means the subscribers' instances fell behind while the orders flowed.
   */
  p50MsFirstTenth: number | null;
  p50MsLastTenth: number | null;
  /** Counted orders a connection had not received by the end of the drain. */
  missing: number;
}

export interface DeliveryFigures {
  orders: Figures;
  /**
   * Before the measure: ms until one order through A reached every subscriber (the instances
   * of the subscribers first work through the batches of the phases before).
   */
  catchUpMs: number;
  countedOrders: number;
  connections: number;
  public: ChannelDelivery;
  private: ChannelDelivery;
  /** Messages whose seq was not the previous one's + 1 on its channel and connection. */
  seqGaps: number;
  closedEarly: number;
}

interface Subscriber {
  instance: string;
  /** Arrival (performance.now()) of the k-th accepted order's level increment, k = 1, 2, ... */
  bookArrivals: number[];
  /** Arrival of each order's order.accepted, by order id. */
  orderArrivals: Map<string, number>;
  seqGaps: number;
  closedEarly: boolean;
  stop(): void;
}

type WsMessage = {
  type: string;
  channel?: string;
  seq?: number;
  data?: {
    kind?: string;
    side?: string;
    price?: number;
    quantity?: number;
    bids?: { price: number; quantity: number }[];
    event?: string;
    order_id?: string;
  };
};

/** Connects and subscribes one connection; resolves once the orderbook snapshot arrived. */
function subscribe(
  host: string,
  port: number,
  instance: string,
  key: string,
  market: string,
): Promise<Subscriber> {
  const book = `orderbook:${market}`;
  return new Promise((resolve, reject) => {
    let client: RawWsClient | null = null;
    let base: number | null = null;
    let stopping = false;
    const lastSeq = new Map<string, number>();
    const sub: Subscriber = {
      instance,
      bookArrivals: [],
      orderArrivals: new Map(),
      seqGaps: 0,
      closedEarly: false,
      stop: () => {
        stopping = true;
        client?.terminate();
      },
    };
    /** The bid level at PRICE now holds `total`: every order up to it has arrived. */
    const level = (total: number, at: number): void => {
      if (base === null) {
        base = total;
        resolve(sub);
        return;
      }
      while (sub.bookArrivals.length < total - base) sub.bookArrivals.push(at);
    };
    RawWsClient.open(`ws://${host}:${port}/api/v1/ws`, {
      onClose: () => {
        if (!stopping) sub.closedEarly = true;
        if (base === null) reject(new Error(`${instance}: WebSocket closed before the snapshot`));
      },
      onText: (buf, start, end) => {
        const at = performance.now();
        const m = JSON.parse(buf.toString('utf8', start, end)) as WsMessage;
        if (m.type === 'auth_ok') {
          client!.sendText(JSON.stringify({ type: 'subscribe', channels: [book, 'orders'] }));
          return;
        }
        if (m.type === 'error') {
          reject(new Error(`${instance}: ${buf.toString('utf8', start, end)}`));
          return;
        }
        if (m.type !== 'event' || m.channel === undefined || m.data === undefined) return;
        const prev = lastSeq.get(m.channel);
        if (prev !== undefined && m.seq !== prev + 1) sub.seqGaps++;
        lastSeq.set(m.channel, m.seq ?? 0);
        const d = m.data;
        if (m.channel === book) {
          if (d.kind === 'snapshot') {
            level(d.bids?.find((l) => l.price === PRICE)?.quantity ?? 0, at);
          } else if (d.kind === 'delta' && d.side === 'bids' && d.price === PRICE) {
            level(d.quantity ?? 0, at);
          }
        } else if (m.channel === 'orders' && d.event === 'order.accepted' && d.order_id) {
          if (!sub.orderArrivals.has(d.order_id)) sub.orderArrivals.set(d.order_id, at);
        }
      },
    }).then((c) => {
      client = c;
      c.sendText(JSON.stringify({ type: 'auth', api_key: key }));
    }, reject);
  });
}

const latencies = (xs: number[]): Latencies => {
  const s = [...xs].sort((a, b) => a - b);
  return {
    deliveries: s.length,
    p50Ms: pct(s, 0.5),
    p90Ms: pct(s, 0.9),
    p99Ms: pct(s, 0.99),
    maxMs: pct(s, 1),
  };
};

export async function crossInstanceDelivery(o: DeliveryOptions): Promise<DeliveryFigures> {
  const subs: Subscriber[] = [];
  try {
    for (const s of o.subscribers) {
      for (let i = 0; i < o.connectionsPerInstance; i++) {
        subs.push(await subscribe(o.host, s.port, s.name, o.key, o.market));
      }
    }
    const body = JSON.stringify({
      market_id: o.market,
      action: 'BUY',
      side: 'YES',
      type: 'LIMIT',
      price: PRICE,
      quantity: 1,
    });
    /** The 2xx answers in the order they came, which is the order the orders were accepted. */
    const accepted: { id: string; index: number; sentAt: number; answeredAt: number }[] = [];
    const onAnswer = (a: PacedAnswer): void => {
      if (a.status >= 300) return;
      const id = (JSON.parse(a.body.toString()) as { id: string }).id;
      accepted.push({ id, index: a.index, sentAt: a.sentAt, answeredAt: a.answeredAt });
    };
    // The instances of the subscribers may still be working through the batches of what ran
    // before: one order first, and the measure starts once every subscriber has it.
    const syncSentAt = performance.now();
    const sync = await fetch(`http://${o.host}:${o.orderPort}/api/v1/orders`, {
      method: 'POST',
      headers: { 'x-api-key': o.key, 'content-type': 'application/json' },
      body,
    });
    const syncBody = (await sync.json()) as { id?: string };
    if (sync.status !== 201 || syncBody.id === undefined) {
      throw new Error(`delivery sync order: ${sync.status} ${JSON.stringify(syncBody)}`);
    }
    accepted.push({
      id: syncBody.id,
      index: -1,
      sentAt: syncSentAt,
      answeredAt: performance.now(),
    });
    const caughtUp = (): boolean =>
      subs.every((s) => s.bookArrivals.length >= 1 && s.orderArrivals.has(syncBody.id!));
    const syncUntil = syncSentAt + 3 * DRAIN_MS;
    while (!caughtUp() && performance.now() < syncUntil) {
      await new Promise((r) => setTimeout(r, 10));
    }
    if (!caughtUp()) {
      throw new Error(`subscribers did not receive an order within ${3 * DRAIN_MS} ms`);
    }
    const catchUpMs = Math.round(performance.now() - syncSentAt);
    const orders = await paced(
      o.host,
      o.orderPort,
      o.rate,
      o.seconds,
      () => ({ key: o.key, body }),
      { connections: 1, onAnswer },
    );
    const drainUntil = performance.now() + DRAIN_MS;
    const complete = (): boolean =>
      subs.every(
        (s) => s.bookArrivals.length >= accepted.length && s.orderArrivals.size >= accepted.length,
      );
    while (!complete() && performance.now() < drainUntil) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const skip = o.rate * o.warmupSeconds;
    const counted = accepted.map((a, k) => ({ ...a, k })).filter((a) => a.index >= skip);
    const channel = (arrival: (s: Subscriber, k: number, id: string) => number | undefined) => {
      const fromSend: number[] = [];
      const fromAck: number[] = [];
      const tenth = Math.max(1, Math.floor(counted.length / 10));
      const first: number[] = [];
      const last: number[] = [];
      const byInstance: Record<string, number[]> = {};
      let missing = 0;
      for (const s of subs) {
        counted.forEach((a, n) => {
          const at = arrival(s, a.k, a.id);
          if (at === undefined) {
            missing++;
            return;
          }
          if (n < tenth) first.push(at - a.sentAt);
          if (n >= counted.length - tenth) last.push(at - a.sentAt);
          fromSend.push(at - a.sentAt);
          fromAck.push(at - a.answeredAt);
          (byInstance[s.instance] ??= []).push(at - a.sentAt);
        });
      }
      const ack = [...fromAck].sort((a, b) => a - b);
      return {
        fromSend: latencies(fromSend),
        fromAck: { p50Ms: pct(ack, 0.5), p99Ms: pct(ack, 0.99) },
        // null: none of them arrived.
        p50MsFirstTenth: first.length === 0 ? null : latencies(first).p50Ms,
        p50MsLastTenth: last.length === 0 ? null : latencies(last).p50Ms,
        byInstance: Object.fromEntries(
          o.subscribers.map(({ name }) => {
            const l = latencies(byInstance[name] ?? []);
            return [name, { deliveries: l.deliveries, p99Ms: l.p99Ms }];
          }),
        ),
        missing,
      };
    };
    return {
      orders,
      catchUpMs,
      countedOrders: counted.length,
      connections: subs.length,
      public: channel((s, k) => s.bookArrivals[k]),
      private: channel((s, _k, id) => s.orderArrivals.get(id)),
      seqGaps: subs.reduce((n, s) => n + s.seqGaps, 0),
      closedEarly: subs.filter((s) => s.closedEarly).length,
    };
  } finally {
    for (const s of subs) s.stop();
  }
}
