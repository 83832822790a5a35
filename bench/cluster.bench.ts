/**
 * bench:cluster — POST /api/v1/orders through 1 and through 3 instances of the built service on
 * one PostgreSQL and one Redis (cluster mode: DATABASE_URL + REDIS_URL), beside the SQLite single
 * process, and realtime delivery across instances; with the CPU each part used. One run:
 *
 *   1. `npm run services` (test/support/services.ts): a throwaway PostgreSQL cluster and
 *      redis-server; instance A on them, and a SQLite service (its own temporary DATA_DIR);
 *      16 traders' test keys on each (bench:orders' order stream, support/order-setup.ts);
 *   2. 1 instance: a warm-up, then saturation (autocannon, CONNECTIONS connections), then an
 *      evenly paced open-loop phase at half of this saturation rate (support/order-load.ts);
 *   3. SQLite, one process: the same, paced at the same rate; then it is stopped;
 *   4. 3 instances: B and C join A; load spread round-robin over the three (autocannon gives
 *      connection i to instance i mod 3; the paced generator sends request k to instance k mod 3),
 *      so two requests in three reach a non-writer and are forwarded to the paper world's writer;
 *   5. realtime: subscribers on B and C (orderbook:<market> and the private orders channel)
 *      while paced orders go through A (support/cross-instance-delivery.ts).
 * During each phase the CPU of every part is read from /proc: each instance, the SQLite
 * service, PostgreSQL (postmaster and all its backends), redis-server, and this process (the
 * load generator and the subscribers). Any non-2xx answer other than 503 WRITER_UNAVAILABLE, a
 * connection error, or a delivery that never came fails the run (exit 1) after the report.
 * Prints a table and writes bench/results/cluster-<date>.json. BENCH_PHASE_SECONDS (10) and
 * BENCH_WARMUP_SECONDS (5) set the phase lengths; BENCH_ECHO=1 shows the servers' output.
 */
import autocannon, { type RawRequest } from 'autocannon';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startServices } from '../test/support/services.js';
import {
  ALLOWED_REFUSAL,
  cpuMsPerOrder,
  deliveryFailures,
  failuresOf,
  printReport,
  writeResults,
  type Configuration,
  type Phase,
} from './cluster-report.js';
import { jsonClient, traderTestKey } from './support/api-client.js';
import { crossInstanceDelivery, type DeliveryFigures } from './support/cross-instance-delivery.js';
import { answerLabel, fromAutocannon, paced, print } from './support/order-load.js';
import {
  json,
  MARKETABLE_SHARE,
  orderStream,
  postgresMail,
  seededMarkets,
  traderKeys,
  TRADERS,
} from './support/order-setup.js';
import {
  childProcesses,
  cpuLine,
  metered,
  parentPid,
  processPart,
  selfPart,
  treePart,
  type CpuPart,
} from './support/process-cpu.js';
import { startBenchServer, type BenchServer } from './support/server.js';

/** The repository root (this file runs from dist-bench/bench/). */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PHASE_SECONDS = Number(process.env.BENCH_PHASE_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
/** A multiple of 3: 11 connections per instance when spread over three. */
const CONNECTIONS = 33;
/** Realtime: orders a second through A, seconds (the first one not counted), sockets per instance. */
const DELIVERY_RATE = 50;
const DELIVERY_SECONDS = 8;
const DELIVERY_WARMUP_SECONDS = 1;
const DELIVERY_SOCKETS_PER_INSTANCE = 2;
/** Books grow for the whole run: enough money and open-order room for every resting order. */
const ROOMY = {
  SANDBOX_STARTING_BALANCE_CENTS: '1000000000000',
  MAX_OPEN_ORDERS_PER_KEY: '1000000',
};

type Stream = ReturnType<typeof orderStream>;

/** One order through the stream, checked: a setup that cannot place one measures nothing. */
async function probe(server: BenchServer, stream: Stream): Promise<void> {
  const { key, body } = stream();
  const r = await json(`${server.api}/orders`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body,
  });
  if (r.status !== 201) throw new Error(`probe order: ${r.status} ${JSON.stringify(r.body)}`);
}

/** Autocannon over `servers` (connection i to server i mod n), non-2xx tallied by code. */
async function saturate(servers: BenchServer[], stream: Stream, seconds: number) {
  const answers: Record<string, number> = {};
  const setupRequest = (req: RawRequest): RawRequest => {
    const { key, body } = stream();
    return { ...req, headers: { 'content-type': 'application/json', 'x-api-key': key }, body };
  };
  const onResponse = (status: number, body: string): void => {
    if (status < 300) return;
    const label = answerLabel(status, body);
    answers[label] = (answers[label] ?? 0) + 1;
  };
  const r = await autocannon({
    url: servers.map((s) => `http://127.0.0.1:${s.port}`),
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{ method: 'POST', path: '/api/v1/orders', setupRequest, onResponse }],
  });
  return { ...fromAutocannon(r, null), answers };
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  const loadAtStart = loadavg();
  console.log(
    `bench:cluster: ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), node ${process.version}, load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}; ${CONNECTIONS} connections, ${PHASE_SECONDS} s a phase after ${WARMUP_SECONDS} s of warm-up, ${TRADERS} traders`,
  );
  const cleanups: (() => Promise<void>)[] = [];
  const step = (what: string): void =>
    console.log(`[${Math.round((Date.now() - startedAt) / 1000)} s] ${what}`);
  const failures: string[] = [];
  try {
    const [servicesStarted, sqliteStarted] = await Promise.allSettled([
      startServices(90_000, ROOT),
      startBenchServer('cluster-sqlite', ROOMY),
    ]);
    for (const s of [servicesStarted, sqliteStarted]) {
      if (s.status === 'fulfilled') cleanups.push(() => s.value.stop());
    }
    if (servicesStarted.status === 'rejected') throw servicesStarted.reason;
    if (sqliteStarted.status === 'rejected') throw sqliteStarted.reason;
    const services = servicesStarted.value;
    const sqlite = sqliteStarted.value;
    step('PostgreSQL, Redis and the SQLite service are up');
    const admin = new pg.Client({ connectionString: services.databaseUrl });
    await admin.connect();
    cleanups.unshift(() => admin.end());
    // The instances share the secrets: a key made on one is checked on every other.
    const clusterEnv = {
      ...ROOMY,
      DATABASE_URL: services.databaseUrl,
      REDIS_URL: services.redisUrl,
      JWT_SECRET: randomBytes(24).toString('hex'),
      SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    };
    const a = await startBenchServer('cluster-a', clusterEnv);
    cleanups.unshift(() => a.stop());
    step('instance A is ready');

    const backend = await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const postmaster = parentPid(backend.rows[0].pid);
    const redis = childProcesses(services.child.pid!).find((c) => c.comm === 'redis-server');
    if (postmaster === null || redis === undefined) {
      throw new Error('PostgreSQL or redis-server process not found');
    }
    const instances: { name: string; server: BenchServer }[] = [{ name: 'A', server: a }];
    let sqliteAlive = true;
    const parts = (): CpuPart[] => [
      ...instances.map((i) => processPart(`instance ${i.name}`, i.server.proc.pid!)),
      ...(sqliteAlive ? [processPart('sqlite service', sqlite.proc.pid!)] : []),
      treePart('postgres', postmaster),
      processPart('redis', redis.pid),
      selfPart('load generator'),
    ];
    const phase = async (name: string, run: () => Promise<Phase['figures']>): Promise<Phase> => {
      const { result, cpu } = await metered(parts(), run);
      print(name, result);
      console.log(`  ${cpuLine(cpu)}`);
      const p = { name, figures: result, cpu };
      failures.push(...failuresOf(p));
      return p;
    };

    const markets = seededMarkets(ROOT);
    const [pgKeys, sqliteKeys] = await Promise.all([
      traderKeys(a.api, postgresMail(admin)),
      traderKeys(sqlite.api, sqlite.dataDir),
    ]);
    // The same request sequence on both databases; the cluster's continues from 1 to 3 instances.
    const pgStream = orderStream(markets, pgKeys);
    const sqliteStream = orderStream(markets, sqliteKeys);
    await probe(a, pgStream);
    await probe(sqlite, sqliteStream);
    step(`${TRADERS} traders' keys on each database`);

    const configs: Configuration[] = [];
    await saturate([a], pgStream, WARMUP_SECONDS);
    const oneSat = await phase('1 instance: saturation', () =>
      saturate([a], pgStream, PHASE_SECONDS),
    );
    const rate = Math.max(1, Math.floor(oneSat.figures.requestsPerSec / 2));
    const onePaced = await phase(`1 instance: paced ${rate}/s`, () =>
      paced('127.0.0.1', a.port, rate, PHASE_SECONDS, pgStream),
    );

    await saturate([sqlite], sqliteStream, WARMUP_SECONDS);
    const liteSat = await phase('SQLite process: saturation', () =>
      saturate([sqlite], sqliteStream, PHASE_SECONDS),
    );
    const litePaced = await phase(`SQLite process: paced ${rate}/s`, () =>
      paced('127.0.0.1', sqlite.port, rate, PHASE_SECONDS, sqliteStream),
    );
    const shared = ['postgres', 'redis'];
    configs.push({
      name: 'SQLite, one process',
      serverParts: ['sqlite service'],
      saturation: liteSat,
      paced: litePaced,
    });
    configs.push({
      name: 'PostgreSQL + Redis, 1 instance',
      serverParts: ['instance A', ...shared],
      saturation: oneSat,
      paced: onePaced,
    });
    await sqlite.stop();
    sqliteAlive = false;

    const [b, c] = await Promise.all([
      startBenchServer('cluster-b', clusterEnv),
      startBenchServer('cluster-c', clusterEnv),
    ]);
    cleanups.unshift(
      () => b.stop(),
      () => c.stop(),
    );
    instances.push({ name: 'B', server: b }, { name: 'C', server: c });
    step('instances B and C are ready');
    const three = [a, b, c];
    const writerPid = Number(
      (
        await admin.query<{ holder: string }>(
          "SELECT holder FROM platform.cluster_writers WHERE world = 'test'",
        )
      ).rows[0]?.holder.split(':')[1],
    );
    const writer = instances.find((i) => i.server.proc.pid === writerPid)?.name ?? '?';
    console.log(`paper world's writer: instance ${writer}`);
    await saturate(three, pgStream, WARMUP_SECONDS);
    const threeSat = await phase('3 instances: saturation', () =>
      saturate(three, pgStream, PHASE_SECONDS),
    );
    const threePaced = await phase(`3 instances: paced ${rate}/s`, () =>
      paced(
        '127.0.0.1',
        three.map((s) => s.port),
        rate,
        PHASE_SECONDS,
        pgStream,
      ),
    );
    configs.push({
      name: 'PostgreSQL + Redis, 3 instances',
      serverParts: ['instance A', 'instance B', 'instance C', ...shared],
      saturation: threeSat,
      paced: threePaced,
    });

    const rtKey = await traderTestKey(jsonClient(a.api), [
      'orders:read',
      'orders:write',
      'websocket',
    ]);
    // A follower refreshes its engine from the database as batches arrive: what that costs grows
    // with the paper world's open orders, which the phases before left (more on a faster machine).
    const openOrders = Number(
      (
        await admin.query<{ n: string }>(
          "SELECT COUNT(*) AS n FROM paper.orders WHERE status IN ('OPEN', 'PARTIALLY_FILLED')",
        )
      ).rows[0].n,
    );
    console.log(`open orders in the paper world before the realtime phase: ${openOrders}`);
    const held: { delivery?: DeliveryFigures } = {};
    const deliveryPhase = await phase(`realtime: ${DELIVERY_RATE}/s through A`, async () => {
      const delivery = await crossInstanceDelivery({
        host: '127.0.0.1',
        orderPort: a.port,
        subscribers: [
          { name: 'B', port: b.port },
          { name: 'C', port: c.port },
        ],
        connectionsPerInstance: DELIVERY_SOCKETS_PER_INSTANCE,
        key: rtKey.key,
        market: markets[0].id,
        rate: DELIVERY_RATE,
        seconds: DELIVERY_SECONDS,
        warmupSeconds: DELIVERY_WARMUP_SECONDS,
      });
      held.delivery = delivery;
      return delivery.orders;
    });
    const rt = held.delivery!;
    failures.push(...deliveryFailures(rt));

    const stored = await admin.query<{ n: string }>('SELECT COUNT(*) AS n FROM paper.orders');
    printReport(configs, CONNECTIONS, rate, {
      phase: deliveryPhase,
      figures: rt,
      rate: DELIVERY_RATE,
      openOrders,
    });
    const loadAtEnd = loadavg();
    console.log(
      `\nload average at start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}, at end ${loadAtEnd.map((l) => l.toFixed(2)).join(' ')}; paper orders stored on PostgreSQL: ${stored.rows[0].n}; ${Math.round((Date.now() - startedAt) / 1000)} s in all`,
    );
    const file = writeResults(ROOT, {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? null,
      loadavgAtStart: loadAtStart,
      loadavgAtEnd: loadAtEnd,
      setup: {
        service:
          'node dist/main.js (child processes), RATE_LIMITS_ENABLED=false, SANDBOX_FEED_INTERVAL_MS=0, LOG_LEVEL=warn',
        cluster:
          'DATABASE_URL + REDIS_URL from npm run services (PostgreSQL with fsync=off, redis-server without persistence), 1 then 3 instances; load round-robin over the instances, non-writers forward to the paper world writer',
        sqlite: 'one process, its own DATA_DIR (WAL, synchronous=NORMAL)',
        loadGenerator: `bench:orders' (support/order-load.ts): autocannon, ${CONNECTIONS} connections, at saturation; the paced open-loop raw-socket client (64 connections) at half of the 1-instance saturation rate, latency from the due time`,
        orderMix: `${Math.round((1 - MARKETABLE_SHARE) * 100)}% resting LIMIT, ${Math.round(MARKETABLE_SHARE * 100)}% marketable over ${markets.length} markets; ${TRADERS} traders' test keys`,
        phaseSeconds: PHASE_SECONDS,
        warmupSeconds: WARMUP_SECONDS,
        connections: CONNECTIONS,
        allowedRefusal: ALLOWED_REFUSAL,
        delivery: `${DELIVERY_RATE} orders/s for ${DELIVERY_SECONDS} s (first ${DELIVERY_WARMUP_SECONDS} s not counted) through A over one connection, ${DELIVERY_SOCKETS_PER_INSTANCE} sockets on each of B and C`,
      },
      writer,
      pacedRatePerSec: rate,
      configurations: configs.map((c) => ({ ...c, serverCpuMsPerOrder: cpuMsPerOrder(c) })),
      delivery: { phase: deliveryPhase, openOrdersAtStart: openOrders, ...rt },
      paperOrdersStored: Number(stored.rows[0].n),
      failures,
    });
    console.log(`wrote ${file}`);
  } finally {
    for (const clean of cleanups) await clean().catch((err: unknown) => console.error(err));
  }
  if (failures.length > 0) {
    console.error(`\nbench:cluster FAILED:\n  ${failures.join('\n  ')}`);
    process.exitCode = 1;
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
