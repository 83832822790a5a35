/**
 * Loaded into the benchmarked server with `--import` when BENCH_STALLS=<ms> is set: reports
 * every event-loop stall longer than that many milliseconds on stderr, as
 * `stall <ms> ms ending at <ms since start>`, so a latency tail can be lined up with the server's
 * own pauses (add `BENCH_NODE_FLAGS=--trace-gc` to see which were garbage collection). Shown
 * with BENCH_ECHO=1. A 2 ms timer measures the gaps, so shorter stalls are not seen.
 */
import { performance } from 'node:perf_hooks';

const threshold = Number(process.env.BENCH_STALLS ?? 10);
const start = performance.now();
let last = start;
setInterval(() => {
  const now = performance.now();
  if (now - last > threshold) {
    process.stderr.write(
      `stall ${(now - last).toFixed(1)} ms ending at ${(now - start).toFixed(0)} ms\n`,
    );
  }
  last = now;
}, 2).unref();
