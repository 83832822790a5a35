import { fileURLToPath } from 'node:url';

/**
 * The Node flags `npm start` runs the service with, so benchmarks measure what production runs:
 * a larger young generation, because the engine and the request path allocate many short-lived
 * objects (events, snapshots) and the default 16 MB semi-space makes scavenges frequent.
 * BENCH_PROF=<dir> also writes the server's CPU profile there (read it with Chrome DevTools);
 * BENCH_STALLS=<ms> loads the stall monitor (support/stall-monitor.ts) into the server and has it
 * report every stall longer than that; BENCH_LOOP_STATS=1 (bench:orders sets it) loads it for its
 * summaries only (event-loop delay, GC pauses: support/loop-stats.ts).
 */
const STALL_MONITOR = fileURLToPath(new URL('./stall-monitor.js', import.meta.url));

export const serverNodeArgs = (): string[] => [
  '--max-semi-space-size=64',
  ...(process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_PROF] : []),
  ...(process.env.BENCH_STALLS || process.env.BENCH_LOOP_STATS
    ? ['--import=' + STALL_MONITOR]
    : []),
  ...(process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(' ') : []),
];
