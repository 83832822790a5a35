/**
 * bench:ws — realtime fan-out. Spawns the built server (node dist/main.js) with a temporary
 * DATA_DIR, connects N subscribers (BENCH_WS_SUBSCRIBERS, default 1,000) to orderbook:<one market>
 * on 127.0.0.1, and drives book updates over REST at a target rate (BENCH_WS_RATE, default 300/s)
 * for BENCH_WS_SECONDS (default 15) after a 2 s warm-up: small limit orders, nine in ten resting
 * at varying non-crossing prices and one in ten an IOC that trades 1 contract with the house's
 * best bid or ask, each one `book.level` delta. Latency is the message's `ts` (commit time on
 * the server's clock, epoch ms) to Date.now() at client receipt (same machine clock). Prints the
 * figures and writes bench/results/ws.json.
 *
 * The subscribers live in a child process of their own (BENCH_WS_CLIENT_PROCS, default 1), so the
 * driver's pacing is not held up by their message handling; server, subscribers and driver still
 * share the machine's cores. Subscribers are lean raw-socket WebSocket clients
 * (support/raw-ws-client.ts) that still check every message's seq: the `ws` client cost several
 * times more per message, CPU taken from the server being measured.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { RawWsClient } from './support/raw-ws-client.js';
import { startBenchServer } from './support/server.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const SUBSCRIBERS = Number(process.env.BENCH_WS_SUBSCRIBERS ?? 1000);
const RATE = Number(process.env.BENCH_WS_RATE ?? 300);
const SECONDS = Number(process.env.BENCH_WS_SECONDS ?? 15);
const WARMUP_MS = 2000;
const CLIENT_PROCS = Math.max(1, Number(process.env.BENCH_WS_CLIENT_PROCS ?? 1));
const MAX_IN_FLIGHT = 32;
/** Every n-th driver order trades (an IOC against the house); 0: none trade. */
const TRADE_EVERY = Number(process.env.BENCH_WS_TRADE_EVERY ?? 10);
/** Latency histogram: 0.1 ms buckets up to 10 s. */
const BUCKETS = 100_000;

// ---------------------------------------------------------------------------------------------
// Subscriber process
// ---------------------------------------------------------------------------------------------

interface ClientConfig {
  url: string;
  key: string;
  channel: string;
  count: number;
}

/** The measured window, on the server's clock: messages with ts in [from, to) count. */
interface Window {
  from: number;
  to: number;
}

interface ClientReport {
  connected: number;
  /** Deliveries of updates whose ts is in [from, to). */
  delivered: number;
  /** Integer-ms latency (Date.now() - ts) counts, index = ms. */
  msHist: number[];
  /** 0.1 ms latency counts from the sub-ms clock (performance.timeOrigin + now()). */
  fineHist: number[];
  seqGaps: number;
  closedEarly: number;
  /** Per update (seq): first and last receipt (fine clock, ms) across this process's clients. */
  spans: [number, number, number][];
  updates: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

/** Reads the unsigned integer that follows `key` within buf[start, end); -1 if absent. */
function intAfter(buf: Buffer, key: Buffer, start: number, end: number): number {
  const i = buf.indexOf(key, start);
  if (i < 0 || i >= end) return -1;
  let n = 0;
  for (let j = i + key.length; j < end; j++) {
    const c = buf[j];
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  return n;
}

async function runClients(): Promise<void> {
  const cfg = await new Promise<ClientConfig>((resolve) =>
    process.once('message', (m) => resolve(m as ClientConfig)),
  );
  // Nothing counts until the driver sends the window.
  const win: Window = { from: Number.MAX_SAFE_INTEGER, to: 0 };
  const TS = Buffer.from('"ts":');
  const SEQ = Buffer.from('"seq":');
  const PREFIX = Buffer.from(`{"type":"event","channel":${JSON.stringify(cfg.channel)},"seq":`);
  const TS_KEY = Buffer.from(',"ts":');
  const msHist = new Array<number>(60_001).fill(0);
  const fineHist = new Array<number>(BUCKETS + 1).fill(0);
  const spans = new Map<number, [number, number, number]>();
  let delivered = 0;
  let seqGaps = 0;
  let closedEarly = 0;
  let stopping = false;
  const origin = performance.timeOrigin;
  const loop = monitorEventLoopDelay({ resolution: 10 });

  const sockets: RawWsClient[] = [];
  const connectOne = (): Promise<RawWsClient> =>
    new Promise((resolve, reject) => {
      let last = 0;
      let subscribed = false;
      let client: RawWsClient | null = null;
      RawWsClient.open(cfg.url, {
        onClose: () => {
          if (!stopping) closedEarly++;
        },
        onText: (buf, start, end) => {
          if (!subscribed) {
            const text = buf.toString('utf8', start, end);
            if (text.includes('"auth_ok"')) {
              client!.sendText(JSON.stringify({ type: 'subscribe', channels: [cfg.channel] }));
            } else if (text.includes('"snapshot"')) {
              subscribed = true;
              last = 1;
              resolve(client!);
            } else if (text.includes('"error"')) {
              reject(new Error(text));
            }
            return;
          }
          const fine = origin + performance.now();
          const now = Date.now();
          // Event messages start with a fixed prefix for the channel, so seq and ts are read at
          // known offsets; anything else falls back to searching for the keys.
          let seq: number;
          let ts: number;
          let at = start + PREFIX.length;
          if (
            end - start > PREFIX.length &&
            buf.compare(PREFIX, 0, PREFIX.length, start, at) === 0
          ) {
            seq = 0;
            for (let c = buf[at]; c >= 48 && c <= 57; c = buf[++at]) seq = seq * 10 + (c - 48);
            at += TS_KEY.length;
            ts = 0;
            for (let c = buf[at]; c >= 48 && c <= 57; c = buf[++at]) ts = ts * 10 + (c - 48);
          } else {
            seq = intAfter(buf, SEQ, start, end);
            ts = intAfter(buf, TS, start, end);
          }
          if (seq !== last + 1) seqGaps++;
          last = seq;
          if (ts < win.from || ts >= win.to) return;
          delivered++;
          msHist[Math.min(60_000, Math.max(0, now - ts))]++;
          fineHist[Math.min(BUCKETS, Math.max(0, Math.round((fine - ts) * 10)))]++;
          const s = spans.get(seq);
          if (s === undefined) spans.set(seq, [fine, fine, 1]);
          else {
            if (fine < s[0]) s[0] = fine;
            if (fine > s[1]) s[1] = fine;
            s[2]++;
          }
        },
      }).then((c) => {
        client = c;
        c.sendText(JSON.stringify({ type: 'auth', api_key: cfg.key }));
      }, reject);
    });

  for (let i = 0; i < cfg.count; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, cfg.count - i) }, () => connectOne()),
    );
    sockets.push(...batch);
  }
  loop.enable();
  process.send!({ type: 'ready', connected: sockets.length });
  await new Promise<void>((resolve) =>
    process.on('message', (m: { type: string } & Partial<Window>) => {
      if (m.type === 'window') {
        win.from = m.from!;
        win.to = m.to!;
      }
      if (m.type === 'report') resolve();
    }),
  );
  loop.disable();
  const report: ClientReport = {
    connected: sockets.length,
    delivered,
    msHist,
    fineHist,
    seqGaps,
    closedEarly,
    spans: [...spans.values()],
    updates: spans.size,
    loopDelayP99Ms: loop.percentile(99) / 1e6,
    loopDelayMaxMs: loop.max / 1e6,
  };
  process.send!({ type: 'report', report });
  stopping = true;
  for (const ws of sockets) ws.terminate();
  await sleep(100);
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// Driver
// ---------------------------------------------------------------------------------------------

/** utime + stime of a process, in ms (Linux /proc). */
function cpuMs(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const parts = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return ((Number(parts[11]) + Number(parts[12])) * 1000) / 100; // CLK_TCK = 100
  } catch {
    return NaN;
  }
}

function percentile(hist: number[], p: number, scale: number): number {
  const total = hist.reduce((a, b) => a + b, 0);
  if (total === 0) return NaN;
  const target = Math.ceil((p / 100) * total);
  let acc = 0;
  for (let i = 0; i < hist.length; i++) {
    acc += hist[i];
    if (acc >= target) return i / scale;
  }
  return (hist.length - 1) / scale;
}

function maxOf(hist: number[], scale: number): number {
  for (let i = hist.length - 1; i >= 0; i--) if (hist[i] > 0) return i / scale;
  return NaN;
}

function sortedPct(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

/** Keep-alive connections for the driver: a fresh connection per order would cost the server. */
const agent = new Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT });

/** A JSON request over node:http (lighter than fetch: the driver shares the cores it measures). */
function json(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        agent,
        method: init.method ?? 'GET',
        headers: { 'content-type': 'application/json', ...init.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({
            status: res.statusCode ?? 0,
            body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

async function main(): Promise<void> {
  // Other work on the machine skews every figure: recorded with them.
  const loadAtStart = Math.round(loadavg()[0] * 100) / 100;
  const server = await startBenchServer('ws', { WS_MAX_CONNECTIONS_PER_IP: '100000' });
  const { api, port } = server;
  const children: ChildProcess[] = [];
  const cleanup = async (): Promise<void> => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await server.stop();
  };

  try {
    // A key for the subscribers (websocket) and one for the driver (orders:write).
    const login = await json(`${api}/auth/login`, {
      method: 'POST',
      body: JSON.stringify({ email: 'trader@sandbox.test', password: 'sandbox-password' }),
    });
    const token = login.body.token as string;
    const mkKey = async (scopes: string[]): Promise<string> => {
      const r = await json(`${api}/api-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify({
          name: 'bench',
          environment: 'test',
          scopes,
          acknowledge_write_scopes: true,
        }),
      });
      if (r.status !== 201) throw new Error(`key: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.key as string;
    };
    const subKey = await mkKey(['websocket', 'markets:read']);
    const driverKey = await mkKey(['orders:read', 'orders:write', 'markets:read']);

    const seeds = JSON.parse(readFileSync(join(ROOT, 'seeds', 'markets.json'), 'utf8')) as {
      slug: string;
      reference_price: number;
      status: string;
    }[];
    const seed = seeds.find(
      (m) => m.status === 'OPEN' && m.reference_price >= 40 && m.reference_price <= 60,
    )!;
    const marketId = `mkt_${createHash('sha256').update(seed.slug).digest('hex').slice(0, 20)}`;
    const ref = seed.reference_price;
    const channel = `orderbook:${marketId}`;

    // Subscribers, in their own process(es).
    const connectStart = Date.now();
    const perProc = Math.ceil(SUBSCRIBERS / CLIENT_PROCS);
    const reports: ClientReport[] = [];
    const readies: Promise<number>[] = [];
    const reported: Promise<void>[] = [];
    for (let i = 0; i < CLIENT_PROCS; i++) {
      const count = Math.min(perProc, SUBSCRIBERS - i * perProc);
      if (count <= 0) break;
      const child = fork(SELF, ['clients'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      children.push(child);
      readies.push(
        new Promise((resolve, reject) => {
          child.on('message', (m: { type: string; connected?: number }) => {
            if (m.type === 'ready') resolve(m.connected!);
          });
          child.once('exit', (code) => reject(new Error(`subscriber process exited ${code}`)));
        }),
      );
      reported.push(
        new Promise((resolve) => {
          child.on('message', (m: { type: string; report?: ClientReport }) => {
            if (m.type !== 'report') return;
            reports.push(m.report!);
            resolve();
          });
        }),
      );
      child.send({
        url: `ws://127.0.0.1:${port}/api/v1/ws`,
        key: subKey,
        channel,
        count,
      } satisfies ClientConfig);
    }
    const connected = (await Promise.all(readies)).reduce((a, b) => a + b, 0);
    const connectMs = Date.now() - connectStart;
    console.log(`${connected} subscribers on ${channel} (connected in ${connectMs} ms)`);

    // The window: after a warm-up, SECONDS long, on the server's clock (= this machine's).
    const start = Date.now();
    const window: Window = { from: start + WARMUP_MS, to: start + WARMUP_MS + SECONDS * 1000 };
    for (const c of children) c.send({ type: 'window', ...window });

    // Driver: paced resting limit orders at varying non-crossing prices (one delta each).
    const bidPrices = Array.from({ length: ref - 6 }, (_, i) => 1 + i); // below the house bids
    const askPrices = Array.from({ length: 99 - (ref + 6) + 1 }, (_, i) => ref + 6 + i);
    let sent = 0;
    let ok = 0;
    let failed = 0;
    let inFlight = 0;
    let traded = 0;
    let maxLagMs = 0;
    const failures = new Map<string, number>();
    const httpMs: number[] = [];
    // One order in ten trades: an IOC for 1 contract against the house's best bid or ask (one
    // level delta each, like a resting order); the others rest below or above the house.
    const placeOne = async (k: number): Promise<void> => {
      const marketable = TRADE_EVERY > 0 && k % TRADE_EVERY === TRADE_EVERY - 1;
      const bid = marketable ? Math.floor(k / TRADE_EVERY) % 2 === 0 : k % 2 === 0;
      const prices = bid ? bidPrices : askPrices;
      const price = marketable ? (bid ? 99 : 1) : prices[Math.floor(k / 2) % prices.length];
      const t = performance.now();
      try {
        const r = await json(`${api}/orders`, {
          method: 'POST',
          headers: { 'x-api-key': driverKey },
          body: JSON.stringify({
            market_id: marketId,
            action: bid ? 'BUY' : 'SELL',
            side: 'YES',
            type: 'LIMIT',
            price,
            quantity: 1,
            ...(marketable ? { time_in_force: 'IOC' } : {}),
          }),
        });
        if (r.status === 201 && marketable && r.body.filled_quantity === 1) traded++;
        if (r.status === 201) ok++;
        else {
          failed++;
          const code = String((r.body.error as { code?: string } | undefined)?.code ?? r.status);
          failures.set(code, (failures.get(code) ?? 0) + 1);
        }
      } catch (err) {
        failed++;
        const code = err instanceof Error ? err.message : String(err);
        failures.set(code, (failures.get(code) ?? 0) + 1);
      } finally {
        httpMs.push(performance.now() - t);
        inFlight--;
      }
    };
    let cpu0 = { server: NaN, clients: [] as number[], driver: 0 };
    const end = window.to;
    let measuring = false;
    let sentInWindow = 0;
    const pending = new Set<Promise<void>>();
    while (Date.now() < end) {
      const now = Date.now();
      if (!measuring && now >= window.from) {
        measuring = true;
        cpu0 = {
          server: cpuMs(server.proc.pid!),
          clients: children.map((c) => cpuMs(c.pid!)),
          driver: process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000,
        };
      }
      const due = Math.floor(((now - start) * RATE) / 1000);
      if (due - sent > 1) maxLagMs = Math.max(maxLagMs, ((due - sent) * 1000) / RATE);
      while (sent < due && inFlight < MAX_IN_FLIGHT) {
        inFlight++;
        if (measuring) sentInWindow++;
        const p = placeOne(sent++);
        pending.add(p);
        void p.then(() => pending.delete(p));
      }
      // Wake when the next order is due (or soon after a free slot), not on every millisecond.
      const nextDue = start + ((sent + 1) * 1000) / RATE;
      await sleep(Math.max(1, Math.min(10, Math.ceil(nextDue - Date.now()))));
    }
    await Promise.all(pending);
    const cpu1 = {
      server: cpuMs(server.proc.pid!),
      clients: children.map((c) => cpuMs(c.pid!)),
      driver: process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000,
    };
    await sleep(1000); // let the last deliveries land
    for (const c of children) c.send({ type: 'report' });
    await Promise.all(reported);

    // Merge.
    const msHist = new Array<number>(60_001).fill(0);
    const fineHist = new Array<number>(BUCKETS + 1).fill(0);
    let delivered = 0;
    let seqGaps = 0;
    let closedEarly = 0;
    const spanBySeq: number[] = [];
    let updates = 0;
    for (const r of reports) {
      r.msHist.forEach((v, i) => (msHist[i] += v));
      r.fineHist.forEach((v, i) => (fineHist[i] += v));
      delivered += r.delivered;
      seqGaps += r.seqGaps;
      closedEarly += r.closedEarly;
      updates = Math.max(updates, r.updates);
      for (const [first, last] of r.spans) spanBySeq.push(last - first);
    }
    const windowS = SECONDS;
    const cpuPct = (a: number, b: number) => Math.round(((b - a) / (windowS * 1000)) * 1000) / 10;
    const figures = {
      benchmark: 'ws fan-out: orderbook deltas to N subscribers',
      machine: {
        cpus: cpus().length,
        model: cpus()[0]?.model ?? 'unknown',
        node: process.version,
        load_average_1m_at_start: loadAtStart,
        load_average_1m_at_end: Math.round(loadavg()[0] * 100) / 100,
      },
      subscribers: connected,
      client_processes: children.length,
      target_updates_per_s: RATE,
      trading_order_every: TRADE_EVERY,
      window_s: windowS,
      updates_sent_in_window: sentInWindow,
      updates_delivered_in_window: updates,
      updates_per_s: Math.round((updates / windowS) * 10) / 10,
      order_requests: { ok, failed, traded, failures: Object.fromEntries(failures) },
      http_ms: {
        p50: Math.round(sortedPct(httpMs, 50) * 100) / 100,
        p99: Math.round(sortedPct(httpMs, 99) * 100) / 100,
      },
      driver_max_behind_schedule_ms: Math.round(maxLagMs),
      deliveries: delivered,
      expected_deliveries: updates * connected,
      deliveries_per_s: Math.round(delivered / windowS),
      seq_gaps: seqGaps,
      closed_early: closedEarly,
      latency_ms: {
        note: 'Date.now() at receipt minus the message ts (server commit time, integer epoch ms)',
        p50: percentile(msHist, 50, 1),
        p90: percentile(msHist, 90, 1),
        p99: percentile(msHist, 99, 1),
        p999: percentile(msHist, 99.9, 1),
        max: maxOf(msHist, 1),
      },
      latency_fine_ms: {
        note: 'sub-ms receipt clock (performance.timeOrigin + now()) minus ts; ts is truncated to the ms, so these read up to 1 ms high',
        p50: percentile(fineHist, 50, 10),
        p99: percentile(fineHist, 99, 10),
        max: maxOf(fineHist, 10),
      },
      fanout_span_ms: {
        note: 'per update: last minus first receipt across all subscribers of a process',
        p50: Math.round(sortedPct(spanBySeq, 50) * 100) / 100,
        p99: Math.round(sortedPct(spanBySeq, 99) * 100) / 100,
        max: Math.round(spanBySeq.reduce((m, v) => (v > m ? v : m), 0) * 100) / 100,
      },
      cpu_percent_of_one_core: {
        server: cpuPct(cpu0.server, cpu1.server),
        subscribers: cpu0.clients.map((c, i) => cpuPct(c, cpu1.clients[i])),
        driver: cpuPct(cpu0.driver, cpu1.driver),
      },
      subscriber_event_loop_delay_ms: reports.map((r) => ({
        p99: Math.round(r.loopDelayP99Ms * 100) / 100,
        max: Math.round(r.loopDelayMaxMs * 100) / 100,
      })),
      target: { p99_ms_below: 10, met: percentile(msHist, 99, 1) < 10 },
      measured_at: new Date().toISOString(),
    };
    console.log(JSON.stringify(figures, null, 2));
    const out = join(ROOT, 'bench', 'results');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'ws.json'), `${JSON.stringify(figures, null, 2)}\n`);
    console.log(`written to bench/results/ws.json`);
  } finally {
    await cleanup();
  }
}

if (process.argv[2] === 'clients') {
  void runClients();
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
