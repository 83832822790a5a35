/**
 * bench:ws-fanout — the WebSocket fan-out alone, by CPU: N (BENCH_WS_SUBSCRIBERS, default 1,000)
 * `ws` server sockets on 127.0.0.1 fed by this checkout's Connection, EventMessage and Coalescer
 * (dist/), the way RealtimeHub.fanOut feeds them (one Feed of the channel and sendToFeed; a
 * checkout from before feeds: Connection.sendEvent per subscriber), at BENCH_WS_RATE updates/s (default 300) with
 * WS_COALESCE_MS = BENCH_WS_COALESCE_MS (default 5). The subscribers are the raw clients of
 * bench:ws in a child process. Per phase it prints the server's CPU µs and write system calls per
 * update, CPU figures that mean something on a loaded shared machine where wall-clock latency
 * does not (no HTTP, no engine: bench:ws measures those too).
 *
 * BENCH_BASELINE=<root of another built checkout> alternates phases of that checkout's classes
 * and this one's on the same sockets (ABAB, BENCH_ROUNDS rounds, default 2), so both are
 * measured under the same load. BENCH_WS_SECONDS: seconds per phase (default 4).
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { WebSocketServer, type WebSocket } from 'ws';
import { RawWsClient } from './support/raw-ws-client.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const N = Number(process.env.BENCH_WS_SUBSCRIBERS ?? 1000);
const RATE = Number(process.env.BENCH_WS_RATE ?? 300);
const SECONDS = Number(process.env.BENCH_WS_SECONDS ?? 4);
const WINDOW_MS = Number(process.env.BENCH_WS_COALESCE_MS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CHANNEL = 'orderbook:mkt_bench';
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Realtime {
  name: string;
  Connection: new (
    id: string,
    socket: WebSocket,
    ip: string,
    maxBuffered: number,
    budget: unknown,
  ) => {
    subscriptions: Map<string, unknown>;
    sendEvent(channel: string, message: unknown, batch: unknown): void;
  };
  EventMessage: new (channel: string, ts: number, data: unknown) => unknown;
  Coalescer: new (windowMs: number) => { batch(): unknown; release(): void; flushNow(): void };
  /** Absent in a checkout from before feeds (seq per connection in `subscriptions`). */
  Feed?: new (channel: string) => { sent: number; join(conn: unknown): FeedSub };
  sendToFeed?: (feed: unknown, message: unknown, batch: unknown) => void;
}

interface FeedSub {
  base: number;
  readonly seq: number;
}

async function load(name: string, root: string): Promise<Realtime> {
  const dir = join(root, 'dist', 'modules', 'realtime');
  const c = (await import(pathToFileURL(join(dir, 'connection.js')).href)) as Realtime;
  const k = (await import(pathToFileURL(join(dir, 'coalescer.js')).href)) as Realtime;
  return {
    name,
    Connection: c.Connection,
    EventMessage: c.EventMessage,
    Coalescer: k.Coalescer,
    Feed: c.Feed,
    sendToFeed: c.sendToFeed,
  };
}

/** Write system calls this process made so far (Linux /proc/self/io). */
function writeCalls(): number {
  return Number(/syscw:\s*(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? NaN);
}

/** The subscriber process: N raw clients; answers how many messages arrived since last asked. */
async function subscribers(url: string): Promise<void> {
  let messages = 0;
  for (let i = 0; i < N; i++) {
    await RawWsClient.open(url, { onClose: () => undefined, onText: () => void messages++ });
  }
  process.send!({ ready: true });
  process.on('message', (m) => {
    if (m === 'exit') process.exit(0);
    process.send!({ messages });
    messages = 0;
  });
}

async function main(): Promise<void> {
  const impls = [await load('this checkout', ROOT)];
  if (process.env.BENCH_BASELINE) {
    impls.unshift(await load('baseline', resolve(process.env.BENCH_BASELINE)));
  }
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  const sockets: WebSocket[] = [];
  wss.on('connection', (ws) => sockets.push(ws));
  await new Promise((r) => wss.once('listening', r));
  const { port } = wss.address() as { port: number };
  const child = fork(fileURLToPath(import.meta.url), ['subscribers', `ws://127.0.0.1:${port}/`]);
  const ask = () => new Promise<{ messages: number }>((r) => child.once('message', r as never));
  await ask();
  while (sockets.length < N) await sleep(10);
  let seqs = sockets.map(() => 0);
  for (let round = 0; round < ROUNDS; round++) {
    for (const impl of impls) {
      const feed = impl.Feed === undefined ? null : new impl.Feed(CHANNEL);
      const subs: FeedSub[] = [];
      const conns = sockets.map((ws, i) => {
        const c = new impl.Connection(`c${i}`, ws, '127.0.0.1', 64 << 20, null);
        // The seq goes on from the last phase.
        if (feed === null) c.subscriptions.set(CHANNEL, seqs[i]);
        else {
          const sub = feed.join(c);
          sub.base -= seqs[i];
          c.subscriptions.set(CHANNEL, sub);
          subs.push(sub);
        }
        return c;
      });
      const coalescer = new impl.Coalescer(WINDOW_MS);
      const load0 = loadavg()[0];
      child.send('reset');
      await ask();
      const cpu0 = process.cpuUsage();
      const writes0 = writeCalls();
      const start = Date.now();
      let sent = 0;
      while (Date.now() - start < SECONDS * 1000) {
        const due = Math.floor(((Date.now() - start) * RATE) / 1000);
        for (; sent < due; sent++) {
          const data = { kind: 'delta', side: sent % 2 ? 'bids' : 'asks', price: 1 + (sent % 40) };
          const message = new impl.EventMessage(CHANNEL, Date.now(), { ...data, quantity: sent });
          const batch = coalescer.batch();
          if (feed !== null) impl.sendToFeed!(feed, message, batch);
          else for (const c of conns) c.sendEvent(CHANNEL, message, batch);
          coalescer.release();
        }
        await sleep(Math.max(1, Math.ceil(start + ((sent + 1) * 1000) / RATE - Date.now())));
      }
      coalescer.flushNow();
      const cpu = process.cpuUsage(cpu0);
      const writes = writeCalls() - writes0;
      await sleep(500);
      child.send('count');
      const { messages } = await ask();
      seqs =
        feed === null
          ? conns.map((c) => c.subscriptions.get(CHANNEL) as number)
          : subs.map((s) => s.seq);
      const per = (v: number) => Math.round(v / sent);
      console.log(
        `${impl.name}: ${per(cpu.user + cpu.system)} µs CPU per update (user ${per(cpu.user)}, ` +
          `system ${per(cpu.system)}), ${per(writes)} write calls per update ` +
          `(${((cpu.user + cpu.system) / writes).toFixed(1)} µs CPU per write call, all else ` +
          `included: a flush to ${N} sockets costs at least ${N} write calls); ${sent} updates ` +
          `of ${SECONDS * RATE} due, ${messages} of ${sent * N} deliveries read; load ${load0.toFixed(1)}`,
      );
    }
  }
  child.send('exit');
  wss.close();
  process.exit(0);
}

if (process.argv[2] === 'subscribers') await subscribers(process.argv[3]);
else await main();
