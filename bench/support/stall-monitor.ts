/**
 * Loaded into the benchmarked server with `--import` (support/server-args.ts). With
 * BENCH_STALLS=<ms> it reports every event-loop stall longer than that many milliseconds on stderr, as
 * `stall <ms> ms ending at <ms since start> (main thread on CPU <ms>, waiting for a CPU <ms>,
 * GC <ms>)`, so a latency tail can be lined up with the server's own pauses. On a machine others
 * load most stalls are the run queue (the main thread was runnable but got no CPU); those whose
 * time was on a CPU are the server's own work, and the GC share says how much of it was the
 * collector's pause. Linux reads the main thread's scheduler figures from /proc/self/schedstat;
 * elsewhere they are left out. A 2 ms timer measures the gaps, so shorter stalls are not seen.
 * Always (BENCH_LOOP_STATS=1 alone loads it for this): on SIGUSR2 (and at exit) it writes a
 * summary line: `stalls summary ...` with the event loop's
 * delay p50/p99/max (perf_hooks.monitorEventLoopDelay), the count and total of stalls on a CPU,
 * and the count and total pause of each kind of GC since the last summary (then starts afresh).
 * Shown with BENCH_ECHO=1.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';

const stalls = process.env.BENCH_STALLS !== undefined && process.env.BENCH_STALLS !== '';
const threshold = stalls ? Number(process.env.BENCH_STALLS) : 10;
const start = performance.now();

/** The main thread's time on a CPU and waiting for one so far, ms; null off Linux. */
function sched(): [number, number] | null {
  try {
    const [on, wait] = readFileSync('/proc/self/schedstat', 'utf8').split(' ');
    return [Number(on) / 1e6, Number(wait) / 1e6];
  } catch {
    return null;
  }
}

const GC_KINDS: Record<number, string> = { 1: 'minor', 2: 'major', 4: 'incremental', 8: 'weak' };
/** GC pauses of the main thread: [start, duration, kind] of the last few seconds. */
let gcs: [number, number, string][] = [];
const gcTotals = new Map<string, { n: number; ms: number; maxMs: number }>();
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind =
      GC_KINDS[(e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0] ?? 'other';
    gcs.push([e.startTime, e.duration, kind]);
    const t = gcTotals.get(kind) ?? { n: 0, ms: 0, maxMs: 0 };
    t.n++;
    t.ms += e.duration;
    t.maxMs = Math.max(t.maxMs, e.duration);
    gcTotals.set(kind, t);
  }
  if (gcs.length > 256) gcs = gcs.slice(-128);
}).observe({ entryTypes: ['gc'] });

// A 10 ms timer (the default): a 1 ms one would wake the server a thousand times a second.
const RESOLUTION_MS = 10;
const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
delay.enable();
let onCpuStalls = { n: 0, ms: 0 };

let last = start;
let lastSched = stalls ? sched() : null;
const watch = (): void => {
  const now = performance.now();
  const s = sched();
  if (now - last > threshold) {
    const on = s !== null && lastSched !== null ? s[0] - lastSched[0] : NaN;
    const wait = s !== null && lastSched !== null ? s[1] - lastSched[1] : NaN;
    let gc = 0;
    for (const [at, ms] of gcs) if (at + ms > last && at < now) gc += ms;
    if (on > threshold) {
      onCpuStalls.n++;
      onCpuStalls.ms += on;
    }
    process.stderr.write(
      `stall ${(now - last).toFixed(1)} ms ending at ${(now - start).toFixed(0)} ms (main thread on CPU ${on.toFixed(1)}, waiting for a CPU ${wait.toFixed(1)}, GC ${gc.toFixed(1)})\n`,
    );
  }
  last = now;
  lastSched = s;
};
if (stalls) setInterval(watch, 2).unref();

function summary(): void {
  // The histogram holds the timer's whole interval: what it ran late is that minus the period.
  const ms = (ns: number): string =>
    delay.count === 0 ? '0.0' : Math.max(0, ns / 1e6 - RESOLUTION_MS).toFixed(1);
  const gc = [...gcTotals]
    .map(([k, t]) => `${k} ${t.n} (${t.ms.toFixed(0)} ms, max ${t.maxMs.toFixed(1)})`)
    .join(', ');
  process.stderr.write(
    `stalls summary: event-loop delay p50 ${ms(delay.percentile(50))} p99 ${ms(delay.percentile(99))} max ${ms(delay.max)} ms; ` +
      (stalls
        ? `stalls over ${threshold} ms on a CPU ${onCpuStalls.n} (${onCpuStalls.ms.toFixed(0)} ms); `
        : '') +
      `GC ${gc || 'none'}\n`,
  );
  delay.reset();
  gcTotals.clear();
  onCpuStalls = { n: 0, ms: 0 };
}
process.on('SIGUSR2', summary);
process.on('exit', summary);
