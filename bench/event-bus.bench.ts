/**
 * The Redis hop of the shared committed-event stream: from `publish` on one instance to delivery
 * on another (two RedisStreamsEventBus on one local redis-server, in this one process, so both
 * sides' CPU is on one thread). A batch is a realistic taker order: 9 events (accepted, trade,
 * updates, positions, balances, book level). Two runs: one batch at a time (the hop alone), and
 * 2,000 batches/s in ticks of 10 (the hop under load). Prints p50/p90/p99/max in ms and writes
 * bench/results/event-bus.json.
 *
 *   tsc -p tsconfig.bench.json && node dist-bench/bench/event-bus.bench.js
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import type { EngineEvent } from '../src/engine/index.js';
import { RedisStreamsEventBus } from '../src/modules/redis/redis-event-bus.js';
import type { CommittedEvents } from '../src/modules/trading/event-bus.js';
import { RedisServer } from '../test/support/redis-server.js';

const BATCHES = 3_000;

function client(url: string): Redis {
  return new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
}

function batch(n: number): CommittedEvents {
  const base = { marketId: 'mkt_0123456789abcdef0123', timestamp: 1_800_000_000_000 + n };
  const events: EngineEvent[] = [
    {
      type: 'order.accepted',
      order: {
        id: `ord_${n}`,
        accountId: 'usr_taker',
        marketId: base.marketId,
        tag: null,
        clientOrderId: null,
        action: 'BUY',
        side: 'YES',
        type: 'LIMIT',
        price: 51,
        bookSide: 'BID',
        bookPrice: 51,
        quantity: 2,
        filledQuantity: 0,
        remainingQuantity: 2,
        fillCost: 0,
        averageFillPrice: null,
        status: 'OPEN',
        timeInForce: 'GTC',
        postOnly: false,
        selfTradePrevention: 'CANCEL_TAKER',
        cancelReason: null,
        createdAt: base.timestamp,
        updatedAt: base.timestamp,
        sequence: n,
        rfqId: null,
      },
    },
    {
      type: 'trade',
      source: 'BOOK',
      id: `fil_${n}`,
      marketId: base.marketId,
      price: n,
      quantity: 2,
      makerOrderId: 'ord_maker',
      takerOrderId: `ord_${n}`,
      makerAccountId: 'house',
      takerAccountId: 'usr_taker',
      makerSide: 'YES',
      takerSide: 'YES',
      takerBookSide: 'BID',
      timestamp: base.timestamp,
    },
    ...(['usr_taker', 'house'] as const).flatMap((accountId): EngineEvent[] => [
      {
        type: 'order.updated',
        orderId: `ord_${accountId}`,
        accountId,
        filledQuantity: 2,
        remainingQuantity: 0,
        status: 'FILLED',
        fillCost: 102,
        averageFillPrice: 51,
        updatedAt: base.timestamp,
      },
      {
        type: 'position.changed',
        accountId,
        marketId: base.marketId,
        yes: 2,
        no: 0,
        yesCost: 102,
        noCost: 0,
        realizedPnl: 0,
      },
      {
        type: 'balance.changed',
        accountId,
        delta: -102,
        balance: 999_898,
        reason: 'TRADE',
        referenceId: `fil_${n}`,
        timestamp: base.timestamp,
      },
    ]),
    { type: 'book.level', marketId: base.marketId, side: 'ASK', price: 51, quantity: 98 },
  ];
  return { environment: 'test', world: 'test', events, committedAt: base.timestamp };
}

function percentiles(ms: number[]): Record<string, number> {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => Number(s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(3));
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: Number(s.at(-1)!.toFixed(3)) };
}

async function main(): Promise<void> {
  const server = await RedisServer.start();
  const [ca, cb] = [client(server.url), client(server.url)];
  await Promise.all([ca, cb].map((c) => new Promise((r) => c.once('ready', r))));
  const a = new RedisStreamsEventBus(ca, { maxLen: 10_000 });
  const b = new RedisStreamsEventBus(cb, { maxLen: 10_000 });
  const sentAt = new Map<number, number>();
  const latencies: number[] = [];
  let arrived: (() => void) | null = null;
  b.stream.subscribe((x) => {
    const trade = x.events.find((e) => e.type === 'trade');
    if (trade === undefined || trade.type !== 'trade') return;
    latencies.push(performance.now() - sentAt.get(trade.price)!);
    arrived?.();
  });
  b.follow('test');
  while (!b.following('test')) await new Promise((r) => setTimeout(r, 5));

  const size = Buffer.byteLength(JSON.stringify(batch(1)));
  let n = 0;
  // Warm-up.
  for (let i = 0; i < 500; i++) {
    sentAt.set(++n, performance.now());
    a.publish(batch(n));
  }
  while (latencies.length < 500) await new Promise((r) => setTimeout(r, 5));
  latencies.length = 0;

  // One at a time: the hop alone.
  for (let i = 0; i < BATCHES; i++) {
    const got = new Promise<void>((r) => (arrived = r));
    sentAt.set(++n, performance.now());
    a.publish(batch(n));
    await got;
  }
  arrived = null;
  const single = percentiles(latencies);
  latencies.length = 0;

  // 2,000 batches a second, 10 per 5 ms tick.
  const started = performance.now();
  for (let i = 0; i < BATCHES / 10; i++) {
    for (let j = 0; j < 10; j++) {
      sentAt.set(++n, performance.now());
      a.publish(batch(n));
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  while (latencies.length < BATCHES) await new Promise((r) => setTimeout(r, 5));
  const loaded = {
    ...percentiles(latencies),
    batches_per_second: Math.round(BATCHES / ((performance.now() - started) / 1000)),
  };

  const figures = {
    benchmark: 'event-bus',
    what: 'publish on instance A -> delivery on instance B through one local redis-server (ms)',
    batches: BATCHES,
    batch_bytes: size,
    events_per_batch: batch(1).events.length,
    one_at_a_time: single,
    loaded,
    node: process.version,
    at: new Date().toISOString(),
  };
  console.log(JSON.stringify(figures, null, 2));
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/event-bus.json', JSON.stringify(figures, null, 2) + '\n');
  await a.onApplicationShutdown();
  await b.onApplicationShutdown();
  ca.disconnect();
  cb.disconnect();
  await server.stop();
}

void main();
