/**
 * CPU accounting of the parts a bench runs (Linux /proc): a process, a process with all its
 * children (PostgreSQL: the postmaster and its backends, including those that exited), and the
 * bench's own process (the load generator). A meter reads every part at the start and the end
 * of a phase and reports each one's CPU-seconds and share of the phase's wall time.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpuSeconds, schedSeconds } from './order-load.js';

const CLOCK_TICKS_PER_SEC = 100; // USER_HZ on Linux

/** The fields of /proc/<pid>/stat after the command name, or null if the process is gone. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** The parent of a process, or null if it is gone. */
export function parentPid(pid: number): number | null {
  const f = statFields(pid);
  return f === null ? null : Number(f[1]);
}

/** The live children of `pid`, with their command names (/proc/<pid>/comm). */
export function childProcesses(pid: number): { pid: number; comm: string }[] {
  const out: { pid: number; comm: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const child = Number(entry);
    if (parentPid(child) !== pid) continue;
    try {
      out.push({ pid: child, comm: readFileSync(`/proc/${child}/comm`, 'utf8').trim() });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/**
 * CPU-seconds of a process and of all its children so far: its own time, the time of children
 * that exited and were waited for (cutime + cstime), and the own and waited-for time of each
 * live child. For PostgreSQL's postmaster that is every backend's CPU, a backend that ended
 * during the phase included. Null if the process is gone.
 */
export function treeCpuSeconds(pid: number): number | null {
  const own = statFields(pid);
  if (own === null) return null;
  const ticks = (f: string[]): number =>
    Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  let total = ticks(own);
  for (const child of childProcesses(pid)) {
    const f = statFields(child.pid);
    if (f !== null) total += ticks(f);
  }
  return total / CLOCK_TICKS_PER_SEC;
}

/** This process's CPU-seconds so far (every thread: the load generator and its clients). */
export function selfCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

export interface CpuPart {
  name: string;
  /** CPU-seconds so far; null once the part is gone. */
  read(): number | null;
  /** Seconds its main thread spent runnable but waiting for a CPU so far, where known. */
  waited?(): number | null;
}

export const processPart = (name: string, pid: number): CpuPart => ({
  name,
  read: () => cpuSeconds(pid),
  waited: () => schedSeconds(pid)?.runQueue ?? null,
});
export const treePart = (name: string, pid: number): CpuPart => ({
  name,
  read: () => treeCpuSeconds(pid),
});
export const selfPart = (name: string): CpuPart => ({ name, read: selfCpuSeconds });

export interface PartCpu {
  cpuSeconds: number;
  /** cpuSeconds / wall seconds, in percent (100 = one core busy the whole phase). */
  pctOfWall: number;
  /**
   * Share of the wall time its main thread was runnable but waiting for a CPU, in percent (a
   * process, not PostgreSQL's tree nor the bench): on a machine others load, a part that looks
   * idle with a high figure here was starved, not idle.
   */
  waitingForCpuPct?: number;
}

export interface PhaseCpu {
  wallSeconds: number;
  parts: Record<string, PartCpu>;
  /** All parts together. */
  total: PartCpu;
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

/** Runs `run` and reports what each part used meanwhile (a part gone by the end is left out). */
export async function metered<T>(
  parts: readonly CpuPart[],
  run: () => Promise<T>,
): Promise<{ result: T; cpu: PhaseCpu }> {
  const before = parts.map((p) => p.read());
  const waitedBefore = parts.map((p) => p.waited?.() ?? null);
  const startedAt = performance.now();
  const result = await run();
  const wall = (performance.now() - startedAt) / 1000;
  const after = parts.map((p) => p.read());
  const waitedAfter = parts.map((p) => p.waited?.() ?? null);
  const out: Record<string, PartCpu> = {};
  let sum = 0;
  parts.forEach((p, i) => {
    const a = after[i];
    const b = before[i];
    if (a === null || b === null) return;
    sum += a - b;
    out[p.name] = { cpuSeconds: round2(a - b), pctOfWall: Math.round(((a - b) / wall) * 100) };
    const wa = waitedAfter[i];
    const wb = waitedBefore[i];
    if (wa !== null && wb !== null)
      out[p.name].waitingForCpuPct = Math.round(((wa - wb) / wall) * 100);
  });
  return {
    result,
    cpu: {
      wallSeconds: round2(wall),
      parts: out,
      total: { cpuSeconds: round2(sum), pctOfWall: Math.round((sum / wall) * 100) },
    },
  };
}

/**
 * The phase's CPU as one line: `instance A 3.1 s (31%, waiting for a CPU 40%), postgres 2.0 s
 * (20%), ...`.
 */
export function cpuLine(cpu: PhaseCpu): string {
  const parts = Object.entries(cpu.parts).map(
    ([name, c]) =>
      `${name} ${c.cpuSeconds} s (${c.pctOfWall}%${c.waitingForCpuPct === undefined ? '' : `, waiting ${c.waitingForCpuPct}%`})`,
  );
  return `CPU over ${cpu.wallSeconds} s: ${parts.join(', ')}; all ${cpu.total.cpuSeconds} s (${cpu.total.pctOfWall}%)`;
}
