/**
 * bench:reset — POST /sandbox/reset for a paper account with 10,000 open orders. Boots the real
 * app over a temporary DATA_DIR (file-backed SQLite in WAL mode, as in production), rests 10,000
 * orders for one account across 10 markets (committed as POST /orders would), then times:
 * - service: SandboxControlsService.reset, the whole service path (engine resetAccount, the one
 *   SQLite transaction that mirrors it, the open-order index, the event bus);
 * - split: the same path with the engine command and the SQL commit timed apart;
 * - http: the full request over HTTP with a real test key (pipeline, auth, scopes, JSON).
 * Before each timed run the setup's garbage is collected and the WAL checkpointed, so neither
 * lands in the figure (an automatic checkpoint can still fall on any commit in production).
 * Prints the figures and writes bench/results/reset.json. Target: under 50 ms.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Database } from 'better-sqlite3';
import type { SqlConnection } from '../src/common/sql/sql-connection.js';
import { benchEnvironment } from './support/bench-environment.js';
import { startInProcessApp } from './support/in-process-app.js';
import { startServices } from '../test/support/services.js';
import { jsonClient, openMarkets, traderTestKey } from './support/api-client.js';
import type { Credential } from '../src/common/http/request-context.js';
import type { EngineEvent } from '../src/engine/index.js';
import { SandboxControlsService } from '../src/modules/sandbox/sandbox-controls.service.js';
import { EngineRegistry } from '../src/modules/trading/engine-registry.js';
import { WorldDatabases } from '../src/modules/worlds/world-databases.service.js';
import { PaperWorldRecords } from '../src/modules/worlds/paper-world-records.service.js';
import { IdempotencyService } from '../src/modules/access/idempotency.service.js';
import type { EngineRuntime } from '../src/modules/trading/engine-runtime.js';
import { PgSyncConnection } from '../src/common/sql/pg-sync-connection.js';
import { cpuUsage } from 'node:process';

/**
 * `--postgres`: the same on PostgreSQL (a throwaway cluster from `npm run services`), with 1,000
 * orders and 5 runs: resting the orders between runs is one round trip per order there.
 */
const POSTGRES = process.argv.includes('--postgres');
/** `--orders=N`: open orders per run (default 10,000 on SQLite, 1,000 on PostgreSQL). */
const ORDERS_ARG = process.argv.find((a) => a.startsWith('--orders='));
const ORDERS =
  ORDERS_ARG !== undefined
    ? Number(ORDERS_ARG.slice('--orders='.length))
    : POSTGRES
      ? 1_000
      : 10_000;
const MARKETS = 10;
const RUNS_ARG = process.argv.find((a) => a.startsWith('--runs='));
const RUNS = RUNS_ARG !== undefined ? Number(RUNS_ARG.slice('--runs='.length)) : POSTGRES ? 5 : 15;
const WARMUP = 2;
const TARGET_MS = 50;

/** Rests `n` BUY YES orders (prices 1..10, 1 contract) for the account, committed in one batch. */
function restOrders(
  rt: EngineRuntime,
  db: SqlConnection,
  userId: string,
  tag: string,
  markets: string[],
): void {
  const events: EngineEvent[] = [];
  const engine = rt.committedEngine();
  for (let i = 0; i < ORDERS; i++) {
    const r = engine.placeOrder({
      accountId: userId,
      marketId: markets[i % markets.length],
      action: 'BUY',
      side: 'YES',
      type: 'LIMIT',
      price: 1 + (i % 10),
      quantity: 1,
      tag,
    });
    if (!r.ok) throw new Error(`placeOrder: ${r.code} ${r.message}`);
    for (const e of r.events) events.push(e);
  }
  rt.commit(events);
  const stored = storedOrders(db, userId);
  if (stored !== ORDERS) throw new Error(`expected ${ORDERS} stored orders, found ${stored}`);
  settle(db);
}

// The setup's garbage (10,000 orders and their events) and its WAL pages are not the reset's
// cost: collect the one and checkpoint the other before each timed run.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
function settle(db: SqlConnection): void {
  if (db.dialect !== 'postgres') (db as unknown as Database).pragma('wal_checkpoint(TRUNCATE)');
  gc();
}

function storedOrders(db: SqlConnection, userId: string): number {
  const row = db.prepare('SELECT COUNT(*) AS n FROM orders WHERE user_id = ?').get(userId);
  return (row as { n: number }).n;
}

function stats(ms: number[]): {
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
} {
  const s = [...ms].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return {
    min: r(s[0]),
    p50: r(s[Math.floor(s.length / 2)]),
    p90: r(s[Math.min(s.length - 1, Math.floor(s.length * 0.9))]),
    p99: r(s[Math.min(s.length - 1, Math.floor(s.length * 0.99))]),
    max: r(s[s.length - 1]),
    mean: r(s.reduce((a, b) => a + b, 0) / s.length),
  };
}

async function main(): Promise<void> {
  const services = POSTGRES ? await startServices(90_000, process.cwd()) : null;
  const created = await startInProcessApp(
    'reset',
    services === null ? {} : { DATABASE_URL: services.databaseUrl },
  );
  const { app, config } = created;
  try {
    const rt = app.get(EngineRegistry).get('test');
    const db = app.get(WorldDatabases).connection('test');
    const service = app.get(SandboxControlsService);
    const markets = openMarkets(rt).slice(0, MARKETS);
    const start = config.sandboxStartingBalanceCents;

    // 1. The service path, as the controller calls it.
    const cred: Credential = {
      type: 'API_KEY',
      userId: 'usr_bench_reset',
      keyId: 'key_bench_reset',
      environment: 'test',
      world: 'test' as const,
      scopes: ['orders:write', 'wallet:write'],
      tier: 'FREE',
    };
    rt.ensureAccount(cred.userId);
    const service_ms: number[] = [];
    const service_cpu_ms: number[] = [];
    // PostgreSQL: requests sent to the server (each a round trip) by one reset.
    const round_trips: number[] = [];
    for (let run = 0; run < WARMUP + RUNS; run++) {
      restOrders(rt, db, cred.userId, cred.keyId!, markets);
      const trips = PgSyncConnection.roundTrips;
      const cpu = cpuUsage();
      const t0 = performance.now();
      const res = await service.reset(cred);
      const ms = performance.now() - t0;
      const used = cpuUsage(cpu);
      if (run >= WARMUP) {
        round_trips.push(PgSyncConnection.roundTrips - trips);
        service_cpu_ms.push((used.user + used.system) / 1000);
      }
      if (res.cancelled_orders !== ORDERS || storedOrders(db, cred.userId) !== 0) {
        throw new Error(`reset did not clear: ${JSON.stringify(res)}`);
      }
      if (run >= WARMUP) service_ms.push(ms);
    }

    // 2. The same path split into the engine command and the SQL commit.
    const engine_ms: number[] = [];
    const sql_ms: number[] = [];
    for (let run = 0; run < WARMUP + RUNS; run++) {
      restOrders(rt, db, cred.userId, cred.keyId!, markets);
      const t0 = performance.now();
      const r = rt.committedEngine().resetAccount(cred.userId, start);
      const t1 = performance.now();
      if (!r.ok) throw new Error(r.code);
      rt.commit(r.events);
      const t2 = performance.now();
      if (run >= WARMUP) {
        engine_ms.push(t1 - t0);
        sql_ms.push(t2 - t1);
      }
    }

    // 2b. Every part of the service path apart: the Idempotency-Key answers forgotten and each
    // paper-record cleaner (the reset's rest after the engine commit).
    const idempotency = app.get(IdempotencyService);
    const cleaners = (
      app.get(PaperWorldRecords) as unknown as {
        cleaners: Map<string, (u: string, w: 'test') => number | Promise<number>>;
      }
    ).cleaners;
    const part_ms: Record<string, number[]> = { forget_idempotency: [], records_clear: [] };
    for (const kind of cleaners.keys()) part_ms[kind] = [];
    for (let run = 0; run < WARMUP + RUNS; run++) {
      const t0 = performance.now();
      await idempotency.forgetPaperAnswers(cred.userId, 'test');
      const t1 = performance.now();
      for (const [kind, clean] of cleaners) {
        const c0 = performance.now();
        await clean(cred.userId, 'test');
        if (run >= WARMUP) part_ms[kind].push(performance.now() - c0);
      }
      const t2 = performance.now();
      if (run >= WARMUP) {
        part_ms.forget_idempotency.push(t1 - t0);
        part_ms.records_clear.push(t2 - t1);
      }
    }

    // 3. Over HTTP with a real test key of the seeded trader.
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.getHttpServer().address() as { port: number };
    const api = `http://127.0.0.1:${address.port}/api/v1`;
    const json = jsonClient(api);
    const {
      key: apiKey,
      keyId,
      userId,
    } = await traderTestKey(json, ['orders:write', 'wallet:write']);
    rt.ensureAccount(userId);
    const http_ms: number[] = [];
    for (let run = 0; run < WARMUP + RUNS; run++) {
      restOrders(rt, db, userId, keyId, markets);
      const t0 = performance.now();
      const res = await json('/sandbox/reset', {
        method: 'POST',
        headers: { 'x-api-key': apiKey },
      });
      const ms = performance.now() - t0;
      if (res.status !== 200 || res.body.cancelled_orders !== ORDERS) {
        throw new Error(`POST /sandbox/reset: ${res.status} ${JSON.stringify(res.body)}`);
      }
      if (run >= WARMUP) http_ms.push(ms);
    }

    const serviceStats = stats(service_ms);
    const figures = {
      benchmark: 'reset',
      database: POSTGRES ? 'postgres' : 'sqlite',
      open_orders: ORDERS,
      markets: MARKETS,
      runs: RUNS,
      target_ms: TARGET_MS,
      service_ms: serviceStats,
      // The process's CPU (main thread and the PostgreSQL worker thread) during the service path.
      service_cpu_ms: stats(service_cpu_ms),
      round_trips: POSTGRES ? stats(round_trips) : null,
      engine_ms: stats(engine_ms),
      sql_commit_ms: stats(sql_ms),
      parts_ms: Object.fromEntries(Object.entries(part_ms).map(([k, v]) => [k, stats(v)])),
      http_ms: stats(http_ms),
      meets_target: serviceStats.p90 < TARGET_MS,
      ...benchEnvironment(),
    };
    console.log(JSON.stringify(figures, null, 2));
    console.log(
      `reset of ${ORDERS} open orders: service path p50 ${serviceStats.p50} ms, p90 ${serviceStats.p90} ms (max ${serviceStats.max} ms), target < ${TARGET_MS} ms`,
    );
    mkdirSync('bench/results', { recursive: true });
    const out = `bench/results/reset${POSTGRES ? '-postgres' : ''}${ORDERS_ARG === undefined ? '' : `-${ORDERS}`}.json`;
    writeFileSync(out, JSON.stringify(figures, null, 2) + '\n');
  } finally {
    await created.close();
    await services?.stop();
  }
}

void main();
