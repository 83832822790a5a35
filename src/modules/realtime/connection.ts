import type { WebSocket } from 'ws';
import type { Credential } from '../../common/http/request-context.js';
import { WS_CLOSE } from './ws-errors.js';

const OPEN = 1;

/** One client socket: its credential, its subscriptions with their sequence numbers, its buffer. */
export class Connection {
  credential: Credential | null = null;
  /** channel -> last seq sent on it (seq rises by 1 per channel per connection). */
  readonly subscriptions = new Map<string, number>();
  alive = true;
  authTimer: NodeJS.Timeout | null = null;
  closed = false;
  /** Incoming messages are handled in order, one at a time (auth is asynchronous). */
  inbox: Promise<void> = Promise.resolve();

  constructor(
    readonly id: string,
    readonly socket: WebSocket,
    readonly ip: string,
    private readonly maxBuffered: number,
  ) {}

  /**
   * Sends unless the client is too far behind: a bounded buffer, then a clear close rather than
   * growing memory without end.
   */
  send(text: string): void {
    if (this.closed || this.socket.readyState !== OPEN) return;
    if (this.socket.bufferedAmount > this.maxBuffered) {
      this.close(WS_CLOSE.SLOW_CONSUMER, 'slow consumer: send buffer full');
      return;
    }
    this.socket.send(text);
  }

  sendJson(obj: unknown): void {
    this.send(JSON.stringify(obj));
  }

  /** `head` is `{"type":"event","channel":"...","seq":`, `tail` is `,"ts":...,"data":...}`. */
  sendEvent(channel: string, head: string, tail: string): void {
    const seq = (this.subscriptions.get(channel) ?? 0) + 1;
    this.subscriptions.set(channel, seq);
    this.send(head + seq + tail);
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    if (this.authTimer !== null) clearTimeout(this.authTimer);
    try {
      this.socket.close(code, reason);
    } catch {
      this.socket.terminate();
    }
  }
}

/** Pre-serialised parts of an event message, shared by every subscriber of a channel. */
export function eventParts(channel: string, ts: number, data: unknown): [string, string] {
  return [
    `{"type":"event","channel":${JSON.stringify(channel)},"seq":`,
    `,"ts":${ts},"data":${JSON.stringify(data)}}`,
  ];
}
