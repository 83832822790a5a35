import WebSocket from 'ws';

/** A message received on the realtime feed (JSON), read field by field. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type WsMessage = Record<string, any> & { type: string };

export interface Received {
  msg: WsMessage;
  /** Date.now() at receipt. */
  at: number;
}

export interface WsClose {
  code: number;
  reason: string;
}

export interface WsConnectOptions {
  /** false plays a dead client: pings from the server are not answered. */
  autoPong?: boolean;
  /** Times out the connect (ms). */
  timeoutMs?: number;
  /** Extra headers of the upgrade request (e.g. X-Forwarded-For). */
  headers?: Record<string, string>;
}

/** The realtime URL of a running app (`http://host:port` or `.../api/v1`). */
export function wsUrl(baseUrl: string): string {
  const root = baseUrl.replace(/\/api\/v1\/?$/, '');
  return `${root.replace(/^http/, 'ws')}/api/v1/ws`;
}

/**
 * A test client for /api/v1/ws: records every message (parsed JSON) with its receipt time, and
 * waits for a predicate or for the close with a timeout.
 */
export class WsClient {
  readonly received: Received[] = [];
  /** Raw texts that were not JSON (should never happen). */
  readonly unparsed: string[] = [];
  closed: WsClose | null = null;
  /** Server pings received since the socket was created (so none is missed by a late listener). */
  pings = 0;
  private readonly waiters = new Set<() => void>();
  private readonly listeners = new Set<(m: WsMessage) => void>();

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: WebSocket.RawData) => {
      const text = data.toString();
      let msg: WsMessage;
      try {
        msg = JSON.parse(text) as WsMessage;
      } catch {
        this.unparsed.push(text);
        return;
      }
      this.received.push({ msg, at: Date.now() });
      for (const l of this.listeners) l(msg);
      this.wake();
    });
    ws.on('close', (code: number, reason: Buffer) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
    ws.on('ping', () => {
      this.pings++;
    });
    ws.on('error', () => undefined);
  }

  /** Opens a socket and resolves once it is open. */
  static connect(baseUrl: string, opts: WsConnectOptions = {}): Promise<WsClient> {
    const ws = new WebSocket(wsUrl(baseUrl), {
      autoPong: opts.autoPong ?? true,
      headers: opts.headers,
    });
    const client = new WsClient(ws);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        ws.terminate();
        reject(new Error('ws connect timed out'));
      }, opts.timeoutMs ?? 5000);
      ws.once('open', () => {
        clearTimeout(t);
        resolve(client);
      });
      ws.once('error', (err) => {
        clearTimeout(t);
        reject(err);
      });
    });
  }

  /** Connects and authenticates; resolves with the auth_ok message or throws with what came. */
  static async authed(
    baseUrl: string,
    auth: { api_key: string } | { token: string },
    opts: WsConnectOptions = {},
  ): Promise<WsClient> {
    const c = await WsClient.connect(baseUrl, opts);
    c.send({ type: 'auth', ...auth });
    const m = await c.waitFor((x) => x.type === 'auth_ok' || x.type === 'error');
    if (m.type !== 'auth_ok') throw new Error(`auth failed: ${JSON.stringify(m)}`);
    return c;
  }

  get messages(): WsMessage[] {
    return this.received.map((r) => r.msg);
  }

  /** Index of the next message to arrive (for "after this point" waits). */
  mark(): number {
    return this.received.length;
  }

  send(obj: unknown): void {
    this.ws.send(JSON.stringify(obj));
  }

  sendRaw(text: string): void {
    this.ws.send(text);
  }

  /** Called synchronously for each parsed message as it arrives. */
  onMessage(fn: (m: WsMessage) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Event messages of a channel, in arrival order (from index `from`). */
  events(channel: string, from = 0): WsMessage[] {
    return this.messages.slice(from).filter((m) => m.type === 'event' && m.channel === channel);
  }

  /** First message (from index `from`) matching the predicate; waits for it up to timeoutMs. */
  waitFor(pred: (m: WsMessage) => boolean, timeoutMs = 3000, from = 0): Promise<WsMessage> {
    return this.until(
      () => this.received.slice(from).find((r) => pred(r.msg))?.msg,
      timeoutMs,
      'message',
    );
  }

  /** Waits until `count` messages (from index `from`) match the predicate; returns them. */
  waitForCount(
    pred: (m: WsMessage) => boolean,
    count: number,
    timeoutMs = 5000,
    from = 0,
  ): Promise<WsMessage[]> {
    return this.until(
      () => {
        const got = this.messages.slice(from).filter(pred);
        return got.length >= count ? got : undefined;
      },
      timeoutMs,
      `${count} messages`,
    );
  }

  /** Waits for the server (or anyone) to close the socket. */
  waitClose(timeoutMs = 3000): Promise<WsClose> {
    return this.until(() => this.closed ?? undefined, timeoutMs, 'close');
  }

  /** Sends `subscribe` and waits for its acknowledgement (or an error). */
  async subscribe(channels: string[], timeoutMs = 3000): Promise<WsMessage> {
    const from = this.mark();
    this.send({ type: 'subscribe', channels });
    return this.waitFor((m) => m.type === 'subscribed' || m.type === 'error', timeoutMs, from);
  }

  /** Sends `ping` and waits for the `pong`: every message the server sent before it has arrived. */
  async sync(timeoutMs = 3000): Promise<void> {
    const from = this.mark();
    this.send({ type: 'ping' });
    await this.waitFor((m) => m.type === 'pong', timeoutMs, from);
  }

  async close(): Promise<void> {
    if (this.closed !== null) return;
    this.ws.close(1000, 'done');
    await this.waitClose(3000).catch(() => this.ws.terminate());
  }

  terminate(): void {
    this.ws.terminate();
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  private until<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    const now = probe();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const v = probe();
        if (v === undefined) return;
        done();
        resolve(v);
      };
      const timer = setTimeout(() => {
        done();
        const tail = this.messages.slice(-5).map((m) => JSON.stringify(m).slice(0, 300));
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what}; closed=${JSON.stringify(this.closed)}; last messages: ${tail.join(' | ')}`,
          ),
        );
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
    });
  }
}

/** Resolves after ms of real time. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export interface BookLevel {
  price: number;
  quantity: number;
}

/**
 * A client-side order book built from an orderbook channel: the snapshot, then every delta sets a
 * level to its new total (0 removes it). Throws on a seq gap or a delta before the snapshot.
 */
export class ClientBook {
  readonly bids = new Map<number, number>();
  readonly asks = new Map<number, number>();
  lastSeq = 0;
  snapshots = 0;
  deltas = 0;

  apply(m: WsMessage): void {
    if (m.type !== 'event') return;
    if (m.seq !== this.lastSeq + 1) {
      throw new Error(`seq gap on ${m.channel}: ${this.lastSeq} -> ${m.seq}`);
    }
    this.lastSeq = m.seq;
    const d = m.data as {
      kind: string;
      bids?: BookLevel[];
      asks?: BookLevel[];
      side?: 'bids' | 'asks';
      price?: number;
      quantity?: number;
    };
    if (d.kind === 'snapshot') {
      this.snapshots++;
      this.bids.clear();
      this.asks.clear();
      for (const l of d.bids ?? []) this.bids.set(l.price, l.quantity);
      for (const l of d.asks ?? []) this.asks.set(l.price, l.quantity);
      return;
    }
    if (d.kind !== 'delta') throw new Error(`unknown orderbook message ${JSON.stringify(m)}`);
    if (this.snapshots === 0) throw new Error('delta before the snapshot');
    this.deltas++;
    const side = d.side === 'bids' ? this.bids : this.asks;
    if (d.quantity === 0) side.delete(d.price!);
    else side.set(d.price!, d.quantity!);
  }

  /** Bids best (highest) first, asks best (lowest) first: the REST/snapshot order. */
  levels(): { bids: BookLevel[]; asks: BookLevel[] } {
    const list = (m: Map<number, number>, dir: number): BookLevel[] =>
      [...m.entries()]
        .map(([price, quantity]) => ({ price, quantity }))
        .sort((a, b) => dir * (a.price - b.price));
    return { bids: list(this.bids, -1), asks: list(this.asks, 1) };
  }
}
