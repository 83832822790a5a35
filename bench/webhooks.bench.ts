/**
 * bench:webhooks — end-to-end webhook delivery against the built server. Starts `node
 * dist/main.js` (temporary DATA_DIR, RATE_LIMITS_ENABLED=false, SANDBOX_FEED_INTERVAL_MS=0,
 * WEBHOOK_POLL_MS=20) and a local receiver on 127.0.0.1 that answers 200 at once, registers 3
 * endpoints (events '*') for one user, and for ~15 s places and cancels paper orders through REST
 * (each pair commits an order.created and an order.cancelled event, each delivered to all three
 * endpoints). Measures deliveries/s arriving at the receiver and the delay from event commit (the
 * envelope's created_at) to the first attempt (arrival at the receiver), p50/p99. Two phases: 10 s
 * paced at 200 events/s (below capacity: latency without a backlog), then 15 s as fast as 8
 * clients can go (saturated: throughput, and the backlog latency it builds). The server and the
 * load generator share the machine. Prints the figures and writes bench/results/webhooks.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { startBenchServer } from './support/server.js';

const LOAD_MS = 15_000;
const CLIENTS = 8;
/** A second, paced phase below capacity shows the latency without a backlog. */
const PACED_MS = 10_000;
const PACED_PAIRS_PER_SECOND = 100;
const ENDPOINTS = 3;
const DRAIN_TIMEOUT_MS = 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

interface Arrival {
  deliveryId: string;
  at: number;
  createdAt: number;
}

async function json(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...init.headers,
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  };
}

async function main(): Promise<void> {
  // The receiver: 200 at once; the first arrival of each delivery id is its first attempt.
  const first = new Map<string, Arrival>();
  let requests = 0;
  const receiver = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      requests++;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      const id = String(req.headers['svc-webhook-id']);
      if (first.has(id)) return;
      const env = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { created_at: string };
      first.set(id, { deliveryId: id, at, createdAt: Date.parse(env.created_at) });
    });
  });
  receiver.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const rxPort = (receiver.address() as AddressInfo).port;

  const server = await startBenchServer('webhooks', { WEBHOOK_POLL_MS: '20' });
  const { api } = server;

  try {
    const login = await json(`${api}/auth/login`, {
      method: 'POST',
      body: { email: 'trader@sandbox.test', password: 'sandbox-password' },
    });
    const token = String(login.body.token);
    const key = await json(`${api}/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: {
        name: 'bench',
        environment: 'test',
        scopes: ['orders:read', 'orders:write', 'webhooks:read', 'webhooks:write'],
        acknowledge_write_scopes: true,
      },
    });
    if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
    const headers = { 'x-api-key': String(key.body.key) };
    for (let i = 0; i < ENDPOINTS; i++) {
      const ep = await json(`${api}/webhooks`, {
        method: 'POST',
        headers,
        body: { url: `http://127.0.0.1:${rxPort}/bench/${i}`, events: ['*'] },
      });
      if (ep.status !== 201) throw new Error(`endpoint: ${ep.status} ${JSON.stringify(ep.body)}`);
    }

    // A tradable seeded market (reference 20..80); resting bids 15 below it never fill.
    const seeds = JSON.parse(readFileSync('seeds/markets.json', 'utf8')) as {
      slug: string;
      reference_price: number;
      status: string;
    }[];
    const m = seeds.find(
      (s) => s.status === 'OPEN' && s.reference_price >= 20 && s.reference_price <= 80,
    )!;
    const marketId = `mkt_${createHash('sha256').update(m.slug).digest('hex').slice(0, 20)}`;
    const price = m.reference_price - 15;

    /** One load phase: place-and-cancel pairs for `ms`, then wait for every delivery. */
    const phase = async (
      name: string,
      ms: number,
      clients: number,
      pairsPerSecond: number | null,
    ): Promise<Record<string, unknown>> => {
      first.clear();
      let events = 0;
      let failures = 0;
      const loadStart = Date.now();
      const stopAt = loadStart + ms;
      await Promise.all(
        Array.from({ length: clients }, async (_, c) => {
          // Paced: client c owns the slots c, c + clients, ... of a fixed schedule.
          for (let i = c; Date.now() < stopAt; i += clients) {
            if (pairsPerSecond !== null) {
              const due = loadStart + (i * 1000) / pairsPerSecond;
              if (due >= stopAt) break;
              if (due > Date.now()) await sleep(due - Date.now());
            }
            const o = await json(`${api}/orders`, {
              method: 'POST',
              headers,
              body: {
                market_id: marketId,
                action: 'BUY',
                side: 'YES',
                type: 'LIMIT',
                price,
                quantity: 1,
              },
            });
            if (o.status !== 201) {
              failures++;
              continue;
            }
            events++;
            const del = await json(`${api}/orders/${String(o.body.id)}`, {
              method: 'DELETE',
              headers,
            });
            if (del.status === 200) events++;
            else failures++;
          }
        }),
      );
      const loadEnd = Date.now();
      const seconds = (loadEnd - loadStart) / 1000;
      const expected = events * ENDPOINTS;
      const drainDeadline = Date.now() + DRAIN_TIMEOUT_MS;
      while (first.size < expected && Date.now() < drainDeadline) await sleep(20);
      const arrivals = [...first.values()];
      const lastArrival = arrivals.reduce((m, a) => (a.at > m ? a.at : m), -Infinity);
      const delays = arrivals.map((a) => a.at - a.createdAt).sort((a, b) => a - b);
      const inLoad = arrivals.filter((a) => a.at <= loadEnd).length;
      if (first.size < expected) {
        process.exitCode = 1;
        console.error(`${name}: only ${first.size} of ${expected} deliveries arrived`);
      }
      return {
        load_seconds: Number(seconds.toFixed(2)),
        clients,
        target_events_per_second: pairsPerSecond === null ? 'max' : pairsPerSecond * 2,
        events_committed: events,
        events_per_second: Math.round(events / seconds),
        order_request_failures: failures,
        deliveries_expected: expected,
        deliveries_received: first.size,
        deliveries_per_second_during_load: Math.round(inLoad / seconds),
        deliveries_per_second_load_plus_drain: Math.round(
          first.size / ((Math.max(lastArrival, loadEnd) - loadStart) / 1000),
        ),
        drain_after_load_ms: Math.max(0, lastArrival - loadEnd),
        commit_to_first_attempt_ms: {
          p50: percentile(delays, 50),
          p90: percentile(delays, 90),
          p99: percentile(delays, 99),
          max: delays[delays.length - 1],
        },
      };
    };

    const paced = await phase('paced', PACED_MS, 4, PACED_PAIRS_PER_SECOND);
    const saturated = await phase('saturated', LOAD_MS, CLIENTS, null);
    const figures = {
      benchmark: 'webhooks',
      endpoints: ENDPOINTS,
      events: "order.created + order.cancelled per REST place/cancel pair; '*' subscriptions",
      saturated,
      paced,
      receiver_requests: requests,
      settings: { WEBHOOK_POLL_MS: 20, RATE_LIMITS_ENABLED: false, SANDBOX_FEED_INTERVAL_MS: 0 },
      node: process.version,
      at: new Date().toISOString(),
    };
    console.log(JSON.stringify(figures, null, 2));
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/webhooks.json', JSON.stringify(figures, null, 2) + '\n');
  } finally {
    await server.stop();
    receiver.closeAllConnections();
    receiver.close();
  }
}

void main();
