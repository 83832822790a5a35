/**
 * bench:orders-ab — POST /api/v1/orders of two builds of the service side by side in one run:
 * this checkout's (`candidate`) and the one of another checkout (`BENCH_BASELINE=<its root>`,
 * built: a `git worktree` of the commit to compare with), each a child process with its own data
 * directory, traders and keys, driven by the same load generator with the same order stream,
 * alternating baseline and candidate (A B A B ...) after a warm-up of each.
 *
 * On a machine others load, the orders/s of one phase say mostly how much CPU it happened to
 * get; the server CPU per order (from /proc) moves far less, and comparing two builds of the same
 * service in the same run, round by round, leaves out what moves between runs. It prints each
 * round's figures and the candidate's CPU per order as a share of the baseline's (per round and
 * the median), and writes bench/results/orders-ab.json.
 * BENCH_ROUNDS (default 4), BENCH_PHASE_SECONDS (default 8), BENCH_WARMUP_SECONDS (default 8).
 * BENCH_PG=1 runs both on PostgreSQL: a throwaway cluster (test/support/services.ts) holding one
 * database per build (DATABASE_URL, one instance each, no Redis). The server CPU per order is
 * then the Node process's (its pg worker thread included), not PostgreSQL's backends'.
 * BENCH_IDEMPOTENCY=1 sends every order with an Idempotency-Key of its own (the claim, the stored
 * answer and the engine writer's fence of applied keys on the path).
 */
import autocannon, { type RawRequest } from 'autocannon';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measured, print, type Figures } from './support/order-load.js';
import {
  json,
  orderStream,
  postgresMail,
  seededMarkets,
  traderKeys,
  type MailReader,
} from './support/order-setup.js';
import pg from 'pg';
import { startServices, type Services } from '../test/support/services.js';
import { startBenchServer, type BenchServer } from './support/server.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PHASE_SECONDS = Number(process.env.BENCH_PHASE_SECONDS ?? 8);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 8);
const ROUNDS = Math.max(2, Number(process.env.BENCH_ROUNDS ?? 4));
const KEYED = process.env.BENCH_IDEMPOTENCY === '1';
const CONNECTIONS = 32;
const SERVER_ENV = {
  SANDBOX_STARTING_BALANCE_CENTS: '1000000000000',
  MAX_OPEN_ORDERS_PER_KEY: '1000000',
};

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round3 = (x: number): number => Math.round(x * 1000) / 1000;

interface Side {
  name: 'baseline' | 'candidate';
  server: BenchServer;
  stream: () => { key: string; body: string };
  rounds: Figures[];
}

async function prepare(
  name: Side['name'],
  server: BenchServer,
  mail: MailReader | undefined,
): Promise<Side> {
  const keys = await traderKeys(server.api, mail ?? server.dataDir);
  const stream = orderStream(seededMarkets(ROOT), keys);
  const probe = stream();
  const first = await json(`${server.api}/orders`, {
    method: 'POST',
    headers: { 'x-api-key': probe.key, 'content-type': 'application/json' },
    body: probe.body,
  });
  if (first.status !== 201) {
    throw new Error(`${name} probe order: ${first.status} ${JSON.stringify(first.body)}`);
  }
  return { name, server, stream, rounds: [] };
}

function orders(side: Side, duration: number) {
  const setupRequest = (req: RawRequest): RawRequest => {
    const { key, body } = side.stream();
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-api-key': key,
    };
    if (KEYED) headers['idempotency-key'] = randomUUID();
    return { ...req, headers, body };
  };
  return () =>
    autocannon({
      url: `http://127.0.0.1:${side.server.port}`,
      connections: CONNECTIONS,
      duration,
      requests: [{ method: 'POST', path: '/api/v1/orders', setupRequest }],
    });
}

async function main(): Promise<void> {
  const baselineRoot = process.env.BENCH_BASELINE;
  if (baselineRoot === undefined || baselineRoot === '') {
    throw new Error('BENCH_BASELINE=<root of the built checkout to compare with> is required');
  }
  const servers: BenchServer[] = [];
  let services: Services | null = null;
  const clients: pg.Client[] = [];
  const mails: Partial<Record<Side['name'], MailReader>> = {};
  try {
    const dbs = { baseline: {}, candidate: {} } as Record<Side['name'], Record<string, string>>;
    if (process.env.BENCH_PG === '1') {
      services = await startServices(90_000, ROOT);
      const admin = new pg.Client({ connectionString: services.databaseUrl });
      await admin.connect();
      for (const name of ['baseline', 'candidate'] as const) {
        await admin.query(`CREATE DATABASE ab_${name}`);
        const url = new URL(services.databaseUrl);
        url.pathname = `/ab_${name}`;
        dbs[name] = { DATABASE_URL: url.toString() };
        const client = new pg.Client({ connectionString: url.toString() });
        await client.connect();
        clients.push(client);
        mails[name] = postgresMail(client);
      }
      await admin.end();
    }
    servers.push(
      await startBenchServer(
        'ab-baseline',
        { ...SERVER_ENV, ...dbs.baseline },
        resolve(baselineRoot),
      ),
    );
    servers.push(await startBenchServer('ab-candidate', { ...SERVER_ENV, ...dbs.candidate }));
    const sides = [
      await prepare('baseline', servers[0], mails.baseline),
      await prepare('candidate', servers[1], mails.candidate),
    ];
    console.log(
      `bench:orders-ab: ${cpus().length} CPUs, node ${process.version}, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(
          ' ',
        )}; baseline ${resolve(baselineRoot)}, candidate ${ROOT}; ${services === null ? 'SQLite' : 'PostgreSQL'}; ${CONNECTIONS} connections, ${PHASE_SECONDS} s a phase, ${ROUNDS} rounds A B`,
    );
    for (const side of sides) await orders(side, WARMUP_SECONDS)();
    const shares: number[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      for (const side of sides) {
        const f = await measured(side.server.proc.pid!, orders(side, PHASE_SECONDS));
        side.rounds.push(f);
        print(`round ${r} ${side.name} POST /orders (saturation)`, f);
      }
      const [b, c] = sides.map((s) => s.rounds[r - 1].serverCpuUsPerRequest);
      if (b !== null && c !== null && b > 0) shares.push(round3(c / b));
    }
    const summary = (side: Side) => ({
      ordersPerSec: median(side.rounds.map((f) => f.requestsPerSec)),
      serverCpuUsPerOrder: median(side.rounds.map((f) => f.serverCpuUsPerRequest ?? 0)),
      serverCores: median(side.rounds.map((f) => f.sched?.cores ?? 0)),
      p99Ms: median(side.rounds.map((f) => f.p99Ms)),
    });
    const [base, cand] = sides.map(summary);
    const cpuShare = shares.length === 0 ? null : round3(median(shares));
    console.log(
      `\ncandidate CPU per order as a share of the baseline's: median ${cpuShare} (rounds ${shares.join(', ')}); baseline ${base.serverCpuUsPerOrder} us, candidate ${cand.serverCpuUsPerOrder} us; orders/s ${base.ordersPerSec} / ${cand.ordersPerSec}; load average at end ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const outDir = join(ROOT, 'bench', 'results');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(
      join(outDir, 'orders-ab.json'),
      JSON.stringify(
        {
          node: process.version,
          date: new Date().toISOString(),
          loadavgAtEnd: loadavg(),
          database: services === null ? 'sqlite' : 'postgres',
          baseline: { root: resolve(baselineRoot), ...base },
          candidate: { root: ROOT, ...cand },
          candidateCpuShareMedian: cpuShare,
          candidateCpuShareRounds: shares,
          rounds: Object.fromEntries(sides.map((s) => [s.name, s.rounds])),
        },
        null,
        2,
      ) + '\n',
    );
  } finally {
    for (const c of clients) await c.end();
    for (const s of servers) await s.stop();
    await services?.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
