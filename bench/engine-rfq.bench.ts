/**
 * In-process micro-bench of the RFQ engine commands (issue 20): 100 markets with a resting book
 * each, 3,000 funded accounts; each measured step is one quote's life as the RFQ module drives
 * it, placeHold for the responder then crossQuote releasing it (the four accept forms in turn,
 * random parties, so positions net and reservations are recomputed against resting orders).
 * Prints crosses per second and crossQuote latency percentiles, and writes
 * bench/results/engine-rfq.json. No database: the HTTP figure with durable commits is bench:rfq.
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
  type Side,
} from '../src/engine/index.js';

const MARKETS = 100;
const ACCOUNTS = 3_000;
const WARMUP = 50_000;
const MEASURED = 300_000;
const RUNS = 3;
const FORMS: readonly [Action, Side][] = [
  ['BUY', 'YES'],
  ['SELL', 'NO'],
  ['SELL', 'YES'],
  ['BUY', 'NO'],
];
const marketIds = Array.from({ length: MARKETS }, (_, i) => `mkt_${i}`);
const accountIds = Array.from({ length: ACCOUNTS }, (_, i) => `acc_${i}`);

function newEngine(): MatchingEngine {
  const engine = new MatchingEngine({
    clock: { now: () => Date.now() },
    ids: new SequentialIdGenerator(),
  });
  for (const m of marketIds) engine.addMarket(m);
  for (const a of accountIds) engine.createAccount(a, 10_000_000_000);
  // A resting book per market (bids 40..44, asks 56..60) from the first 500 accounts.
  for (let i = 0; i < MARKETS * 20; i++) {
    const yes = i % 2 === 0 ? 40 + (i % 5) : 56 + (i % 5);
    engine.placeOrder({
      accountId: accountIds[i % 500],
      marketId: marketIds[i % MARKETS],
      action: i % 2 === 0 ? 'BUY' : 'SELL',
      side: 'YES',
      type: 'LIMIT',
      price: yes,
      quantity: 10,
    });
  }
  return engine;
}

/** Runs steps [from, to) of the seeded workload; fills `lat` with crossQuote times (ns) if given. */
function run(engine: MatchingEngine, from: number, to: number, lat: Float64Array | null): void {
  const rnd = mulberry32(7 + from);
  for (let i = from; i < to; i++) {
    const taker = accountIds[Math.floor(rnd() * ACCOUNTS)];
    let maker = accountIds[Math.floor(rnd() * ACCOUNTS)];
    if (maker === taker) maker = accountIds[(accountIds.indexOf(taker) + 1) % ACCOUNTS];
    const marketId = marketIds[i % MARKETS];
    const bid = 45 + Math.floor(rnd() * 4);
    const ask = bid + 4;
    const qty = 1 + Math.floor(rnd() * 50);
    const [action, side] = FORMS[i % 4];
    const yes = i % 4 < 2 ? ask : bid;
    const holdId = `qte_${i}`;
    const held = engine.placeHold({ holdId, accountId: maker, marketId, amountCents: 100 * qty });
    if (!held.ok) throw new Error(`hold failed: ${held.code}`);
    const t0 = lat === null ? 0n : process.hrtime.bigint();
    const r = engine.crossQuote({
      marketId,
      quantity: qty,
      taker: { accountId: taker, action, side, price: side === 'YES' ? yes : 100 - yes },
      maker: { accountId: maker },
      rfqId: `rfq_${i}`,
      releaseHoldId: holdId,
    });
    if (lat !== null) lat[i - from] = Number(process.hrtime.bigint() - t0);
    if (!r.ok) throw new Error(`cross failed: ${r.code}`);
  }
}

function main(): void {
  const rates: number[] = [];
  for (let k = 0; k < RUNS; k++) {
    const engine = newEngine();
    run(engine, 0, WARMUP, null);
    const t0 = process.hrtime.bigint();
    run(engine, WARMUP, WARMUP + MEASURED, null);
    rates.push(MEASURED / (Number(process.hrtime.bigint() - t0) / 1e9));
  }
  rates.sort((a, b) => a - b);
  const engine = newEngine();
  run(engine, 0, WARMUP, null);
  const lat = new Float64Array(MEASURED);
  run(engine, WARMUP, WARMUP + MEASURED, lat);
  const sorted = lat.slice().sort();
  const at = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  const results = {
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    loadAverage1m: Math.round(loadavg()[0] * 100) / 100,
    markets: MARKETS,
    accounts: ACCOUNTS,
    measuredSteps: MEASURED,
    /** One step = placeHold + crossQuote (the hold released by the cross). */
    stepsPerSec: Math.round(rates[rates.length >> 1]),
    runsStepsPerSec: rates.map(Math.round),
    crossQuoteLatencyNs: {
      p50: at(50),
      p90: at(90),
      p99: at(99),
      p999: at(99.9),
      max: sorted[sorted.length - 1],
    },
  };
  const f = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 0 });
  console.log(
    `engine RFQ bench (node ${process.version}, ${MARKETS} markets, ${ACCOUNTS} accounts, load avg ${results.loadAverage1m} on ${results.cores} cores)`,
  );
  console.log(
    `  hold + cross: ${f(results.stepsPerSec)} per second, median of ${RUNS} runs of ${f(MEASURED)} (${rates.map(f).join(', ')})`,
  );
  const l = results.crossQuoteLatencyNs;
  console.log(
    `  crossQuote ns: p50 ${f(l.p50)}  p90 ${f(l.p90)}  p99 ${f(l.p99)}  p99.9 ${f(l.p999)}  max ${f(l.max)}`,
  );
  const out = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'engine-rfq.json'), JSON.stringify(results, null, 2) + '\n');
  console.log(`  wrote ${join(out, 'engine-rfq.json')}`);
}

main();
