/**
 * bench:ws's subscriber process (forked by ws.bench.ts): connects `count` raw-socket WebSocket
 * clients to one channel, checks every message's seq, and measures the latency of the messages
 * whose `ts` falls in the driver's current window. Each `report` answers that window's figures
 * and starts the next one from zero; `exit` closes the clients and ends the process.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { RawWsClient } from './raw-ws-client.js';

/** Latency histogram: 0.1 ms buckets up to 10 s. */
export const FINE_BUCKETS = 100_000;
/** Integer-ms histogram: 1 ms buckets up to 60 s. */
export const MS_BUCKETS = 60_000;

export interface ClientConfig {
  url: string;
  key: string;
  channel: string;
  count: number;
}

/** The measured window, on the server's clock: messages with ts in [from, to) count. */
export interface Window {
  from: number;
  to: number;
}

export type DriverMessage = ({ type: 'window' } & Window) | { type: 'report' } | { type: 'exit' };

export interface ClientReport {
  connected: number;
  /** Deliveries of updates whose ts is in [from, to). */
  delivered: number;
  /** Integer-ms latency (Date.now() - ts) counts, index = ms. */
  msHist: number[];
  /** 0.1 ms latency counts from the sub-ms clock (performance.timeOrigin + now()). */
  fineHist: number[];
  /** Over the whole run so far (a gap is a gap whenever it happens). */
  seqGaps: number;
  closedEarly: number;
  /** Per update (seq): first and last receipt (fine clock, ms) across this process's clients. */
  spans: [number, number, number][];
  updates: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

/** Reads the unsigned integer that follows `key` within buf[start, end); -1 if absent. */
function intAfter(buf: Buffer, key: Buffer, start: number, end: number): number {
  const i = buf.indexOf(key, start);
  if (i < 0 || i >= end) return -1;
  let n = 0;
  for (let j = i + key.length; j < end; j++) {
    const c = buf[j];
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  return n;
}

async function runClients(): Promise<void> {
  const cfg = await new Promise<ClientConfig>((resolve) =>
    process.once('message', (m) => resolve(m as ClientConfig)),
  );
  // Nothing counts until the driver sends a window.
  const win: Window = { from: Number.MAX_SAFE_INTEGER, to: 0 };
  const TS = Buffer.from('"ts":');
  const SEQ = Buffer.from('"seq":');
  const PREFIX = Buffer.from(`{"type":"event","channel":${JSON.stringify(cfg.channel)},"seq":`);
  const TS_KEY = Buffer.from(',"ts":');
  let msHist = new Array<number>(MS_BUCKETS + 1).fill(0);
  let fineHist = new Array<number>(FINE_BUCKETS + 1).fill(0);
  let spans = new Map<number, [number, number, number]>();
  let delivered = 0;
  let seqGaps = 0;
  let closedEarly = 0;
  let stopping = false;
  const origin = performance.timeOrigin;
  const loop = monitorEventLoopDelay({ resolution: 10 });

  const sockets: RawWsClient[] = [];
  const connectOne = (): Promise<RawWsClient> =>
    new Promise((resolve, reject) => {
      let last = 0;
      let subscribed = false;
      let client: RawWsClient | null = null;
      RawWsClient.open(cfg.url, {
        onClose: () => {
          if (!stopping) closedEarly++;
        },
        onText: (buf, start, end) => {
          if (!subscribed) {
            const text = buf.toString('utf8', start, end);
            if (text.includes('"auth_ok"')) {
              client!.sendText(JSON.stringify({ type: 'subscribe', channels: [cfg.channel] }));
            } else if (text.includes('"snapshot"')) {
              subscribed = true;
              last = 1;
              resolve(client!);
            } else if (text.includes('"error"')) {
              reject(new Error(text));
            }
            return;
          }
          const fine = origin + performance.now();
          const now = Date.now();
          // Event messages start with a fixed prefix for the channel, so seq and ts are read at
          // known offsets; anything else falls back to searching for the keys.
          let seq: number;
          let ts: number;
          let at = start + PREFIX.length;
          if (
            end - start > PREFIX.length &&
            buf.compare(PREFIX, 0, PREFIX.length, start, at) === 0
          ) {
            seq = 0;
            for (let c = buf[at]; c >= 48 && c <= 57; c = buf[++at]) seq = seq * 10 + (c - 48);
            at += TS_KEY.length;
            ts = 0;
            for (let c = buf[at]; c >= 48 && c <= 57; c = buf[++at]) ts = ts * 10 + (c - 48);
          } else {
            seq = intAfter(buf, SEQ, start, end);
            ts = intAfter(buf, TS, start, end);
          }
          if (seq !== last + 1) seqGaps++;
          last = seq;
          if (ts < win.from || ts >= win.to) return;
          delivered++;
          msHist[Math.min(MS_BUCKETS, Math.max(0, now - ts))]++;
          fineHist[Math.min(FINE_BUCKETS, Math.max(0, Math.round((fine - ts) * 10)))]++;
          const s = spans.get(seq);
          if (s === undefined) spans.set(seq, [fine, fine, 1]);
          else {
            if (fine < s[0]) s[0] = fine;
            if (fine > s[1]) s[1] = fine;
            s[2]++;
          }
        },
      }).then((c) => {
        client = c;
        c.sendText(JSON.stringify({ type: 'auth', api_key: cfg.key }));
      }, reject);
    });

  for (let i = 0; i < cfg.count; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, cfg.count - i) }, () => connectOne()),
    );
    sockets.push(...batch);
  }
  loop.enable();
  process.send!({ type: 'ready', connected: sockets.length });
  process.on('message', (m: DriverMessage) => {
    if (m.type === 'window') {
      win.from = m.from;
      win.to = m.to;
    } else if (m.type === 'report') {
      const report: ClientReport = {
        connected: sockets.length,
        delivered,
        msHist,
        fineHist,
        seqGaps,
        closedEarly,
        spans: [...spans.values()],
        updates: spans.size,
        loopDelayP99Ms: loop.percentile(99) / 1e6,
        loopDelayMaxMs: loop.max / 1e6,
      };
      process.send!({ type: 'report', report });
      // The next window starts from zero (seq gaps and early closes count over the whole run).
      msHist = new Array<number>(MS_BUCKETS + 1).fill(0);
      fineHist = new Array<number>(FINE_BUCKETS + 1).fill(0);
      spans = new Map();
      delivered = 0;
      loop.reset();
    } else if (m.type === 'exit') {
      stopping = true;
      for (const ws of sockets) ws.terminate();
      setTimeout(() => process.exit(0), 100);
    }
  });
}

void runClients();
