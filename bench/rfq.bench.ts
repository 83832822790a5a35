/**
 * bench:rfq — accepts of RFQ quotes through HTTP with durable commits. Boots the real app over a
 * temporary DATA_DIR (file-backed SQLite in WAL mode, as in production; every accept commits the
 * RFQ, the quote, both orders, the trade, positions and ledger in one transaction before it
 * answers). Per round, the seeded trader requests ROUND_SIZE RFQs of 1 contract over the open
 * markets (100 OPEN per user is the cap), the seeded responder quotes each two-way over HTTP, and
 * the trader accepts them all, CONCURRENCY requests in flight; only the accepts are timed. The
 * paper house responder quotes too (it is part of the service), its quotes end CANCELLED with
 * each fill. Prints the figures and writes bench/results/rfq.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { benchEnvironment } from './support/bench-environment.js';
import { startInProcessApp } from './support/in-process-app.js';
import { jsonClient, openMarkets, traderTestKey, type JsonCall } from './support/api-client.js';
import { EngineRegistry } from '../src/modules/trading/engine-registry.js';

const ROUNDS = 10;
const ROUND_SIZE = 100;
const WARMUP_ROUNDS = 1;
const CONCURRENCY = 16;

/** A test key of the seeded approved responder, with rfq:respond. */
async function responderKey(json: JsonCall): Promise<string> {
  const login = await json('/auth/login', {
    method: 'POST',
    json: { email: 'responder@sandbox.test', password: 'sandbox-password' },
  });
  const created = await json('/api-keys', {
    method: 'POST',
    headers: { authorization: `Bearer ${String(login.body.token)}` },
    json: {
      name: 'bench-responder',
      environment: 'test',
      scopes: ['rfq:respond', 'orders:read', 'wallet:write'],
      acknowledge_write_scopes: true,
    },
  });
  if (created.status !== 201) throw new Error(`responder key: ${created.status}`);
  return String(created.body.key);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main(): Promise<void> {
  const created = await startInProcessApp('rfq');
  const { app } = created;
  try {
    const markets = openMarkets(app.get(EngineRegistry).get('test'));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.getHttpServer().address() as { port: number };
    const json = jsonClient(`http://127.0.0.1:${address.port}/api/v1`);
    const trader = (await traderTestKey(json, ['orders:write', 'orders:read'])).key;
    const responder = await responderKey(json);
    const asTrader = { 'x-api-key': trader };
    const asResponder = { 'x-api-key': responder };

    const latencies: number[] = [];
    let acceptedTotal = 0;
    let timedMs = 0;
    for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
      const quoteIds: string[] = [];
      for (let i = 0; i < ROUND_SIZE; i++) {
        const r = await json('/rfq', {
          method: 'POST',
          headers: asTrader,
          json: { market_id: markets[i % markets.length], quantity: 1 },
        });
        if (r.status !== 201) throw new Error(`POST /rfq: ${r.status} ${JSON.stringify(r.body)}`);
        const q = await json(`/rfq/${String(r.body.id)}/quotes`, {
          method: 'POST',
          headers: asResponder,
          json: { bid: 30, ask: 70, expires_in_seconds: 300 },
        });
        if (q.status !== 201) throw new Error(`quote: ${q.status} ${JSON.stringify(q.body)}`);
        quoteIds.push(String(q.body.id));
      }
      const roundLatencies: number[] = [];
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < quoteIds.length) {
            const id = quoteIds[next++];
            const s = performance.now();
            const res = await json(`/rfq/quotes/${id}/accept`, {
              method: 'POST',
              headers: asTrader,
              json: { action: next % 2 === 0 ? 'BUY' : 'SELL', side: 'YES' },
            });
            roundLatencies.push(performance.now() - s);
            if (res.status !== 200) {
              throw new Error(`accept: ${res.status} ${JSON.stringify(res.body)}`);
            }
          }
        }),
      );
      const elapsed = performance.now() - t0;
      if (round >= WARMUP_ROUNDS) {
        latencies.push(...roundLatencies);
        acceptedTotal += quoteIds.length;
        timedMs += elapsed;
      }
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const r = (x: number) => Math.round(x * 1000) / 1000;
    const figures = {
      benchmark: 'rfq',
      accepts: acceptedTotal,
      concurrency: CONCURRENCY,
      accepts_per_second: Math.round((acceptedTotal / timedMs) * 1000 * 10) / 10,
      latency_ms: {
        p50: r(percentile(sorted, 50)),
        p90: r(percentile(sorted, 90)),
        p99: r(percentile(sorted, 99)),
        max: r(sorted[sorted.length - 1]),
      },
      ...benchEnvironment('each accept committed before its answer'),
    };
    console.log(JSON.stringify(figures, null, 2));
    console.log(
      `rfq accepts over HTTP: ${figures.accepts_per_second}/s at concurrency ${CONCURRENCY}, p99 ${figures.latency_ms.p99} ms`,
    );
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/rfq.json', JSON.stringify(figures, null, 2) + '\n');
  } finally {
    await created.close();
  }
}

void main();
