/**
 * bench:exports — a 1,000,000-row TRADES export beside a fixed order load, through the built
 * server (`node dist/main.js`, support/server.ts). After boot, 1,000,000 trades are inserted
 * straight into the paper engine database in one transaction (the server is idle; WAL lets the
 * writer in). Then, with POST /orders offered at a fixed, evenly paced rate (resting LIMIT
 * orders, latency measured from each request's due time):
 *   a. ~15 s of orders alone: their p50/p99;
 *   b. a TRADES export of all 1,000,000 rows is created and the same load runs until it is READY:
 *      the export's rows/s, the server's peak RSS during it (VmHWM and sampled VmRSS from /proc)
 *      and the orders' p50/p99, with the ratio of the p99s (target <= 1.5).
 * Prints the figures and writes bench/results/exports.json.
 */
import Database from 'better-sqlite3';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonClient, traderTestKey } from './support/api-client.js';
import { postRequest, RawHttpConnection } from './support/raw-http-client.js';
import { startBenchServer } from './support/server.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? 1_000_000);
const RATE = Number(process.env.BENCH_ORDER_RATE ?? 200);
const BASELINE_SECONDS = Number(process.env.BENCH_PHASE_SECONDS ?? 15);
const POOL = 16;

interface Latencies {
  count: number;
  non2xx: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

const pct = (sorted: number[], p: number): number =>
  sorted.length === 0
    ? 0
    : Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] * 100) / 100;

/** The server's memory from /proc/<pid>/status, in MB: VmRSS now and VmHWM (peak) so far. */
function memory(pid: number): { rssMb: number; hwmMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string): number =>
    Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return {
    rssMb: Math.round(kb('VmRSS') / 102.4) / 10,
    hwmMb: Math.round(kb('VmHWM') / 102.4) / 10,
  };
}

/**
 * Evenly paced open-loop POST /orders: request k is due at start + k/rate, sent over a pool of
 * keep-alive connections, its latency counted from the due time; runs until `stop()` says so.
 */
async function pacedOrders(
  port: number,
  next: () => Buffer,
  stop: (elapsedMs: number) => boolean,
): Promise<Latencies> {
  const idle = await Promise.all(
    Array.from({ length: POOL }, () => RawHttpConnection.open('127.0.0.1', port)),
  );
  const queue: number[] = [];
  const lat: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let outstanding = 0;
  let sent = 0;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    let stopping = false;
    const dispatch = (): void => {
      while (queue.length > 0 && idle.length > 0) {
        const dueAt = queue.shift()!;
        const conn = idle.pop()!;
        outstanding++;
        conn.send(
          next(),
          (status) => {
            if (status < 300) lat.push(performance.now() - dueAt);
            else non2xx++;
            outstanding--;
            idle.push(conn);
            dispatch();
            if (stopping && outstanding === 0 && queue.length === 0) resolve();
          },
          () => {
            errors++;
            outstanding--;
          },
        );
      }
    };
    const tick = (): void => {
      const now = performance.now();
      if (stop(now - start)) {
        stopping = true;
        if (outstanding === 0 && queue.length === 0) resolve();
        return;
      }
      const due = Math.floor(((now - start) / 1000) * RATE) + 1;
      while (sent < due) queue.push(start + (sent++ / RATE) * 1000);
      dispatch();
      setTimeout(tick, 1);
    };
    tick();
  });
  lat.sort((x, y) => x - y);
  return {
    count: lat.length,
    non2xx,
    errors,
    p50Ms: pct(lat, 0.5),
    p99Ms: pct(lat, 0.99),
    maxMs: Math.round((lat[lat.length - 1] ?? 0) * 100) / 100,
  };
}

function seedTrades(dataDir: string, n: number, marketId: string): number {
  const t0 = performance.now();
  const db = new Database(join(dataDir, 'paper.sqlite'));
  db.pragma('busy_timeout = 10000');
  const ins = db.prepare(
    `INSERT INTO trades (id, market_id, price, quantity, maker_order_id, taker_order_id, maker_user_id, taker_user_id, taker_book_side, created_at)
     VALUES (?, ?, ?, ?, 'ord_benchmaker', 'ord_benchtaker', 'usr_benchmaker', 'usr_benchtaker', ?, '2026-01-01T00:00:00.000Z')`,
  );
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      ins.run(
        `fil_bench${String(i).padStart(9, '0')}`,
        marketId,
        1 + (i % 99),
        1 + (i % 7),
        i % 2 === 0 ? 'BID' : 'ASK',
      );
    }
  })();
  db.close();
  return Math.round(performance.now() - t0);
}

async function main(): Promise<void> {
  const server = await startBenchServer('exports', {
    MAX_OPEN_ORDERS_PER_KEY: '1000000',
    EXPORT_MAX_ROWS: String(Math.max(ROWS, 1_000_000)),
    // The runner's batch size can be tried out: EXPORT_BATCH_ROWS=200 npm run bench:exports.
    ...(process.env.EXPORT_BATCH_ROWS ? { EXPORT_BATCH_ROWS: process.env.EXPORT_BATCH_ROWS } : {}),
  });
  try {
    const json = jsonClient(server.api);
    const { key } = await traderTestKey(json, [
      'orders:write',
      'orders:read',
      'markets:read',
      'data:read',
    ]);
    const markets = await json('/markets?limit=100', { headers: { 'x-api-key': key } });
    const open = (markets.body.data as { id: string; status: string }[])
      .filter((m) => m.status === 'OPEN')
      .map((m) => m.id);
    const seedMs = seedTrades(server.dataDir, ROWS, open[0]);
    console.log(`seeded ${ROWS} trades in ${seedMs} ms`);
    let i = 0;
    // Resting BUY YES orders at 1..5 cents: they never cross the house (quoting near the reference).
    const next = (): Buffer =>
      postRequest(
        '127.0.0.1',
        '/api/v1/orders',
        { 'x-api-key': key },
        JSON.stringify({
          market_id: open[i++ % open.length],
          action: 'BUY',
          side: 'YES',
          type: 'LIMIT',
          price: 1 + (i % 5),
          quantity: 1,
        }),
      );
    // Warm-up, then the baseline.
    await pacedOrders(server.port, next, (ms) => ms > 3000);
    const baseline = await pacedOrders(server.port, next, (ms) => ms > BASELINE_SECONDS * 1000);
    console.log(
      `orders alone (${RATE}/s, ${BASELINE_SECONDS} s): p50 ${baseline.p50Ms} ms, p99 ${baseline.p99Ms} ms`,
    );

    const pid = server.proc.pid!;
    const before = memory(pid);
    let peakRss = before.rssMb;
    let ready: Record<string, unknown> | null = null;
    let exportMs = 0;
    const t0 = performance.now();
    const exportDone = (async () => {
      const created = await json('/data/exports', {
        method: 'POST',
        headers: { 'x-api-key': key },
        json: {
          dataset: 'TRADES',
          format: 'CSV',
          start: '2025-12-01T00:00:00Z',
          end: '2026-12-01T00:00:00Z',
        },
      });
      if (created.status !== 202)
        throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
      for (;;) {
        peakRss = Math.max(peakRss, memory(pid).rssMb);
        const got = await json(`/data/exports/${String(created.body.id)}`, {
          headers: { 'x-api-key': key },
        });
        if (got.body.status === 'READY' || got.body.status === 'FAILED') {
          exportMs = performance.now() - t0;
          ready = got.body;
          return;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const during = await pacedOrders(server.port, next, () => ready !== null);
    await exportDone;
    const after = memory(pid);
    const done = ready as unknown as { status: string; record_count: number; size_bytes: number };
    if (done.status !== 'READY') throw new Error(`export ${JSON.stringify(done)}`);
    const rowsPerSec = Math.round(done.record_count / (exportMs / 1000));
    const ratio = Math.round((during.p99Ms / Math.max(baseline.p99Ms, 0.01)) * 100) / 100;
    const result = {
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      loadavgAtEnd: loadavg().map((x) => Math.round(x * 100) / 100),
      date: new Date().toISOString(),
      setup: {
        server: `node dist/main.js (child process), RATE_LIMITS_ENABLED=false, SANDBOX_FEED_INTERVAL_MS=0, LOG_LEVEL=warn, EXPORT_BATCH_ROWS ${process.env.EXPORT_BATCH_ROWS ?? 'default (500)'}`,
        seed: `${ROWS} trades inserted into paper.sqlite in one transaction after boot (${seedMs} ms)`,
        orderLoad: `POST /orders evenly paced at ${RATE}/s (open loop, ${POOL} keep-alive raw connections, latency from the due time): resting BUY YES LIMIT 1..5 cents, quantity 1, over the open markets`,
        export:
          'TRADES, CSV, every row (one window holding all seeded trades), created while the load runs',
      },
      baseline: { seconds: BASELINE_SECONDS, ...baseline },
      duringExport: during,
      export: {
        records: done.record_count,
        sizeBytes: done.size_bytes,
        seconds: Math.round(exportMs / 100) / 10,
        rowsPerSec,
        rssBeforeMb: before.rssMb,
        peakRssSampledMb: peakRss,
        vmHwmAfterMb: after.hwmMb,
      },
      p99Ratio: ratio,
      targets: { p99DuringAtMost1_5xBaseline: { target: 1.5, value: ratio, met: ratio <= 1.5 } },
    };
    console.log(
      `export: ${done.record_count} rows in ${result.export.seconds} s = ${rowsPerSec} rows/s; RSS ${before.rssMb} MB before, peak ${peakRss} MB sampled (VmHWM ${after.hwmMb} MB)`,
    );
    console.log(
      `orders during the export: p50 ${during.p50Ms} ms, p99 ${during.p99Ms} ms; p99 ratio ${ratio} (target <= 1.5: ${ratio <= 1.5 ? 'met' : 'NOT met'})`,
    );
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(
      join(ROOT, 'bench', 'results', 'exports.json'),
      JSON.stringify(result, null, 2) + '\n',
    );
  } finally {
    await server.stop();
  }
}

await main();
