/**
 * The load bench:orders puts on a server, the same for the service and the lean reference:
 * autocannon at saturation (with the server's CPU per request from /proc), and an evenly paced
 * open-loop generator over lean raw-socket keep-alive connections (support/raw-http-client.ts).
 */
import type { Result } from 'autocannon';
import { readFileSync } from 'node:fs';
import { postRequest, RawHttpConnection } from './raw-http-client.js';

const CLOCK_TICKS_PER_SEC = 100; // USER_HZ on Linux

export interface Figures {
  requestsPerSec: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  total2xx: number;
  non2xx: number;
  errors: number;
  durationSec: number;
  /** Server CPU (user + system) per answered request, microseconds; null off Linux. */
  serverCpuUsPerRequest: number | null;
  /**
   * Saturation phases, Linux: where the server's time went while it was measured. `cores` is its
   * CPU (all threads) per wall second; `mainOnCpu` and `mainRunQueue` are the shares of the wall
   * time its main thread (the event loop) ran on a CPU, and was runnable but waiting for one
   * (/proc/<pid>/schedstat). A server that looks idle at saturation with a high `mainRunQueue` is
   * not stalled in its code: the machine had no CPU to give it.
   */
  sched?: {
    cores: number;
    mainOnCpu: number;
    mainRunQueue: number;
    /**
     * The main thread's share of the server's CPU: the rest went to its other threads (V8's
     * garbage-collector and compiler helpers, worker threads such as the service's WAL
     * checkpointer, libuv's pool). A share that grows over the rounds means the first ones still
     * paid for compiling the hot code.
     */
    mainThreadShare: number | null;
  } | null;
  /**
   * Non-2xx answers by `"<status> <error code>"` (answerLabel), where the generator collected
   * them (paced phases; autocannon phases with an `onResponse` that tallies them).
   */
  answers?: Record<string, number>;
  /**
   * Paced phase only: the same percentiles measured from the moment the request was written
   * (leaves out the generator's own timer lateness and any wait for a free connection).
   */
  fromSend?: { p50Ms: number; p90Ms: number; p99Ms: number; p999Ms: number };
}

export function fromAutocannon(
  r: Result,
  cpuSec: number | null,
  sched: Figures['sched'] = null,
): Figures {
  return {
    requestsPerSec: Math.round(r['2xx'] / r.duration),
    p50Ms: r.latency.p50,
    p90Ms: r.latency.p90,
    p99Ms: r.latency.p99,
    p999Ms: r.latency.p99_9,
    maxMs: r.latency.max,
    total2xx: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    durationSec: r.duration,
    serverCpuUsPerRequest:
      cpuSec === null || r['2xx'] === 0 ? null : Math.round((cpuSec * 1e6) / r['2xx']),
    sched,
  };
}

export function print(name: string, f: Figures): void {
  const cpu =
    (f.serverCpuUsPerRequest === null ? '' : `   server CPU ${f.serverCpuUsPerRequest} us/req`) +
    (f.sched == null
      ? ''
      : `, ${f.sched.cores} cores (main thread ${f.sched.mainThreadShare === null ? '?' : pctOf(f.sched.mainThreadShare)} of it); event loop on CPU ${pctOf(f.sched.mainOnCpu)}, waiting for a CPU ${pctOf(f.sched.mainRunQueue)}`);
  console.log(
    `${name.padEnd(36)} ${String(f.requestsPerSec).padStart(7)} req/s   p50 ${f.p50Ms} ms   p90 ${f.p90Ms} ms   p99 ${f.p99Ms} ms   p99.9 ${f.p999Ms} ms   (2xx ${f.total2xx}, non-2xx ${f.non2xx}, errors ${f.errors})${cpu}`,
  );
}

/** CPU seconds (user + system) a process has used so far, from /proc; null elsewhere. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC;
  } catch {
    return null;
  }
}

const pctOf = (share: number): string => `${Math.round(share * 100)}%`;

/** CPU seconds (user + system) a process's main thread has used so far; null off Linux. */
export function mainThreadCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SEC;
  } catch {
    return null;
  }
}

/** The main thread's time on a CPU and waiting on a run queue so far, seconds; null off Linux. */
export function schedSeconds(pid: number): { onCpu: number; runQueue: number } | null {
  try {
    const [onCpu, runQueue] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ');
    return { onCpu: Number(onCpu) / 1e9, runQueue: Number(runQueue) / 1e9 };
  } catch {
    return null;
  }
}

export async function measured(pid: number, run: () => Promise<Result>): Promise<Figures> {
  const before = cpuSeconds(pid);
  const mainBefore = mainThreadCpuSeconds(pid);
  const schedBefore = schedSeconds(pid);
  const startedAt = performance.now();
  const r = await run();
  const wall = (performance.now() - startedAt) / 1000;
  const after = cpuSeconds(pid);
  const mainAfter = mainThreadCpuSeconds(pid);
  const schedAfter = schedSeconds(pid);
  const cpu = before === null || after === null ? null : after - before;
  const mainCpu = mainBefore === null || mainAfter === null ? null : mainAfter - mainBefore;
  const share = (x: number): number => Math.round((x / wall) * 100) / 100;
  return fromAutocannon(
    r,
    cpu,
    cpu === null || schedBefore === null || schedAfter === null
      ? null
      : {
          cores: share(cpu),
          mainOnCpu: share(schedAfter.onCpu - schedBefore.onCpu),
          mainRunQueue: share(schedAfter.runQueue - schedBefore.runQueue),
          mainThreadShare:
            mainCpu === null || cpu <= 0 ? null : Math.round((mainCpu / cpu) * 100) / 100,
        },
  );
}

export const pct = (sorted: number[], p: number): number =>
  sorted.length === 0
    ? 0
    : Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] * 100) / 100;

/** One answer of the paced generator, for a caller that looks at what each request got. */
export interface PacedAnswer {
  /** The request's place in the stream (0, 1, ...), and the port it went to. */
  index: number;
  port: number;
  status: number;
  /** The response body; valid only during the call. */
  body: Buffer;
  /** performance.now() when the request was due, written, and fully answered. */
  dueAt: number;
  sentAt: number;
  answeredAt: number;
}

export interface PacedOptions {
  /** Keep-alive connections, spread evenly over the ports (default 64). */
  connections?: number;
  /** Called for every answer (2xx or not), after it has been counted. */
  onAnswer?: (a: PacedAnswer) => void;
}

/** `"<status> <error.code>"` of an error answer (`"<status>"` if its body names no code). */
export function answerLabel(status: number, body: Buffer | string): string {
  try {
    const code = (JSON.parse(body.toString()) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? `${status} ${code}` : String(status);
  } catch {
    return String(status);
  }
}

/**
 * Open-loop, evenly paced load: request k is due at start + k/rate; every millisecond the due
 * requests are sent over a keep-alive pool, and each latency counts from the due time. With
 * several ports (instances behind a round-robin balancer), request k goes to port k mod n, each
 * port over its own share of the pool. Non-2xx answers are counted by status and error code
 * (`Figures.answers`).
 */
export async function paced(
  host: string,
  port: number | readonly number[],
  rate: number,
  seconds: number,
  next: () => { key: string; body: string },
  options: PacedOptions = {},
): Promise<Figures> {
  // Lean raw-socket connections (support/raw-http-client.ts), opened up front; a request that
  // finds none idle on its port waits in that port's queue, its latency still counted from when
  // it was due.
  const ports = typeof port === 'number' ? [port] : [...port];
  const perPort = Math.max(1, Math.ceil((options.connections ?? 64) / ports.length));
  type Queued = { index: number; dueAt: number; request: Buffer };
  const targets = await Promise.all(
    ports.map(async (p) => ({
      port: p,
      idle: await Promise.all(
        Array.from({ length: perPort }, () => RawHttpConnection.open(host, p)),
      ),
      queue: [] as Queued[],
    })),
  );
  const all = targets.flatMap((t) => [...t.idle]);
  const latencies: number[] = [];
  const fromSend: number[] = [];
  const answers: Record<string, number> = {};
  let non2xx = 0;
  let errors = 0;
  let outstanding = 0;
  const total = rate * seconds;
  const start = performance.now();
  let sent = 0;
  await new Promise<void>((resolve) => {
    const finished = (): void => {
      if (sent === total && outstanding === 0) resolve();
    };
    type Target = (typeof targets)[number];
    /** A connection closed: open another in its place (the pool keeps its size). */
    const replace = (t: Target): void => {
      void RawHttpConnection.open(host, t.port).then(
        (fresh) => {
          all.push(fresh);
          t.idle.push(fresh);
          dispatch(t);
        },
        () => undefined,
      );
    };
    const dispatch = (t: Target): void => {
      while (t.queue.length > 0 && t.idle.length > 0) {
        const { index, dueAt, request } = t.queue.shift()!;
        const conn = t.idle.pop()!;
        if (conn.dead) {
          // Closed while idle: replace it and try the next one.
          t.queue.unshift({ index, dueAt, request });
          replace(t);
          continue;
        }
        const sentAt = performance.now();
        conn.send(
          request,
          (status, body) => {
            const now = performance.now();
            if (status < 300) {
              latencies.push(now - dueAt);
              fromSend.push(now - sentAt);
            } else {
              non2xx++;
              const label = answerLabel(status, body);
              answers[label] = (answers[label] ?? 0) + 1;
            }
            options.onAnswer?.({
              index,
              port: t.port,
              status,
              body,
              dueAt,
              sentAt,
              answeredAt: now,
            });
            outstanding--;
            t.idle.push(conn);
            dispatch(t);
            finished();
          },
          () => {
            // The connection is gone: count the request as failed and replace the connection.
            errors++;
            outstanding--;
            replace(t);
            finished();
          },
        );
      }
    };
    const tick = (): void => {
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - start) / 1000) * rate) + 1);
      while (sent < due) {
        const dueAt = start + (sent / rate) * 1000;
        const { key, body } = next();
        const t = targets[sent % targets.length];
        t.queue.push({
          index: sent,
          dueAt,
          request: postRequest(host, '/api/v1/orders', { 'x-api-key': key }, body),
        });
        sent++;
        outstanding++;
      }
      for (const t of targets) dispatch(t);
      if (sent < total) setTimeout(tick, 1);
      else finished();
    };
    tick();
  });
  const elapsed = (performance.now() - start) / 1000;
  for (const c of all) c.close();
  const sorted = latencies.sort((a, b) => a - b);
  const sent2 = fromSend.sort((a, b) => a - b);
  return {
    requestsPerSec: Math.round(latencies.length / elapsed),
    p50Ms: pct(sorted, 0.5),
    p90Ms: pct(sorted, 0.9),
    p99Ms: pct(sorted, 0.99),
    p999Ms: pct(sorted, 0.999),
    maxMs: pct(sorted, 1),
    total2xx: latencies.length,
    non2xx,
    errors,
    durationSec: Math.round(elapsed * 100) / 100,
    serverCpuUsPerRequest: null,
    answers,
    fromSend: {
      p50Ms: pct(sent2, 0.5),
      p90Ms: pct(sent2, 0.9),
      p99Ms: pct(sent2, 0.99),
      p999Ms: pct(sent2, 0.999),
    },
  };
}
