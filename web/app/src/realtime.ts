// The realtime feed (/api/v1/ws, see /api/v1/asyncapi.json): one connection for the tab,
// authenticated with the tab's test key. Views subscribe to channels; after a drop it reconnects
// with a growing delay, subscribes again (an orderbook channel starts over with a snapshot) and
// tells the views to re-fetch what they show, since events sent while it was away are lost.

export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'closed';

export interface FeedEvent<T = unknown> {
  channel: string;
  seq: number;
  data: T;
}

type Handler = (e: FeedEvent) => void;

const RETRY_MS = [1000, 2000, 4000, 8000];

export class Realtime {
  private ws: WebSocket | null = null;
  private readonly handlers = new Map<string, Set<Handler>>();
  private readonly lastSeq = new Map<string, number>();
  private readonly stateListeners = new Set<(s: ConnectionState) => void>();
  private readonly resyncListeners = new Set<() => void>();
  private state: ConnectionState = 'closed';
  private attempt = 0;
  private everLive = false;
  private timer: number | undefined;
  private stopped = true;

  constructor(
    private readonly key: string,
    /** A close the server means for good (4401: the key was revoked, rotated or expired). */
    private readonly onRefused: (reason: string) => void,
  ) {}

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    window.clearTimeout(this.timer);
    this.ws?.close(1000);
    this.ws = null;
    this.setState('closed');
  }

  get connectionState(): ConnectionState {
    return this.state;
  }

  onState(fn: (s: ConnectionState) => void): () => void {
    this.stateListeners.add(fn);
    fn(this.state);
    return () => this.stateListeners.delete(fn);
  }

  /** Called after every reconnect, once the channels are subscribed again. */
  onResync(fn: () => void): () => void {
    this.resyncListeners.add(fn);
    return () => this.resyncListeners.delete(fn);
  }

  subscribe(channel: string, fn: Handler): () => void {
    let set = this.handlers.get(channel);
    if (set === undefined) {
      set = new Set();
      this.handlers.set(channel, set);
      if (this.state === 'live') this.send({ type: 'subscribe', channels: [channel] });
    }
    set.add(fn);
    return () => {
      const s = this.handlers.get(channel);
      if (s === undefined) return;
      s.delete(fn);
      if (s.size === 0) {
        this.handlers.delete(channel);
        this.lastSeq.delete(channel);
        if (this.state === 'live') this.send({ type: 'unsubscribe', channels: [channel] });
      }
    };
  }

  private connect(): void {
    this.setState(this.everLive ? 'reconnecting' : 'connecting');
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${scheme}://${location.host}/api/v1/ws`);
    this.ws = ws;
    ws.addEventListener('open', () => this.send({ type: 'auth', api_key: this.key }));
    ws.addEventListener('message', (m) => this.receive(m.data));
    ws.addEventListener('close', (e) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.stopped) return;
      if (e.code === 4401 || e.code === 4403) {
        this.stopped = true;
        this.setState('closed');
        this.onRefused(e.reason !== '' ? e.reason : 'The realtime feed refused the key');
        return;
      }
      this.setState('reconnecting');
      const delay = RETRY_MS[Math.min(this.attempt, RETRY_MS.length - 1)];
      this.attempt += 1;
      this.timer = window.setTimeout(() => this.connect(), delay);
    });
  }

  private receive(raw: unknown): void {
    if (typeof raw !== 'string') return;
    let msg: {
      type?: string;
      channel?: string;
      seq?: number;
      data?: unknown;
      code?: string;
      message?: string;
    };
    try {
      msg = JSON.parse(raw) as typeof msg;
    } catch {
      return;
    }
    if (msg.type === 'auth_ok') {
      const channels = [...this.handlers.keys()];
      this.lastSeq.clear();
      if (channels.length > 0) this.send({ type: 'subscribe', channels });
      const resync = this.everLive;
      this.everLive = true;
      this.attempt = 0;
      this.setState('live');
      if (resync) for (const fn of this.resyncListeners) fn();
      return;
    }
    if (msg.type === 'event' && typeof msg.channel === 'string' && typeof msg.seq === 'number') {
      const prev = this.lastSeq.get(msg.channel);
      this.lastSeq.set(msg.channel, msg.seq);
      // A gap means lost messages: subscribing again starts the channel over (with a snapshot).
      if (prev !== undefined && msg.seq !== prev + 1 && msg.seq !== 1) {
        this.lastSeq.delete(msg.channel);
        this.send({ type: 'subscribe', channels: [msg.channel] });
        for (const fn of this.resyncListeners) fn();
        return;
      }
      for (const fn of this.handlers.get(msg.channel) ?? []) {
        fn({ channel: msg.channel, seq: msg.seq, data: msg.data });
      }
    }
  }

  private send(msg: unknown): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  private setState(s: ConnectionState): void {
    if (s === this.state) return;
    this.state = s;
    for (const fn of this.stateListeners) fn(s);
  }
}
