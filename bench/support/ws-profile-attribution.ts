/**
 * Attributes a server CPU profile taken during bench:ws (BENCH_PROF=<dir>) to the parts of an
 * update: the fan-out's socket writes, its per-subscriber work, the HTTP order path, the SQLite
 * commit, the engine, GC and the rest. Samples count from the first one inside the hub's fan-out
 * (boot and connecting the subscribers are left out). With the number of orders the bench placed
 * (each one update: the `ok` of every run's `order_requests` in bench/results/ws.json, warm-ups
 * included), it also prints µs per update.
 *
 *   node dist-bench/bench/support/ws-profile-attribution.js <file.cpuprofile> [orders]
 *
 * The profiler samples wall-clock time on the main thread: on a loaded machine a system call the
 * thread was descheduled in reads longer than the CPU it cost (bench:ws's /proc figures do not).
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The first rule that matches a frame of a sample's stack (leaf first) names its part. */
const RULES: [string, (f: CallFrame) => boolean][] = [
  [
    'fan-out: socket writes (Connection.flush)',
    (f) =>
      (/realtime\/connection\.js/.test(f.url) && f.functionName === 'flush') ||
      f.functionName === 'flushBatch',
  ],
  ['fan-out: route() events to messages', (f) => /realtime\/channels\.js/.test(f.url)],
  [
    'fan-out: per subscriber (sendToFeed, deliver, sendEvent)',
    (f) =>
      /realtime\/connection\.js/.test(f.url) &&
      ['sendToFeed', 'deliver', 'sendEvent'].includes(f.functionName),
  ],
  ['fan-out: EventMessage', (f) => f.functionName === 'EventMessage'],
  ['fan-out: RealtimeHub.fanOut itself', (f) => f.functionName === 'fanOut'],
  ['event bus (rxjs)', (f) => /event-bus|rxjs/.test(f.url)],
  [
    'SQLite commit',
    (f) => /better-sqlite3|sql-connection|trading\.repository|\/stores\//.test(f.url),
  ],
  ['engine', (f) => /dist\/engine\//.test(f.url)],
  ['ws: receiving, protocol', (f) => /node_modules\/ws\/|realtime-hub/.test(f.url)],
  [
    'HTTP order path (http, Fastify, Nest, pipeline, orders)',
    (f) =>
      /_http_|fastify|@nestjs|find-my-way|secure-json|common\/http|modules\/(orders|trading)/.test(
        f.url,
      ),
  ],
];
const SPECIAL: Record<string, string> = {
  '(idle)': 'idle',
  '(garbage collector)': 'GC',
  '(program)': 'program (V8, native)',
};

function main(): void {
  const [file, ordersArg] = process.argv.slice(2);
  if (file === undefined)
    throw new Error('usage: ws-profile-attribution <file.cpuprofile> [orders]');
  const orders = Number(ordersArg ?? 0);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackOf = (id: number): CallFrame[] => {
    const out: CallFrame[] = [];
    for (let c: number | undefined = id; c !== undefined; c = parent.get(c))
      out.push(byId.get(c)!.callFrame);
    return out;
  };
  const parts = new Map<string, number>();
  let total = 0;
  let started = false;
  for (let i = 0; i < profile.samples.length; i++) {
    const stack = stackOf(profile.samples[i]);
    if (!started && !stack.some((f) => f.functionName === 'fanOut')) continue;
    started = true;
    const us = profile.timeDeltas[i + 1] ?? 0;
    total += us;
    let part = SPECIAL[stack[0].functionName];
    for (const [name, test] of RULES) {
      if (part !== undefined) break;
      if (stack.some(test)) part = name;
    }
    part ??= 'other';
    parts.set(part, (parts.get(part) ?? 0) + us);
  }
  console.log(`${(total / 1e6).toFixed(1)} s of samples from the first fan-out on`);
  for (const [part, us] of [...parts].sort((a, b) => b[1] - a[1])) {
    const perUpdate = orders > 0 ? `${(us / orders).toFixed(0).padStart(6)} µs/update  ` : '';
    console.log(
      `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${perUpdate}${part}`,
    );
  }
}

main();
