import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The Node flags `npm start` runs the service with, read from its script in package.json (the one
 * place they are written), so benchmarks measure what production runs:
 * a larger young generation (`--max-semi-space-size=64`), because the engine and the request path
 * allocate many short-lived objects (events, snapshots) and the default 16 MB semi-space makes
 * scavenges frequent.
 *
 * BENCH_PROF=<dir> also writes the server's CPU profile there (read it with Chrome DevTools);
 * BENCH_STALLS=<ms> loads the stall monitor (support/stall-monitor.ts) into the server and has it
 * report every stall longer than that; BENCH_LOOP_STATS=1 (bench:orders sets it) loads it for its
 * summaries only (event-loop delay, GC pauses: support/loop-stats.ts).
 */
const STALL_MONITOR = fileURLToPath(new URL('./stall-monitor.js', import.meta.url));

/** The flags between `exec node` and `dist/main.js` in package.json's `start` script. */
export function startScriptNodeFlags(): string[] {
  const pkgPath = fileURLToPath(new URL('../../../package.json', import.meta.url));
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { scripts: { start: string } };
  const found = /\bexec node ((?:--\S+ )*)dist\/main\.js$/.exec(pkg.scripts.start);
  if (found === null) {
    throw new Error(`package.json's start script does not end in "exec node <flags> dist/main.js"`);
  }
  return found[1].split(' ').filter((flag) => flag !== '');
}

export const serverNodeArgs = (): string[] => [
  ...startScriptNodeFlags(),
  ...(process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=' + process.env.BENCH_PROF] : []),
  ...(process.env.BENCH_STALLS || process.env.BENCH_LOOP_STATS
    ? ['--import=' + STALL_MONITOR]
    : []),
  ...(process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(' ') : []),
];
