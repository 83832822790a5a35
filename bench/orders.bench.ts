/**
 * bench:orders — POST /api/v1/orders of the built service (`node dist/main.js`, a child process)
 * side by side with a lean reference server (support/reference-server.ts: Fastify + better-sqlite3,
 * one durable insert per order), both driven by the same load generator with the same request
 * stream, in the same run, alternating reference and service (A B A B).
 *
 * The service does the whole job: schema validation, authentication with an X-API-Key, the
 * engine, and a durable SQLite commit of the order, its fills, positions and ledger before the
 * answer. Rate limits are configured out of the way (RATE_LIMITS_ENABLED=false), the paper feed
 * is stopped (SANDBOX_FEED_INTERVAL_MS=0) and the data directory is temporary.
 *
 * Phases, against 127.0.0.1 only:
 *   1. GET health of each server at saturation (autocannon), short: what a server answers at all;
 *   2. POST /orders at saturation (autocannon, 32 connections), ROUNDS rounds of reference then
 *      service, each after a warm-up: orders/s of each, their ratio, the server CPU per order
 *      (from /proc, Linux; it does not depend on the load generator sharing the machine), the
 *      server's cores and how much of the time its event loop ran on a CPU or waited for one
 *      (/proc/<pid>/schedstat), the main thread's share of its CPU (the rest: GC and compiler
 *      helpers, worker threads), and the ratio per server CPU second; before the rounds, each
 *      server's CPU with no load at all (timers, background workers);
 *   3. POST /orders evenly paced at half of the reference's median saturation rate (an open-loop
 *      generator: one request every 1/rate s, each latency counted from the moment it was due,
 *      so no coordinated omission), ROUNDS rounds of reference then service: p50/p99 of each.
 * The order stream: mostly resting LIMIT orders at non-crossing prices over every market, so
 * books grow, and a share of marketable orders that trade with the house and with other traders'
 * resting orders; 16 traders' test keys, round robin.
 * Each of the service's rounds also prints its own view of the phase (support/loop-stats.ts): how
 * late its event loop ran a 10 ms timer (p50/p99/max) and its GC pauses by kind, steadier than
 * the client's latencies on a loaded machine; BENCH_STALLS=<ms> lists every stall longer than that
 * with its split into time on a CPU, waiting for one, and GC (support/stall-monitor.ts).
 * BENCH_SERVICE_ONLY=1 runs only phase 2 against the service (no reference, no file written):
 * with BENCH_PROF=<dir> (support/server-args.ts) that is a CPU profile of the order path alone;
 * BENCH_PACED_RATE=<orders/s> then adds paced rounds at that rate.
 * On a machine others load, the orders/s ratio moves with how much CPU each phase happened to get
 * (a server at saturation there is not idle in its code: its event loop is busy but waits on the
 * run queue most of the time); the ratio per server CPU second moves far less.
 * Prints the figures and writes bench/results/orders.json. Targets (issue 23): service orders/s
 * at least 1.0x the reference's (aim 1.5x); service p99 under 5 ms at half the reference's
 * saturation rate, paced.
 */
import autocannon, { type RawRequest } from 'autocannon';
import Database from 'better-sqlite3';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, measured, paced, print, type Figures } from './support/order-load.js';
import {
  json,
  MARKETABLE_SHARE,
  orderStream,
  seededMarkets,
  traderKeys,
  TRADERS,
} from './support/order-setup.js';
import { startReferenceServer } from './support/reference.js';
import { type LoopStats, loopStatsLine, loopStatsOf } from './support/loop-stats.js';
import { startBenchServer } from './support/server.js';

/** The repository root (this file runs from dist-bench/bench/). */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PHASE_SECONDS = Number(process.env.BENCH_PHASE_SECONDS ?? 10);
const HEALTH_SECONDS = 4;
/**
 * Before the rounds, each server takes this long at saturation: on a loaded machine 3 s left the
 * service still compiling its hot code in round 1 (27% of its CPU on V8's helper threads in one
 * such round, against 12-20% on all its other threads together once warm, WAL checkpointer
 * included), which the far smaller reference does not pay.
 */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 8);
const ROUNDS = Math.max(2, Number(process.env.BENCH_ROUNDS ?? 2));
const CONNECTIONS = 32;
const SERVICE_ONLY = process.env.BENCH_SERVICE_ONLY === '1';
/** Seconds each server's CPU is read with no load, after the warm-up. */
const IDLE_SECONDS = 3;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** A process's CPU per wall second while nothing is asked of it; null off Linux. */
async function idleCpu(pid: number, seconds: number): Promise<number | null> {
  const before = cpuSeconds(pid);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const after = cpuSeconds(pid);
  return before === null || after === null ? null : round3((after - before) / seconds);
}

async function main(): Promise<void> {
  // The service's own view of each of its phases (event-loop delay, GC pauses): support/loop-stats.ts.
  process.env.BENCH_LOOP_STATS ??= '1';
  // Books grow for the whole run: enough money and open-order room for every resting order.
  const server = await startBenchServer('orders', {
    SANDBOX_STARTING_BALANCE_CENTS: '1000000000000',
    MAX_OPEN_ORDERS_PER_KEY: '1000000',
  });
  const reference = await startReferenceServer().catch(async (err: unknown) => {
    await server.stop();
    throw err;
  });
  const { api, dataDir, port } = server;
  const pid = server.proc.pid!;
  try {
    const keys = await traderKeys(api, dataDir);
    const markets = seededMarkets(ROOT);
    const stream = orderStream(markets, keys);
    const probe = stream();
    const first = await json(`${api}/orders`, {
      method: 'POST',
      headers: { 'x-api-key': probe.key, 'content-type': 'application/json' },
      body: probe.body,
    });
    if (first.status !== 201) {
      throw new Error(`probe order: ${first.status} ${JSON.stringify(first.body)}`);
    }
    const setupRequest = (req: RawRequest): RawRequest => {
      const { key, body } = stream();
      return { ...req, headers: { 'content-type': 'application/json', 'x-api-key': key }, body };
    };
    const servers = {
      reference: { port: reference.port, pid: reference.proc.pid!, health: '/health' },
      service: { port, pid, health: '/api/v1/health' },
    };
    type Name = keyof typeof servers;
    const NAMES: Name[] = ['reference', 'service'];
    const health = (name: Name, duration: number) => () =>
      autocannon({
        url: `http://127.0.0.1:${servers[name].port}${servers[name].health}`,
        connections: CONNECTIONS,
        duration,
      });
    const orders = (name: Name, duration: number) => () =>
      autocannon({
        url: `http://127.0.0.1:${servers[name].port}`,
        connections: CONNECTIONS,
        duration,
        requests: [{ method: 'POST', path: '/api/v1/orders', setupRequest }],
      });

    console.log(
      `bench:orders: ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), node ${process.version}, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(
          ' ',
        )}; ${CONNECTIONS} connections, ${PHASE_SECONDS} s a phase, ${ROUNDS} rounds A B, ${TRADERS} traders`,
    );
    if (SERVICE_ONLY) {
      await orders('service', WARMUP_SECONDS)();
      for (let r = 1; r <= ROUNDS; r++) {
        print(
          `round ${r} service POST /orders (saturation)`,
          await measured(pid, orders('service', PHASE_SECONDS)),
        );
      }
      // BENCH_PACED_RATE=<orders/s>: then the paced rounds against the service alone.
      const pacedRate = Number(process.env.BENCH_PACED_RATE ?? 0);
      for (let r = 1; pacedRate > 0 && r <= ROUNDS; r++) {
        const f = await loopStatsOf(server, () =>
          paced('127.0.0.1', port, pacedRate, PHASE_SECONDS, stream),
        );
        print(`round ${r} service POST /orders (paced ${pacedRate}/s)`, f.result);
        console.log(`  ${loopStatsLine(f.stats)}`);
      }
      return;
    }
    const healthOf = {} as Record<Name, Figures>;
    for (const name of NAMES) {
      await health(name, 1)();
      healthOf[name] = await measured(servers[name].pid, health(name, HEALTH_SECONDS));
      print(`${name} GET health (saturation)`, healthOf[name]);
    }
    for (const name of NAMES) await orders(name, WARMUP_SECONDS)();
    // What each server burns with no request at all (timers, background workers): under a load
    // that leaves it a fraction of a core, that is a real share of its CPU per order.
    const idleCores = {} as Record<Name, number | null>;
    for (const name of NAMES) {
      idleCores[name] = await idleCpu(servers[name].pid, IDLE_SECONDS);
      console.log(`${name} idle CPU over ${IDLE_SECONDS} s: ${idleCores[name] ?? '?'} cores`);
    }
    const saturation: Record<Name, Figures[]> = { reference: [], service: [] };
    const serviceLoop: { saturation: (LoopStats | null)[]; paced: (LoopStats | null)[] } = {
      saturation: [],
      paced: [],
    };
    /** Runs a phase; the service's phases with its loop stats, printed and kept. */
    const phase = async (
      name: Name,
      kind: 'saturation' | 'paced',
      run: () => Promise<Figures>,
    ): Promise<Figures> => {
      if (name !== 'service') return run();
      const { result, stats } = await loopStatsOf(server, run);
      serviceLoop[kind].push(stats);
      return Object.assign(result, { loopStatsLine: loopStatsLine(stats) });
    };
    const printWithLoop = (label: string, f: Figures & { loopStatsLine?: string }): void => {
      print(label, f);
      if (f.loopStatsLine !== undefined) console.log(`${''.padEnd(36)} ${f.loopStatsLine}`);
    };
    for (let r = 1; r <= ROUNDS; r++) {
      for (const name of NAMES) {
        const f = await phase(name, 'saturation', () =>
          measured(servers[name].pid, orders(name, PHASE_SECONDS)),
        );
        saturation[name].push(f);
        printWithLoop(`round ${r} ${name} POST /orders (saturation)`, f);
      }
    }
    const satOf = (name: Name): number => median(saturation[name].map((f) => f.requestsPerSec));
    const rate = Math.max(1, Math.floor(satOf('reference') / 2));
    const pacedOf: Record<Name, Figures[]> = { reference: [], service: [] };
    for (let r = 1; r <= ROUNDS; r++) {
      for (const name of NAMES) {
        const f = await phase(name, 'paced', () =>
          paced('127.0.0.1', servers[name].port, rate, PHASE_SECONDS, stream),
        );
        pacedOf[name].push(f);
        printWithLoop(`round ${r} ${name} POST /orders (paced ${rate}/s)`, f);
      }
    }

    const db = new Database(join(dataDir, 'paper.sqlite'), { readonly: true });
    const count = (sql: string) => Number((db.prepare(sql).get() as { n: number }).n);
    const stored = {
      orders: count('SELECT COUNT(*) AS n FROM orders'),
      resting: count(
        "SELECT COUNT(*) AS n FROM orders WHERE status IN ('OPEN','PARTIALLY_FILLED')",
      ),
      trades: count('SELECT COUNT(*) AS n FROM trades'),
      referenceRows: await reference.rowCount(),
    };
    db.close();
    const summary = (name: Name) => ({
      saturationOrdersPerSec: satOf(name),
      serverCpuUsPerOrder: median(saturation[name].map((f) => f.serverCpuUsPerRequest ?? 0)),
      // Where the server's time went at saturation (null off Linux): see Figures.sched.
      serverCores: median(saturation[name].map((f) => f.sched?.cores ?? 0)),
      eventLoopWaitingForCpu: median(saturation[name].map((f) => f.sched?.mainRunQueue ?? 0)),
      mainThreadShareOfCpu: median(saturation[name].map((f) => f.sched?.mainThreadShare ?? 0)),
      pacedP50Ms: round3(median(pacedOf[name].map((f) => f.p50Ms))),
      pacedP99Ms: round3(median(pacedOf[name].map((f) => f.p99Ms))),
      idleCores: idleCores[name],
      healthPerSec: healthOf[name].requestsPerSec,
      healthServerCpuUsPerRequest: healthOf[name].serverCpuUsPerRequest,
    });
    const ref = summary('reference');
    const svc = summary('service');
    const ratio = round3(svc.saturationOrdersPerSec / ref.saturationOrdersPerSec);
    // Orders per server CPU second, service to reference: what the ratio would be if both got the
    // same CPU. On a machine others load it moves far less than the orders/s ratio, which also
    // carries how much CPU each phase happened to get.
    const cpuRatio =
      svc.serverCpuUsPerOrder > 0 ? round3(ref.serverCpuUsPerOrder / svc.serverCpuUsPerOrder) : 0;
    const roundRatios = saturation.service.map((f, i) =>
      round3(f.requestsPerSec / saturation.reference[i].requestsPerSec),
    );
    const result = {
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? null,
      loadavgAtEnd: loadavg(),
      date: new Date().toISOString(),
      setup: {
        service:
          'node dist/main.js (child process), RATE_LIMITS_ENABLED=false, SANDBOX_FEED_INTERVAL_MS=0, LOG_LEVEL=warn',
        reference:
          'bench/support/reference-server.ts (child process): Fastify 5 + better-sqlite3 (WAL, synchronous=NORMAL), one INSERT ... RETURNING per order, as ../shared/anchors/http/server.mjs',
        loadGenerator:
          'the same for both, same machine, 127.0.0.1: autocannon (32 connections) at saturation; an evenly paced open-loop raw-socket client (64 keep-alive connections) at half of the reference saturation rate, latency from the due time',
        order: `${ROUNDS} rounds of reference then service (A B A B), saturation rounds first, then paced rounds`,
        connections: CONNECTIONS,
        phaseSeconds: PHASE_SECONDS,
        warmupSeconds: WARMUP_SECONDS,
        orderMix: `${Math.round((1 - MARKETABLE_SHARE) * 100)}% resting LIMIT GTC at non-crossing prices over ${markets.length} markets (YES and NO terms), ${Math.round(MARKETABLE_SHARE * 100)}% marketable (MARKET or LIMIT IOC through the reference); ${TRADERS} traders' test keys`,
        durability:
          'service: each order, its fills, positions and ledger committed in SQLite (WAL, synchronous=NORMAL) before the answer; reference: one row committed before the answer',
      },
      reference: ref,
      service: svc,
      ratioServiceToReference: ratio,
      ratioPerServerCpuSecond: cpuRatio,
      roundRatios,
      pacedRatePerSec: rate,
      // The service's event-loop delay and GC pauses over each of its rounds (support/loop-stats.ts).
      serviceLoop,
      rounds: { saturation, paced: pacedOf, health: healthOf },
      storedAfterRun: stored,
      targets: {
        ordersPerSecAtLeastReference: { target: 1.0, aim: 1.5, measured: ratio, met: ratio >= 1 },
        serviceP99Under5msPacedAtHalfReference: {
          targetMs: 5,
          measuredMs: svc.pacedP99Ms,
          met: svc.pacedP99Ms < 5,
        },
      },
    };
    console.log(
      `\nsaturation (median of ${ROUNDS}): reference ${ref.saturationOrdersPerSec} orders/s (${ref.serverCpuUsPerOrder} us CPU/order), service ${svc.saturationOrdersPerSec} orders/s (${svc.serverCpuUsPerOrder} us CPU/order); ratio ${ratio} (rounds ${roundRatios.join(', ')}; target >= 1.0: ${ratio >= 1 ? 'met' : 'NOT met'}, aim 1.5)`,
    );
    console.log(
      `per server CPU second: ratio ${cpuRatio}; server cores at saturation: reference ${ref.serverCores}, service ${svc.serverCores}; event loop waiting for a CPU: reference ${Math.round(ref.eventLoopWaitingForCpu * 100)}%, service ${Math.round(svc.eventLoopWaitingForCpu * 100)}% of the time`,
    );
    console.log(
      `paced at ${rate}/s (half the reference): p99 reference ${ref.pacedP99Ms} ms, service ${svc.pacedP99Ms} ms (target < 5 ms: ${svc.pacedP99Ms < 5 ? 'met' : 'NOT met'}); p50 ${ref.pacedP50Ms} / ${svc.pacedP50Ms} ms`,
    );
    const pacedLoop = serviceLoop.paced.filter((x) => x !== null);
    if (pacedLoop.length > 0) {
      console.log(
        `service over its paced rounds: event-loop delay p99 ${pacedLoop.map((x) => x.delayP99Ms).join(' / ')} ms, max ${pacedLoop.map((x) => x.delayMaxMs).join(' / ')} ms; GC pauses ${pacedLoop.map((x) => x.gcTotalMs).join(' / ')} ms`,
      );
    }
    console.log(
      `stored: service ${stored.orders} orders (${stored.resting} resting, ${stored.trades} trades); reference ${stored.referenceRows} rows`,
    );
    const outDir = join(ROOT, 'bench', 'results');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'orders.json'), JSON.stringify(result, null, 2) + '\n');
    console.log(`wrote ${join(outDir, 'orders.json')}`);
  } finally {
    await reference.stop();
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
