/**
 * In-process matching engine benchmark: 100 markets, a few thousand funded accounts, a seeded op
 * mix of 60% passive limit placements, 25% cancels, 10% marketable orders (half MARKET, half
 * LIMIT IOC) and 5% amends. Prints throughput and per-op latency percentiles, times
 * resetAccount on an account with 10,000 open orders, and writes bench/results/engine.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  MatchingEngine,
  mulberry32,
  SequentialIdGenerator,
  type Action,
  type Clock,
  type EngineEvent,
  type OrderSnapshot,
  type Result,
  type Side,
} from '../src/engine/index.js';

const MARKETS = 100;
const ACCOUNTS = 3_000;
const WARMUP_OPS = 300_000;
const MEASURED_OPS = 1_000_000;
const THROUGHPUT_RUNS = 3;
const RESET_ORDERS = 10_000;
const RESET_RUNS = 7;

const clock: Clock = { now: () => Date.now() };
const marketIds = Array.from({ length: MARKETS }, (_, i) => `mkt_${i}`);
const accountIds = Array.from({ length: ACCOUNTS }, (_, i) => `acc_${i}`);
const mid = (m: number): number => 30 + (m % 40);

/** Four user forms of the two book sides: bid = BUY YES p | SELL NO 100-p, ask = SELL YES p | BUY NO 100-p. */
const FORMS: readonly [Action, Side][] = [
  ['BUY', 'YES'],
  ['SELL', 'NO'],
  ['SELL', 'YES'],
  ['BUY', 'NO'],
];
const isBidForm = (f: number): boolean => f < 2;
const ownPrice = (f: number, yesPrice: number): number =>
  FORMS[f][1] === 'YES' ? yesPrice : 100 - yesPrice;

function newEngine(): MatchingEngine {
  const engine = new MatchingEngine({ clock, ids: new SequentialIdGenerator() });
  for (const m of marketIds) engine.addMarket(m);
  for (const a of accountIds) engine.createAccount(a, 10_000_000_000);
  return engine;
}

/** Live resting orders the workload can cancel or amend (swap-remove by id). */
class Pool {
  readonly ids: string[] = [];
  readonly forms: number[] = [];
  readonly markets: number[] = [];
  private readonly index = new Map<string, number>();
  add(id: string, form: number, market: number): void {
    this.index.set(id, this.ids.length);
    this.ids.push(id);
    this.forms.push(form);
    this.markets.push(market);
  }
  remove(id: string): void {
    const i = this.index.get(id);
    if (i === undefined) return;
    this.index.delete(id);
    const last = this.ids.length - 1;
    if (i !== last) {
      this.ids[i] = this.ids[last];
      this.forms[i] = this.forms[last];
      this.markets[i] = this.markets[last];
      this.index.set(this.ids[i], i);
    }
    this.ids.pop();
    this.forms.pop();
    this.markets.pop();
  }
  /** Makers completely filled by a taker leave the pool. */
  removeFilled(events: readonly EngineEvent[], takerId: string): void {
    for (const e of events) {
      if (e.type === 'order.updated' && e.status === 'FILLED' && e.orderId !== takerId) {
        this.remove(e.orderId);
      }
    }
  }
}

/** Operation kinds of the workload tape. */
const LIMIT = 0;
const CANCEL = 1;
const MARKETABLE = 2;
const AMEND = 3;

/**
 * The workload, recorded once against a reference engine and then replayed. The engine is
 * deterministic (ids and matching do not depend on the clock), so a replay on a fresh engine
 * sees exactly the same book, and the timed loop carries no workload bookkeeping: it only builds
 * each request object, as a caller would, and calls the engine.
 */
interface Tape {
  readonly kind: Uint8Array;
  readonly account: Uint16Array;
  readonly market: Uint8Array;
  readonly form: Uint8Array;
  /** Own-terms price; 0 = MARKET (or no price change for an amend). */
  readonly price: Uint8Array;
  /** Quantity; for an amend 0 = no quantity change. */
  readonly qty: Uint16Array;
  /** Target order of a cancel or amend. */
  readonly ids: string[];
}

interface Mix {
  limit: number;
  cancel: number;
  marketable: number;
  amend: number;
  trades: number;
  failures: Record<string, number>;
}

function record(n: number): { tape: Tape; mix: Mix } {
  const engine = newEngine();
  const pool = new Pool();
  const rnd = mulberry32(20240601);
  const tape: Tape = {
    kind: new Uint8Array(n),
    account: new Uint16Array(n),
    market: new Uint8Array(n),
    form: new Uint8Array(n),
    price: new Uint8Array(n),
    qty: new Uint16Array(n),
    ids: new Array<string>(n).fill(''),
  };
  const mix: Mix = { limit: 0, cancel: 0, marketable: 0, amend: 0, trades: 0, failures: {} };
  for (let i = 0; i < n; i++) {
    const r0 = rnd();
    const a = (rnd() * ACCOUNTS) | 0;
    const m = (rnd() * MARKETS) | 0;
    const form = (rnd() * 4) | 0;
    tape.account[i] = a;
    tape.market[i] = m;
    tape.form[i] = form;
    let kind = r0 < 0.6 ? LIMIT : r0 < 0.85 ? CANCEL : r0 < 0.95 ? MARKETABLE : AMEND;
    if ((kind === CANCEL || kind === AMEND) && pool.ids.length === 0) kind = LIMIT;
    tape.kind[i] = kind;
    if (kind === LIMIT) {
      const off = 1 + ((rnd() * 8) | 0);
      tape.price[i] = ownPrice(form, isBidForm(form) ? mid(m) - off : mid(m) + off);
      tape.qty[i] = 1 + ((rnd() * 20) | 0);
    } else if (kind === MARKETABLE) {
      tape.price[i] = rnd() < 0.5 ? 0 : ownPrice(form, isBidForm(form) ? mid(m) + 10 : mid(m) - 10);
      tape.qty[i] = 10 + ((rnd() * 40) | 0);
    } else {
      const k = (rnd() * pool.ids.length) | 0;
      tape.ids[i] = pool.ids[k];
      if (kind === AMEND) {
        const f = pool.forms[k];
        const pm = pool.markets[k];
        const off = 1 + ((rnd() * 8) | 0);
        if (rnd() < 0.5) tape.price[i] = ownPrice(f, isBidForm(f) ? mid(pm) - off : mid(pm) + off);
        else tape.qty[i] = 25 + ((rnd() * 10) | 0);
      }
    }
    const r = apply(engine, tape, i);
    if (!r.ok) mix.failures[r.code] = (mix.failures[r.code] ?? 0) + 1;
    if (kind === LIMIT) {
      mix.limit++;
      if (r.ok && r.order.remainingQuantity > 0) pool.add(r.order.id, form, m);
    } else if (kind === CANCEL) {
      mix.cancel++;
      pool.remove(tape.ids[i]);
    } else if (kind === MARKETABLE) {
      mix.marketable++;
      if (r.ok) {
        pool.removeFilled(r.events, r.order.id);
        for (const e of r.events) if (e.type === 'trade') mix.trades++;
      }
    } else mix.amend++;
  }
  return { tape, mix };
}

/** Performs tape entry `i` on `engine`, building the request as a caller would. */
function apply(engine: MatchingEngine, tape: Tape, i: number): Result<{ order: OrderSnapshot }> {
  const kind = tape.kind[i];
  if (kind === CANCEL) return engine.cancelOrder(tape.ids[i]);
  if (kind === AMEND) {
    const price = tape.price[i];
    return engine.amendOrder(tape.ids[i], price === 0 ? { quantity: tape.qty[i] } : { price });
  }
  const form = tape.form[i];
  const price = tape.price[i];
  if (kind === LIMIT) {
    return engine.placeOrder({
      accountId: accountIds[tape.account[i]],
      marketId: marketIds[tape.market[i]],
      action: FORMS[form][0],
      side: FORMS[form][1],
      type: 'LIMIT',
      price,
      quantity: tape.qty[i],
    });
  }
  return engine.placeOrder({
    accountId: accountIds[tape.account[i]],
    marketId: marketIds[tape.market[i]],
    action: FORMS[form][0],
    side: FORMS[form][1],
    type: price === 0 ? 'MARKET' : 'LIMIT',
    price: price === 0 ? null : price,
    quantity: tape.qty[i],
    timeInForce: 'IOC',
  });
}

/** Replays [from, to) and returns the number of failed ops; times each op into `lat` if given. */
function replay(
  engine: MatchingEngine,
  tape: Tape,
  from: number,
  to: number,
  lat: Float64Array | null,
): number {
  let failed = 0;
  if (lat === null) {
    for (let i = from; i < to; i++) if (!apply(engine, tape, i).ok) failed++;
    return failed;
  }
  for (let i = from; i < to; i++) {
    const t0 = process.hrtime.bigint();
    const r = apply(engine, tape, i);
    lat[i - from] = Number(process.hrtime.bigint() - t0);
    if (!r.ok) failed++;
  }
  return failed;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function benchReset(): number[] {
  const times: number[] = [];
  for (let run = 0; run < RESET_RUNS; run++) {
    const engine = newEngine();
    const who = accountIds[0];
    // 10,000 resting orders spread over all markets and 8 levels per side, among other traffic.
    for (let i = 0; i < RESET_ORDERS; i++) {
      const m = i % MARKETS;
      const form = (i >> 3) % 4;
      const off = 1 + (i % 8);
      const yes = isBidForm(form) ? mid(m) - off : mid(m) + off;
      const r = engine.placeOrder({
        accountId: who,
        marketId: marketIds[m],
        action: FORMS[form][0],
        side: FORMS[form][1],
        type: 'LIMIT',
        price: ownPrice(form, yes),
        quantity: 5,
      });
      if (!r.ok) throw new Error(`setup failed: ${r.code}`);
      engine.placeOrder({
        accountId: accountIds[1 + (i % 50)],
        marketId: marketIds[m],
        action: FORMS[form][0],
        side: FORMS[form][1],
        type: 'LIMIT',
        price: ownPrice(form, yes),
        quantity: 3,
      });
    }
    const t0 = process.hrtime.bigint();
    const r = engine.resetAccount(who, 1_000_000);
    const ns = Number(process.hrtime.bigint() - t0);
    if (!r.ok || engine.openOrders(who).length !== 0) throw new Error('reset failed');
    times.push(ns / 1e6);
  }
  return times;
}

function main(): void {
  const total = WARMUP_OPS + MEASURED_OPS;
  const { tape, mix } = record(total);

  // Throughput: wall clock of the whole measured replay, no per-op timer.
  const runs: number[] = [];
  let expectedFailures = -1;
  for (let run = 0; run < THROUGHPUT_RUNS; run++) {
    const engine = newEngine();
    replay(engine, tape, 0, WARMUP_OPS, null);
    const t0 = process.hrtime.bigint();
    const failed = replay(engine, tape, WARMUP_OPS, total, null);
    runs.push(MEASURED_OPS / (Number(process.hrtime.bigint() - t0) / 1e9));
    if (expectedFailures >= 0 && failed !== expectedFailures) throw new Error('replay diverged');
    expectedFailures = failed;
  }
  runs.sort((a, b) => a - b);
  const opsPerSec = runs[runs.length >> 1];

  // Latency: the same replay with every op timed on its own.
  const engine = newEngine();
  replay(engine, tape, 0, WARMUP_OPS, null);
  const lat = new Float64Array(MEASURED_OPS);
  replay(engine, tape, WARMUP_OPS, total, lat);
  let sum = 0;
  for (let i = 0; i < lat.length; i++) sum += lat[i];
  const sorted = lat.slice().sort();
  const latency = {
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    p999: percentile(sorted, 99.9),
    max: sorted[sorted.length - 1],
    mean: sum / lat.length,
  };

  const resetMs = benchReset().sort((a, b) => a - b);
  const results = {
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    /** Other work on the machine skews every figure: recorded so runs can be compared fairly. */
    loadAverage1m: Math.round(loadavg()[0] * 100) / 100,
    markets: MARKETS,
    accounts: ACCOUNTS,
    workload: {
      mix: '60% limit / 25% cancel / 10% marketable (half MARKET, half LIMIT IOC) / 5% amend',
      warmupOps: WARMUP_OPS,
      measuredOps: MEASURED_OPS,
      recorded: mix,
      failedOpsInMeasuredPart: expectedFailures,
      restingOrdersAtEnd: engine.openOrderCount(),
    },
    throughput: { opsPerSec: Math.round(opsPerSec), runsOpsPerSec: runs.map(Math.round) },
    latencyNs: latency,
    resetAccount: {
      openOrders: RESET_ORDERS,
      runsMs: resetMs,
      medianMs: resetMs[resetMs.length >> 1],
    },
  };

  const f = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 2 });
  console.log(
    `engine bench (node ${process.version}, ${MARKETS} markets, ${ACCOUNTS} accounts, load avg ${results.loadAverage1m} on ${results.cores} cores)`,
  );
  console.log(`  workload: ${results.workload.mix}; ${f(mix.trades)} trades recorded`);
  console.log(
    `  throughput: ${f(opsPerSec)} ops/s median of ${THROUGHPUT_RUNS} runs of ${f(MEASURED_OPS)} ops (${runs.map(f).join(', ')})`,
  );
  console.log(
    `  latency ns: p50 ${f(latency.p50)}  p90 ${f(latency.p90)}  p99 ${f(latency.p99)}  p99.9 ${f(latency.p999)}  max ${f(latency.max)}  mean ${f(latency.mean)}`,
  );
  console.log(
    `  failed ops (measured part): ${f(expectedFailures)}; resting orders at end: ${f(results.workload.restingOrdersAtEnd)}`,
  );
  console.log(
    `  resetAccount(${f(RESET_ORDERS)} open orders): median ${f(results.resetAccount.medianMs)} ms (runs ${resetMs.map(f).join(', ')})`,
  );

  const out = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'engine.json'), JSON.stringify(results, null, 2) + '\n');
  console.log(`  wrote ${join(out, 'engine.json')}`);
}

main();
