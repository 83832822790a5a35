/**
 * The benchmarked server's own view of a phase (support/stall-monitor.ts, loaded with
 * BENCH_LOOP_STATS=1 or BENCH_STALLS): how late its event loop ran timers (p50/p99/max of
 * perf_hooks.monitorEventLoopDelay, 10 ms resolution) and its garbage-collection pauses, by kind.
 * On a machine others load these move far less than the client's latencies; a pause counted here
 * is wall time, so a collection descheduled half-way counts whole.
 */
import type { BenchServer } from './server.js';

export interface LoopStats {
  /** The summary line as the server wrote it (`stalls summary: ...`). */
  line: string;
  delayP50Ms: number;
  delayP99Ms: number;
  delayMaxMs: number;
  /** GC pauses: count and total ms of each kind (minor, major, incremental, weak). */
  gc: Record<string, { count: number; totalMs: number; maxMs: number }>;
  gcTotalMs: number;
}

const SUMMARY =
  /^stalls summary: event-loop delay p50 ([\d.]+) p99 ([\d.]+) max ([\d.]+) ms;.*GC (.*)$/gm;

/** The newest summary the server wrote after `from` (an offset into its stderr), if any. */
function summaryAfter(stderr: string, from: number): LoopStats | null {
  let found: LoopStats | null = null;
  for (const m of stderr.slice(from).matchAll(SUMMARY)) {
    const gc: LoopStats['gc'] = {};
    let gcTotalMs = 0;
    for (const g of m[4].matchAll(/(\w+) (\d+) \((\d+) ms, max ([\d.]+)\)/g)) {
      gc[g[1]] = { count: Number(g[2]), totalMs: Number(g[3]), maxMs: Number(g[4]) };
      gcTotalMs += Number(g[3]);
    }
    found = {
      line: m[0],
      delayP50Ms: Number(m[1]),
      delayP99Ms: Number(m[2]),
      delayMaxMs: Number(m[3]),
      gc,
      gcTotalMs,
    };
  }
  return found;
}

/** Asks the server for its summary (SIGUSR2) and waits up to 5 s for it; null without one. */
async function ask(server: BenchServer): Promise<LoopStats | null> {
  const from = server.stderr().length;
  server.proc.kill('SIGUSR2');
  const deadline = Date.now() + 5000;
  for (;;) {
    const s = summaryAfter(server.stderr(), from);
    if (s !== null || Date.now() > deadline) return s;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Runs a phase between two summaries (the first one resets the server's figures) and returns
 * its result with the server's figures over it; `stats` is null if the monitor is not loaded.
 */
export async function loopStatsOf<T>(
  server: BenchServer,
  run: () => Promise<T>,
): Promise<{ result: T; stats: LoopStats | null }> {
  const loaded = process.env.BENCH_LOOP_STATS || process.env.BENCH_STALLS;
  if (loaded) await ask(server);
  const result = await run();
  return { result, stats: loaded ? await ask(server) : null };
}

export const loopStatsLine = (s: LoopStats | null): string =>
  s === null
    ? 'server loop stats: not measured'
    : `server event-loop delay p50 ${s.delayP50Ms} p99 ${s.delayP99Ms} max ${s.delayMaxMs} ms; GC pauses ${s.gcTotalMs} ms (${Object.entries(
        s.gc,
      )
        .map(([k, g]) => `${k} ${g.count}: ${g.totalMs} ms, max ${g.maxMs}`)
        .join('; ')})`;
