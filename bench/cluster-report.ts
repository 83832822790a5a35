/**
 * bench:cluster's report: the table it prints, the requests it counts as failed, and the
 * results file it writes (bench/results/cluster-<date>.json).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DeliveryFigures } from './support/cross-instance-delivery.js';
import type { Figures } from './support/order-load.js';
import type { PhaseCpu } from './support/process-cpu.js';

/** The one refusal a cluster may answer while a writer is (re)elected; counted, not a failure. */
export const ALLOWED_REFUSAL = '503 WRITER_UNAVAILABLE';

export interface Phase {
  name: string;
  figures: Figures;
  cpu: PhaseCpu;
}

export interface Configuration {
  name: string;
  /** The CPU parts that serve it (its processes, and PostgreSQL and Redis for the cluster). */
  serverParts: string[];
  saturation: Phase;
  paced: Phase;
}

/**
 * CPU-milliseconds its server parts used per answered order at saturation: on a machine others
 * load it moves far less than orders/s, which also carries how much CPU the phase happened to get.
 */
export function cpuMsPerOrder(c: Configuration): number {
  const f = c.saturation.figures;
  const cpu = c.serverParts.reduce(
    (sum, p) => sum + (c.saturation.cpu.parts[p]?.cpuSeconds ?? 0),
    0,
  );
  return f.total2xx === 0 ? 0 : Math.round((cpu * 1e6) / f.total2xx) / 1000;
}

/** What went wrong in a phase: every non-2xx but the allowed refusal, and connection errors. */
export function failuresOf(phase: Phase): string[] {
  const out: string[] = [];
  for (const [label, n] of Object.entries(phase.figures.answers ?? {})) {
    if (label !== ALLOWED_REFUSAL) out.push(`${phase.name}: ${n} x ${label}`);
  }
  const tallied = Object.values(phase.figures.answers ?? {}).reduce((a, b) => a + b, 0);
  if (tallied < phase.figures.non2xx) {
    out.push(`${phase.name}: ${phase.figures.non2xx - tallied} non-2xx answers not tallied`);
  }
  if (phase.figures.errors > 0) {
    out.push(`${phase.name}: ${phase.figures.errors} connection errors or timeouts`);
  }
  return out;
}

/** Delivery failures: orders a subscriber never got, broken seq, sockets closed early. */
export function deliveryFailures(d: DeliveryFigures): string[] {
  const out: string[] = [];
  const late = (n: number, channel: string) =>
    `realtime: ${n} ${channel} deliveries not received within the drain after the last answer (BENCH_DRAIN_SECONDS)`;
  if (d.public.missing > 0) out.push(late(d.public.missing, 'orderbook'));
  if (d.private.missing > 0) out.push(late(d.private.missing, 'orders'));
  if (d.seqGaps > 0) out.push(`realtime: ${d.seqGaps} seq gaps`);
  if (d.closedEarly > 0) out.push(`realtime: ${d.closedEarly} sockets closed early`);
  return out;
}

const refusals = (f: Figures): number => f.answers?.[ALLOWED_REFUSAL] ?? 0;

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export function printReport(
  configs: Configuration[],
  connections: number,
  rate: number,
  delivery: { phase: Phase; figures: DeliveryFigures; rate: number; openOrders: number } | null,
): void {
  console.log(
    '\n' +
      table(
        [
          'POST /api/v1/orders',
          `orders/s (${connections} conn)`,
          'p99 sat ms',
          'server CPU ms/order',
          `p99 paced ${rate}/s ms`,
          'p99 from send ms',
          'p50 paced ms',
          `${ALLOWED_REFUSAL}`,
        ],
        configs.map((c) => [
          c.name,
          String(c.saturation.figures.requestsPerSec),
          String(c.saturation.figures.p99Ms),
          String(cpuMsPerOrder(c)),
          String(c.paced.figures.p99Ms),
          String(c.paced.figures.fromSend?.p99Ms ?? '?'),
          String(c.paced.figures.p50Ms),
          String(refusals(c.saturation.figures) + refusals(c.paced.figures)),
        ]),
      ),
  );
  if (delivery !== null) {
    const d = delivery.figures;
    const row = (name: string, c: DeliveryFigures['public']) => [
      name,
      String(c.fromSend.deliveries),
      String(c.missing),
      String(c.fromSend.p50Ms),
      String(c.fromSend.p99Ms),
      String(c.fromSend.maxMs),
      String(c.fromAck.p99Ms),
      `${c.p50MsFirstTenth ?? 'none came'} / ${c.p50MsLastTenth ?? 'none came'}`,
      Object.entries(c.byInstance)
        .map(([i, x]) => `${i} ${x.p99Ms} (${x.deliveries})`)
        .join(', '),
    ];
    console.log(
      `\nrealtime across instances: ${delivery.rate} orders/s through A, ${d.countedOrders} counted, ${d.connections} sockets on B and C, ${delivery.openOrders} open orders in the world, after B and C caught up (${d.catchUpMs} ms for one order before the measure); ms from the order's write ("from ack" < 0: the message beat the answer)\n` +
        table(
          [
            'channel',
            'deliveries',
            'not arrived',
            'p50',
            'p99',
            'max',
            'p99 from ack',
            'p99 by instance (deliveries)',
          ],
          [row('orderbook:<market>', d.public), row('orders (private)', d.private)],
        ),
    );
  }
  const phases = [
    ...configs.flatMap((c) => [c.saturation, c.paced]),
    ...(delivery === null ? [] : [delivery.phase]),
  ];
  // Instances first, then the shared parts, in the order the bench lists them.
  const names = [...new Set(phases.flatMap((p) => Object.keys(p.cpu.parts)))];
  const parts = [
    ...names.filter((n) => n.startsWith('instance ')).sort(),
    ...names.filter((n) => !n.startsWith('instance ')),
  ];
  console.log(
    '\nCPU each part used: CPU-seconds (% of the phase wall time, 100% = one core; wN%: its main thread waited for a CPU N% of the time)\n' +
      table(
        ['phase', 'wall s', ...parts, 'all'],
        phases.map((p) => [
          p.name,
          String(p.cpu.wallSeconds),
          ...parts.map((name) => {
            const c = p.cpu.parts[name];
            if (c === undefined) return '-';
            const waiting = c.waitingForCpuPct === undefined ? '' : ` w${c.waitingForCpuPct}%`;
            return `${c.cpuSeconds} (${c.pctOfWall}%${waiting})`;
          }),
          `${p.cpu.total.cpuSeconds} (${p.cpu.total.pctOfWall}%)`,
        ]),
      ),
  );
}

/** Writes the results; the name carries the date and time (two runs a day keep both). */
export function writeResults(root: string, result: Record<string, unknown>): string {
  const outDir = join(root, 'bench', 'results');
  mkdirSync(outDir, { recursive: true });
  const stamp = new Date().toISOString().slice(0, 16).replace(':', '');
  const file = join(outDir, `cluster-${stamp}.json`);
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  return file;
}
