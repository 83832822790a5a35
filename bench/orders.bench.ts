/**
 * bench:orders — HTTP POST /api/v1/orders through the whole stack of the built server
 * (`node dist/main.js` as a child process): JSON schema validation, authentication with an
 * X-API-Key, the engine, and a durable SQLite commit of the order, its fills, positions and
 * ledger before the answer. Rate limits are configured out of the way (RATE_LIMITS_ENABLED=false),
 * the paper feed is stopped (SANDBOX_FEED_INTERVAL_MS=0) and the data directory is temporary.
 *
 * Phases, against 127.0.0.1 only, each after a short warm-up:
 *   1. GET /api/v1/health at saturation (autocannon): what the same server answers at all;
 *   2. POST /orders at saturation (autocannon): mostly resting LIMIT orders at non-crossing
 *      prices over every market, so books grow, and a share of marketable orders that trade with
 *      the house and with other traders' resting orders; 16 traders' test keys, round robin;
 *   3. POST /orders at a fixed offered rate of half of phase 2 (autocannon overallRate);
 *   4. the same offered rate, paced evenly (an open-loop generator in this file): autocannon's
 *      overallRate lets each connection send its quota for a second as fast as it can at the
 *      start of that second, so phase 3 is half of saturation on average but bursts at full
 *      speed; phase 4 sends one request every 1/rate seconds and measures each latency from the
 *      moment the request was due (no coordinated omission), over lean raw-socket keep-alive
 *      connections (support/raw-http-client.ts) so the generator's own cost and lag stay small.
 * Also the server's CPU time per request (from /proc, Linux) for phases 1 and 2, which does not
 * depend on the load generator sharing the machine.
 * Prints the figures and writes bench/results/orders.json. Targets (issue 4): orders at least
 * 0.5x health; p99 under 5 ms at half of saturation.
 */
import autocannon, { type RawRequest, type Result } from 'autocannon';
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postRequest, RawHttpConnection } from './support/raw-http-client.js';
import { startBenchServer } from './support/server.js';

/** The repository root (this file runs from dist-bench/bench/). */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PHASE_SECONDS = Number(process.env.BENCH_PHASE_SECONDS ?? 12);
const WARMUP_SECONDS = 3;
const CONNECTIONS = 32;
/** Share of marketable orders (MARKET or crossing IOC); the rest rest on the book. */
const MARKETABLE_SHARE = 0.15;
/** Traders (each with a test key): the seeded trader plus fresh verified accounts. */
const TRADERS = 16;
const PASSWORD = 'bench-password-123';
const CLOCK_TICKS_PER_SEC = 100; // USER_HZ on Linux

async function json(
  url: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers = new Headers(init.headers);
  if (init.json !== undefined) headers.set('content-type', 'application/json');
  const res = await fetch(url, {
    ...init,
    headers,
    body: init.json === undefined ? init.body : JSON.stringify(init.json),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  };
}

/** Registers and verifies a fresh account (the mailed token is read from platform.sqlite). */
async function verifiedUser(api: string, dataDir: string, email: string): Promise<void> {
  const reg = await json(`${api}/auth/register`, {
    method: 'POST',
    json: { email, password: PASSWORD },
  });
  if (reg.status !== 201) throw new Error(`register ${email}: ${reg.status}`);
  const db = new Database(join(dataDir, 'platform.sqlite'), { readonly: true });
  const mail = db
    .prepare(
      "SELECT body FROM mail_outbox WHERE to_address = ? AND kind = 'EMAIL_VERIFICATION' ORDER BY id DESC LIMIT 1",
    )
    .get(email) as { body: string } | undefined;
  db.close();
  const token = /"token": "([0-9A-Za-z]+)"/.exec(mail?.body ?? '')?.[1];
  if (token === undefined) throw new Error(`no verification mail for ${email}`);
  const ok = await json(`${api}/auth/verify-email`, { method: 'POST', json: { token } });
  if (ok.status !== 200) throw new Error(`verify ${email}: ${ok.status}`);
}

async function testKey(api: string, email: string, password: string): Promise<string> {
  const login = await json(`${api}/auth/login`, { method: 'POST', json: { email, password } });
  if (login.status !== 200) throw new Error(`login ${email}: ${login.status}`);
  const key = await json(`${api}/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${String(login.body.token)}` },
    json: {
      name: 'bench',
      environment: 'test',
      scopes: ['orders:read', 'orders:write'],
      acknowledge_write_scopes: true,
    },
  });
  if (key.status !== 201) {
    throw new Error(`key ${email}: ${key.status} ${JSON.stringify(key.body)}`);
  }
  return String(key.body.key);
}

interface Market {
  id: string;
  reference: number;
}

function seededMarkets(): Market[] {
  const seeds = JSON.parse(readFileSync(join(ROOT, 'seeds', 'markets.json'), 'utf8')) as {
    slug: string;
    reference_price: number;
    status: string;
  }[];
  return seeds
    .filter((m) => m.status === 'OPEN')
    .map((m) => ({
      id: `mkt_${createHash('sha256').update(m.slug).digest('hex').slice(0, 20)}`,
      reference: m.reference_price,
    }));
}

/** A deterministic stream of (key, body) pairs: keys round robin, markets round robin. */
function orderStream(markets: Market[], keys: string[]): () => { key: string; body: string } {
  let i = 0;
  let seed = 20261122;
  const rnd = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
  return () => {
    const n = i++;
    const m = markets[n % markets.length];
    const key = keys[Math.floor(n / markets.length) % keys.length];
    const qty = 1 + Math.floor(rnd() * 5);
    let body: Record<string, unknown>;
    if (rnd() < MARKETABLE_SHARE) {
      // Marketable: a MARKET order, or an IOC LIMIT 8 cents through the reference.
      const action = rnd() < 0.5 ? 'BUY' : 'SELL';
      body =
        rnd() < 0.5
          ? { market_id: m.id, action, side: 'YES', type: 'MARKET', quantity: qty }
          : {
              market_id: m.id,
              action,
              side: 'YES',
              type: 'LIMIT',
              price: Math.min(99, Math.max(1, m.reference + (action === 'BUY' ? 8 : -8))),
              quantity: qty,
              time_in_force: 'IOC',
            };
    } else {
      // Resting: bids below the house ladder, asks above it, in YES or NO terms.
      const bid = rnd() < 0.5;
      const depth = 6 + Math.floor(rnd() * 12);
      const yesPrice = Math.min(99, Math.max(1, bid ? m.reference - depth : m.reference + depth));
      body =
        rnd() < 0.3
          ? {
              market_id: m.id,
              action: bid ? 'SELL' : 'BUY',
              side: 'NO',
              type: 'LIMIT',
              price: 100 - yesPrice,
              quantity: qty,
            }
          : {
              market_id: m.id,
              action: bid ? 'BUY' : 'SELL',
              side: 'YES',
              type: 'LIMIT',
              price: yesPrice,
              quantity: qty,
            };
    }
    return { key, body: JSON.stringify(body) };
  };
}

interface Figures {
  requestsPerSec: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  total2xx: number;
  non2xx: number;
  errors: number;
  durationSec: number;
  /** Server CPU (user + system) per answered request, microseconds; null off Linux. */
  serverCpuUsPerRequest: number | null;
  /**
   * Paced phase only: the same percentiles measured from the moment the request was written
   * (leaves out the generator's own timer lateness and any wait for a free connection).
   */
  fromSend?: { p50Ms: number; p90Ms: number; p99Ms: number; p999Ms: number };
}

function fromAutocannon(r: Result, cpuSec: number | null): Figures {
  return {
    requestsPerSec: Math.round(r['2xx'] / r.duration),
    p50Ms: r.latency.p50,
    p90Ms: r.latency.p90,
    p99Ms: r.latency.p99,
    p999Ms: r.latency.p99_9,
    maxMs: r.latency.max,
    total2xx: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    durationSec: r.duration,
    serverCpuUsPerRequest:
      cpuSec === null || r['2xx'] === 0 ? null : Math.round((cpuSec * 1e6) / r['2xx']),
  };
}

function print(name: string, f: Figures): void {
  const cpu =
    f.serverCpuUsPerRequest === null ? '' : `   server CPU ${f.serverCpuUsPerRequest} us/req`;
  console.log(
    `${name.padEnd(36)} ${String(f.requestsPerSec).padStart(7)} req/s   p50 ${f.p50Ms} ms   p90 ${f.p90Ms} ms   p99 ${f.p99Ms} ms   p99.9 ${f.p999Ms} ms   (2xx ${f.total2xx}, non-2xx ${f.non2xx}, errors ${f.errors})${cpu}`,
  );
}

/** CPU seconds (user + system) a process has used so far, from /proc; null elsewhere. */
function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC;
  } catch {
    return null;
  }
}

async function measured(pid: number, run: () => Promise<Result>): Promise<Figures> {
  const before = cpuSeconds(pid);
  const r = await run();
  const after = cpuSeconds(pid);
  return fromAutocannon(r, before === null || after === null ? null : after - before);
}

const pct = (sorted: number[], p: number): number =>
  sorted.length === 0
    ? 0
    : Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] * 100) / 100;

/**
 * Open-loop, evenly paced load: request k is due at start + k/rate; every millisecond the due
 * requests are sent over a keep-alive pool, and each latency counts from the due time.
 */
async function paced(
  host: string,
  port: number,
  rate: number,
  seconds: number,
  next: () => { key: string; body: string },
): Promise<Figures> {
  // Lean raw-socket connections (support/raw-http-client.ts), opened up front; a request that
  // finds none idle waits in a queue, its latency still counted from when it was due.
  const POOL = 64;
  const idle: RawHttpConnection[] = await Promise.all(
    Array.from({ length: POOL }, () => RawHttpConnection.open(host, port)),
  );
  const all = [...idle];
  const queue: { dueAt: number; request: Buffer }[] = [];
  const latencies: number[] = [];
  const fromSend: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let outstanding = 0;
  const total = rate * seconds;
  const start = performance.now();
  let sent = 0;
  await new Promise<void>((resolve) => {
    const finished = (): void => {
      if (sent === total && outstanding === 0) resolve();
    };
    /** A connection closed: open another in its place (the pool keeps its size). */
    const replace = (): void => {
      void RawHttpConnection.open(host, port).then(
        (fresh) => {
          all.push(fresh);
          idle.push(fresh);
          dispatch();
        },
        () => undefined,
      );
    };
    const dispatch = (): void => {
      while (queue.length > 0 && idle.length > 0) {
        const { dueAt, request } = queue.shift()!;
        const conn = idle.pop()!;
        if (conn.dead) {
          // Closed while idle: replace it and try the next one.
          queue.unshift({ dueAt, request });
          replace();
          continue;
        }
        const sentAt = performance.now();
        conn.send(
          request,
          (status) => {
            const now = performance.now();
            if (status < 300) {
              latencies.push(now - dueAt);
              fromSend.push(now - sentAt);
            } else non2xx++;
            outstanding--;
            idle.push(conn);
            dispatch();
            finished();
          },
          () => {
            // The connection is gone: count the request as failed and replace the connection.
            errors++;
            outstanding--;
            replace();
            finished();
          },
        );
      }
    };
    const tick = (): void => {
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - start) / 1000) * rate) + 1);
      while (sent < due) {
        const dueAt = start + (sent / rate) * 1000;
        const { key, body } = next();
        sent++;
        outstanding++;
        queue.push({
          dueAt,
          request: postRequest(host, '/api/v1/orders', { 'x-api-key': key }, body),
        });
      }
      dispatch();
      if (sent < total) setTimeout(tick, 1);
      else finished();
    };
    tick();
  });
  const elapsed = (performance.now() - start) / 1000;
  for (const c of all) c.close();
  const sorted = latencies.sort((a, b) => a - b);
  const sent2 = fromSend.sort((a, b) => a - b);
  return {
    requestsPerSec: Math.round(latencies.length / elapsed),
    p50Ms: pct(sorted, 0.5),
    p90Ms: pct(sorted, 0.9),
    p99Ms: pct(sorted, 0.99),
    p999Ms: pct(sorted, 0.999),
    maxMs: pct(sorted, 1),
    total2xx: latencies.length,
    non2xx,
    errors,
    durationSec: Math.round(elapsed * 100) / 100,
    serverCpuUsPerRequest: null,
    fromSend: {
      p50Ms: pct(sent2, 0.5),
      p90Ms: pct(sent2, 0.9),
      p99Ms: pct(sent2, 0.99),
      p999Ms: pct(sent2, 0.999),
    },
  };
}

async function main(): Promise<void> {
  // Books grow for the whole run: enough money and open-order room for every resting order.
  const server = await startBenchServer('orders', {
    SANDBOX_STARTING_BALANCE_CENTS: '1000000000000',
    MAX_OPEN_ORDERS_PER_KEY: '1000000',
  });
  const { api, dataDir, port } = server;
  const pid = server.proc.pid!;
  try {
    const keys = [await testKey(api, 'trader@sandbox.test', 'sandbox-password')];
    for (let i = 1; i < TRADERS; i++) {
      const email = `bench-${i}@orders.bench`;
      await verifiedUser(api, dataDir, email);
      keys.push(await testKey(api, email, PASSWORD));
    }
    const markets = seededMarkets();
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
    const health = (duration: number) => () =>
      autocannon({ url: `${api}/health`, connections: CONNECTIONS, duration });
    const setupRequest = (req: RawRequest): RawRequest => {
      const { key, body } = stream();
      return { ...req, headers: { 'content-type': 'application/json', 'x-api-key': key }, body };
    };
    const orders = (duration: number, overallRate?: number) => () =>
      autocannon({
        url: `http://127.0.0.1:${port}`,
        connections: CONNECTIONS,
        duration,
        overallRate,
        requests: [{ method: 'POST', path: '/api/v1/orders', setupRequest }],
      });

    console.log(
      `bench:orders: ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), node ${process.version}, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}; ${CONNECTIONS} connections, ${PHASE_SECONDS} s a phase, ${TRADERS} traders`,
    );
    await health(WARMUP_SECONDS)();
    const h = await measured(pid, health(PHASE_SECONDS));
    print('GET /health (saturation)', h);
    await orders(WARMUP_SECONDS)();
    const sat = await measured(pid, orders(PHASE_SECONDS));
    print('POST /orders (saturation)', sat);
    const rate = Math.max(1, Math.floor(sat.requestsPerSec / 2));
    const half = await measured(pid, orders(PHASE_SECONDS, rate));
    print(`POST /orders (overallRate ${rate}/s)`, half);
    const even = await paced('127.0.0.1', port, rate, PHASE_SECONDS, stream);
    print(`POST /orders (paced ${rate}/s)`, even);
    const fs = even.fromSend!;
    console.log(
      `  paced, measured from the write instead of the due time: p50 ${fs.p50Ms} ms   p90 ${fs.p90Ms} ms   p99 ${fs.p99Ms} ms   p99.9 ${fs.p999Ms} ms`,
    );

    const db = new Database(join(dataDir, 'paper.sqlite'), { readonly: true });
    const count = (sql: string) => Number((db.prepare(sql).get() as { n: number }).n);
    const stored = {
      orders: count('SELECT COUNT(*) AS n FROM orders'),
      resting: count(
        "SELECT COUNT(*) AS n FROM orders WHERE status IN ('OPEN','PARTIALLY_FILLED')",
      ),
      trades: count('SELECT COUNT(*) AS n FROM trades'),
    };
    db.close();
    const ratio = Math.round((sat.requestsPerSec / h.requestsPerSec) * 1000) / 1000;
    const cpuRatio =
      h.serverCpuUsPerRequest === null || sat.serverCpuUsPerRequest === null
        ? null
        : Math.round((h.serverCpuUsPerRequest / sat.serverCpuUsPerRequest) * 1000) / 1000;
    const result = {
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? null,
      loadavgAtEnd: loadavg(),
      date: new Date().toISOString(),
      setup: {
        server:
          'node dist/main.js (child process), RATE_LIMITS_ENABLED=false, SANDBOX_FEED_INTERVAL_MS=0, LOG_LEVEL=warn',
        loadGenerator:
          'autocannon (programmatic, same machine, sharing its CPUs with the server), 127.0.0.1; phase 4 an evenly paced open-loop raw-socket client (64 keep-alive connections)',
        connections: CONNECTIONS,
        phaseSeconds: PHASE_SECONDS,
        warmupSeconds: WARMUP_SECONDS,
        orderMix: `${Math.round((1 - MARKETABLE_SHARE) * 100)}% resting LIMIT GTC at non-crossing prices over ${markets.length} markets (YES and NO terms), ${Math.round(MARKETABLE_SHARE * 100)}% marketable (MARKET or LIMIT IOC through the reference); ${TRADERS} traders' test keys`,
        durability:
          'each order, its fills, positions and ledger committed in one SQLite transaction (WAL, synchronous=NORMAL) before the answer',
      },
      health: h,
      ordersSaturation: sat,
      ordersHalfRateAutocannon: { offeredPerSec: rate, ...half },
      ordersHalfRatePaced: { offeredPerSec: rate, ...even },
      ratioOrdersToHealth: ratio,
      ratioServerCpuHealthToOrders: cpuRatio,
      storedAfterRun: stored,
      targets: {
        ordersAtLeastHalfOfHealth: { target: 0.5, measured: ratio, met: ratio >= 0.5 },
        p99Under5msAtHalfSaturation: {
          targetMs: 5,
          measuredMsAutocannon: half.p99Ms,
          measuredMsPaced: even.p99Ms,
          met: half.p99Ms < 5 && even.p99Ms < 5,
        },
      },
    };
    console.log(
      `orders/health ${ratio} (target >= 0.5: ${result.targets.ordersAtLeastHalfOfHealth.met ? 'met' : 'NOT met'}; server CPU per request health/orders ${cpuRatio ?? 'n/a'}); p99 at half saturation ${half.p99Ms} ms (autocannon) / ${even.p99Ms} ms (paced) (target < 5 ms: ${result.targets.p99Under5msAtHalfSaturation.met ? 'met' : 'NOT met'}); stored ${stored.orders} orders, ${stored.resting} resting, ${stored.trades} trades`,
    );
    const outDir = join(ROOT, 'bench', 'results');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'orders.json'), JSON.stringify(result, null, 2) + '\n');
    console.log(`wrote ${join(outDir, 'orders.json')}`);
  } finally {
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
