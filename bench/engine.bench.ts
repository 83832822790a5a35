/**
 * Side-by-side engine benchmark: this engine (through MatchingEngine's public commands, 3,000
 * funded accounts) and the npm package nodejs-order-book replay the same seeded operation stream
 * in the same process, as ../shared/anchors/engine does: 100 markets, 60% limit / 25% cancel /
 * 10% IOC / 5% reduce, ~4k resting orders, 1M measured ops after 100k warm-up. Per engine and
 * round: a throughput pass (no per-op timers) and a latency pass (hrtime around every op), each
 * on fresh state after its own warm-up. Engines alternate A/B/A/B over the rounds and every figure
 * is the median over rounds, so machine noise hits both alike. Also times resetAccount on an
 * account with 10,000 open orders. Prints the ratio and both p99s; writes bench/results/engine.json.
 *
 * Options: --rounds N (default 3, at least 2) --ops N --warmup N --seed S --markets M
 * --only product|peer (one engine, any number of rounds, no ratio: for `node --cpu-prof`)
 * --engine <root of a built checkout> (with --only product: that checkout's dist/engine instead
 * of this one's) --json (with --only: each round's figures as one JSON line too)
 *
 * BENCH_BASELINE=<root of another built checkout> (its `dist/`, as `npx tsc -p
 * tsconfig.build.json` leaves it) compares this engine with that checkout's instead of with the
 * peer: rounds alternate the two (A B A B), each in a child process of its own (`--only product`,
 * with `--engine` for the baseline) so neither's code runs beside the other's, and it prints
 * product / baseline per round and of the medians; writes bench/results/engine-ab.json. Run to
 * run, this engine's ops/s moves by up to a quarter on these shared machines, so an engine change
 * is measured against the build before it in the same run, as bench:orders-ab does for HTTP.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MatchingEngine, SequentialIdGenerator } from '../src/engine/index.js';
import {
  peerAdapter,
  productAdapter,
  type EngineAdapter,
  type EngineModule,
} from './support/engine-adapters.js';
import {
  generateWorkload,
  OP_CANCEL,
  OP_IOC,
  OP_LIMIT,
  OP_NAMES,
  type Workload,
} from './support/engine-workload.js';
import { startScriptNodeFlags } from './support/server-args.js';

const TARGET_RATIO = 5;
const TARGET_P99_SHARE = 0.5;
const RESET_ORDERS = 10_000;
const RESET_RUNS = 7;

function text(name: string): string | null {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return null;
  const v = process.argv[i + 1];
  if (v === undefined || v.startsWith('--')) throw new Error(`--${name} takes a value`);
  return v;
}

function option(name: string, fallback: number): number {
  const given = text(name);
  if (given === null) return fallback;
  const v = Number(given.replace(/_/g, ''));
  if (!Number.isSafeInteger(v) || v < 0) throw new Error(`--${name} takes a whole number`);
  return v;
}

const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

function runPlain(ad: EngineAdapter, w: Workload, from: number, to: number): void {
  const { kind, mkt, side, price, qty, id } = w;
  for (let i = from; i < to; i++) {
    const k = kind[i];
    if (k === OP_LIMIT) ad.limit(mkt[i], id[i], side[i] === 0, price[i], qty[i]);
    else if (k === OP_CANCEL) ad.cancel(mkt[i], id[i]);
    else if (k === OP_IOC) ad.ioc(mkt[i], id[i], side[i] === 0, price[i], qty[i]);
    else ad.reduce(mkt[i], id[i], qty[i]);
  }
}

function runTimed(ad: EngineAdapter, w: Workload, lat: Float64Array): void {
  const { kind, mkt, side, price, qty, id } = w;
  const hr = process.hrtime.bigint;
  for (let i = w.warmup; i < w.total; i++) {
    const t0 = hr();
    const k = kind[i];
    if (k === OP_LIMIT) ad.limit(mkt[i], id[i], side[i] === 0, price[i], qty[i]);
    else if (k === OP_CANCEL) ad.cancel(mkt[i], id[i]);
    else if (k === OP_IOC) ad.ioc(mkt[i], id[i], side[i] === 0, price[i], qty[i]);
    else ad.reduce(mkt[i], id[i], qty[i]);
    lat[i - w.warmup] = Number(hr() - t0);
  }
}

function pct(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

interface Latency {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

function summarise(lat: Float64Array): Latency {
  const s = Float64Array.from(lat).sort();
  return {
    p50: pct(s, 0.5),
    p90: pct(s, 0.9),
    p99: pct(s, 0.99),
    p999: pct(s, 0.999),
    max: s[s.length - 1] ?? 0,
  };
}

interface Round {
  opsPerSec: number;
  /**
   * Ops per second of this process's CPU time (user + system, all threads, GC included) in the
   * throughput pass: on a shared machine the wall clock also counts the time the process waited
   * for a core, this does not. Compare both.
   */
  cpuOpsPerSec: number;
  latency: Latency & { instrumentedOpsPerSec: number };
  byOp: Record<string, { p50: number; p99: number }>;
  liveOrders: number;
}

function round(ad: EngineAdapter, w: Workload): Round {
  ad.create(w.markets);
  runPlain(ad, w, 0, w.warmup);
  gc();
  const cpu0 = process.cpuUsage();
  let t0 = process.hrtime.bigint();
  runPlain(ad, w, w.warmup, w.total);
  const opsPerSec = w.ops / (Number(process.hrtime.bigint() - t0) / 1e9);
  const cpu = process.cpuUsage(cpu0);
  const cpuOpsPerSec = w.ops / ((cpu.user + cpu.system) / 1e6);
  const liveOrders = ad.liveOrders();

  ad.create(w.markets);
  gc();
  runPlain(ad, w, 0, w.warmup);
  const lat = new Float64Array(w.ops);
  gc();
  t0 = process.hrtime.bigint();
  runTimed(ad, w, lat);
  const instrumentedOpsPerSec = w.ops / (Number(process.hrtime.bigint() - t0) / 1e9);
  const byOp: Record<string, { p50: number; p99: number }> = {};
  for (let k = 0; k < OP_NAMES.length; k++) {
    const part: number[] = [];
    for (let i = 0; i < w.ops; i++) if (w.kind[w.warmup + i] === k) part.push(lat[i]);
    const s = summarise(Float64Array.from(part));
    byOp[OP_NAMES[k]] = { p50: s.p50, p99: s.p99 };
  }
  ad.create(w.markets); // drop this engine's state before the other one runs
  gc();
  return {
    opsPerSec,
    cpuOpsPerSec,
    latency: { ...summarise(lat), instrumentedOpsPerSec },
    byOp,
    liveOrders,
  };
}

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Median of every numeric leaf over the rounds (structure from the first). */
function medianOf<T>(objs: T[]): T {
  const first = objs[0] as unknown;
  if (typeof first === 'number') return median(objs as number[]) as T;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(first as object)) {
    out[k] = medianOf(objs.map((o) => (o as Record<string, unknown>)[k]));
  }
  return out as T;
}

/** resetAccount on an account with 10,000 resting orders spread over all markets, among others'. */
function benchReset(markets: number): number[] {
  const times: number[] = [];
  const marketIds = Array.from({ length: markets }, (_, i) => `mkt_${i}`);
  for (let run = 0; run < RESET_RUNS; run++) {
    const engine = new MatchingEngine({
      clock: { now: () => Date.now() },
      ids: new SequentialIdGenerator(),
    });
    for (const m of marketIds) engine.addMarket(m);
    for (let a = 0; a <= 50; a++) engine.createAccount(`acc_${a}`, 10_000_000_000);
    for (let i = 0; i < RESET_ORDERS; i++) {
      const m = marketIds[i % markets];
      const buy = ((i >> 3) & 1) === 0;
      const price = buy ? 40 - (i % 8) : 60 + (i % 8);
      const action = buy ? 'BUY' : 'SELL';
      const r = engine.placeOrder({
        accountId: 'acc_0',
        marketId: m,
        action,
        side: 'YES',
        type: 'LIMIT',
        price,
        quantity: 5,
      });
      if (!r.ok) throw new Error(`setup failed: ${r.code}`);
      engine.placeOrder({
        accountId: `acc_${1 + (i % 50)}`,
        marketId: m,
        action,
        side: 'YES',
        type: 'LIMIT',
        price,
        quantity: 3,
      });
    }
    const t0 = process.hrtime.bigint();
    const r = engine.resetAccount('acc_0', 1_000_000);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (!r.ok || engine.openOrders('acc_0').length !== 0) throw new Error('reset failed');
    times.push(ms);
  }
  return times.sort((a, b) => a - b);
}

const f = (n: number): string => Math.round(n).toLocaleString('en-US');
const us = (ns: number): string => `${(ns / 1000).toFixed(2)} us`;

/** The engine classes of the checkout `--engine` names (built), or this checkout's. */
async function engineModule(): Promise<EngineModule | undefined> {
  const root = text('engine');
  if (root === null) return undefined;
  return (await import(
    pathToFileURL(join(root, 'dist', 'engine', 'index.js')).href
  )) as EngineModule;
}

function only(): string | null {
  const v = text('only');
  if (v !== null && v !== 'product' && v !== 'peer')
    throw new Error('--only takes product or peer');
  return v;
}

/** One round's line, as every mode prints it. */
function printRound(r: number, name: string, res: Round): void {
  console.log(
    `  round ${r} ${name}: ${f(res.opsPerSec)} ops/s (${f(res.cpuOpsPerSec)} per CPU s), ` +
      `p50 ${us(res.latency.p50)}, p99 ${us(res.latency.p99)}`,
  );
}

/** One engine alone (a profile of it, or one side of an A/B): its rounds' figures. */
async function runOnly(which: string, w: Workload, rounds: number): Promise<void> {
  const engines = await engineModule();
  const ad = which === 'product' ? productAdapter(w.maxId, engines) : peerAdapter(w.maxId);
  for (let r = 0; r < rounds; r++) {
    const res = round(ad, w);
    printRound(r + 1, ad.name, res);
    if (process.argv.includes('--json')) console.log(`JSON ${JSON.stringify(res)}`);
  }
}

/**
 * BENCH_BASELINE: this engine against another checkout's, A B A B, each round in a fresh child
 * process running this file with `--only product` (the same workload options passed on).
 */
function runAgainstBaseline(root: string, rounds: number): void {
  const self = fileURLToPath(import.meta.url);
  const passOn: string[] = [];
  for (const name of ['ops', 'warmup', 'seed', 'markets']) {
    const v = text(name);
    if (v !== null) passOn.push(`--${name}`, v);
  }
  const one = (engineRoot: string | null): Round => {
    const out = execFileSync(
      process.execPath,
      [
        '--expose-gc',
        // The young generation production runs with, as the parent got it from package.json.
        ...startScriptNodeFlags(),
        self,
        '--only',
        'product',
        '--rounds',
        '1',
        '--json',
        ...passOn,
        ...(engineRoot === null ? [] : ['--engine', engineRoot]),
      ],
      { encoding: 'utf8', maxBuffer: 1 << 24 },
    );
    const line = out.split('\n').find((l) => l.startsWith('JSON '));
    if (line === undefined) throw new Error(`no figures from the child:\n${out}`);
    return JSON.parse(line.slice(5)) as Round;
  };
  const product: Round[] = [];
  const base: Round[] = [];
  for (let r = 1; r <= rounds; r++) {
    // Which goes first alternates too, so neither always meets the machine as the other left it.
    const order = r % 2 === 1 ? ['product', 'baseline'] : ['baseline', 'product'];
    for (const name of order) {
      const res = one(name === 'product' ? null : root);
      (name === 'product' ? product : base).push(res);
      printRound(r, name, res);
    }
  }
  const p = medianOf(product);
  const b = medianOf(base);
  const ratio = {
    opsPerSec: +(p.opsPerSec / b.opsPerSec).toFixed(3),
    cpuOpsPerSec: +(p.cpuOpsPerSec / b.cpuOpsPerSec).toFixed(3),
    p99: +(p.latency.p99 / b.latency.p99).toFixed(3),
    rounds: product.map((x, i) => +(x.opsPerSec / base[i].opsPerSec).toFixed(3)),
    cpuRounds: product.map((x, i) => +(x.cpuOpsPerSec / base[i].cpuOpsPerSec).toFixed(3)),
  };
  console.log(
    `  product / baseline (${root}): ${ratio.opsPerSec.toFixed(3)}x ops/s (rounds ${ratio.rounds.join(', ')}), ` +
      `per CPU second ${ratio.cpuOpsPerSec.toFixed(3)}x (rounds ${ratio.cpuRounds.join(', ')}), ` +
      `p99 ${ratio.p99.toFixed(3)} of the baseline's`,
  );
  const out = join(dirname(self), '..', '..', 'bench', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, 'engine-ab.json'),
    JSON.stringify(
      {
        node: process.version,
        cores: cpus().length,
        loadAverage1m: Math.round(loadavg()[0] * 100) / 100,
        baseline: root,
        rounds,
        unit: { latency: 'ns' },
        product: { median: p, rounds: product },
        baselineFigures: { median: b, rounds: base },
        ratio,
      },
      null,
      2,
    ) + '\n',
  );
  console.log(`  wrote ${join(out, 'engine-ab.json')}`);
}

async function main(): Promise<void> {
  const single = only();
  const rounds = Math.max(single === null ? 2 : 1, option('rounds', 3));
  const tg = performance.now();
  const w = generateWorkload({
    seed: option('seed', 42),
    ops: option('ops', 1_000_000),
    warmup: option('warmup', 100_000),
    markets: option('markets', 100),
  });
  const genMs = performance.now() - tg;
  const s = w.summary;
  console.log(
    `engine bench (node ${process.version}, ${cpus().length} cpu, load avg ${loadavg()[0].toFixed(2)})`,
  );
  console.log(
    `  workload: seed ${s.seed}, ${f(s.ops)} ops after ${f(s.warmup)} warm-up, ${s.markets} markets; ` +
      `limit/cancel/ioc/reduce ${s.counts.limit}/${s.counts.cancel}/${s.counts.ioc}/${s.counts.reduce}; ` +
      `live orders avg ${s.liveOrdersAvg} (min ${s.liveOrdersMin}, max ${s.liveOrdersMax}); ` +
      `generated in ${f(genMs)} ms`,
  );
  if (single !== null) {
    await runOnly(single, w, rounds);
    return;
  }
  const baselineRoot = process.env.BENCH_BASELINE;
  if (baselineRoot !== undefined && baselineRoot !== '') {
    runAgainstBaseline(baselineRoot, rounds);
    return;
  }
  const adapters = [productAdapter(w.maxId), peerAdapter(w.maxId)];
  const runs: Round[][] = adapters.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let a = 0; a < adapters.length; a++) {
      const res = round(adapters[a], w);
      runs[a].push(res);
      printRound(r + 1, adapters[a].name, res);
    }
  }
  const [product, peer] = runs.map((rs) => medianOf(rs));
  const ratio = product.opsPerSec / peer.opsPerSec;
  const cpuRatio = product.cpuOpsPerSec / peer.cpuOpsPerSec;
  const p99Share = product.latency.p99 / peer.latency.p99;
  for (const [name, m] of [
    ['product', product],
    ['nodejs-order-book', peer],
  ] as const) {
    const ops = OP_NAMES.map((k) => `${k} ${us(m.byOp[k].p50)}/${us(m.byOp[k].p99)}`).join(', ');
    console.log(
      `  ${name.padEnd(17)} ${f(m.opsPerSec).padStart(10)} ops/s (${f(m.cpuOpsPerSec)} per CPU s)  ` +
        `p50 ${us(m.latency.p50)}  ` +
        `p99 ${us(m.latency.p99)}  p99.9 ${us(m.latency.p999)}  (p50/p99 by op: ${ops}); ` +
        `${f(m.liveOrders)} resting at end`,
    );
  }
  console.log(
    `  ratio product / nodejs-order-book: ${ratio.toFixed(2)}x ops/s (target >= ${TARGET_RATIO}x), ` +
      `p99 ${p99Share.toFixed(2)} of the peer's (target <= ${TARGET_P99_SHARE}); ` +
      `per CPU second ${cpuRatio.toFixed(2)}x`,
  );
  const resetMs = benchReset(w.markets);
  console.log(
    `  resetAccount(${f(RESET_ORDERS)} open orders): median ${resetMs[resetMs.length >> 1].toFixed(2)} ms`,
  );

  const results = {
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    /** Other work on the machine skews every figure: recorded so runs can be compared fairly. */
    loadAverage1m: Math.round(loadavg()[0] * 100) / 100,
    workload: { ...s, generateMs: Math.round(genMs) },
    rounds,
    unit: { latency: 'ns' },
    product: { median: product, rounds: runs[0] },
    peer: { name: 'nodejs-order-book 10.1.1', median: peer, rounds: runs[1] },
    ratio: {
      opsPerSec: +ratio.toFixed(3),
      cpuOpsPerSec: +cpuRatio.toFixed(3),
      p99: +p99Share.toFixed(3),
      target: { opsPerSec: TARGET_RATIO, p99: TARGET_P99_SHARE },
      met: ratio >= TARGET_RATIO && p99Share <= TARGET_P99_SHARE,
    },
    resetAccount: {
      openOrders: RESET_ORDERS,
      runsMs: resetMs,
      medianMs: resetMs[resetMs.length >> 1],
    },
  };
  const out = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'engine.json'), JSON.stringify(results, null, 2) + '\n');
  console.log(`  wrote ${join(out, 'engine.json')}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
