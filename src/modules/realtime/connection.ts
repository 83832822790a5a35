import type { Writable } from 'node:stream';
import type { WebSocket } from 'ws';
import type { Credential } from '../../common/http/request-context.js';
import type { MessageBudget } from './message-budget.js';
import { WS_CLOSE } from './ws-errors.js';

const OPEN = 1;

/** One client socket: its credential, its subscriptions with their sequence numbers, its buffer. */
export class Connection {
  credential: Credential | null = null;
  /**
   * channel -> this connection's subscription to it, which knows the last seq sent on it (seq
   * rises by 1 per channel per connection).
   */
  readonly subscriptions = new Map<string, FeedSubscription>();
  alive = true;
  authTimer: NodeJS.Timeout | null = null;
  closed = false;
  /**
   * Called once when the server decides to close this connection, before the socket is gone: a
   * client that stopped reading may hold its socket open long after (its close frame waits
   * behind what it did not read), but it is disconnected from that moment.
   */
  onServerClose: (() => void) | null = null;
  /** Lets go of its world's batches committed on other instances (see EventBus.follow). */
  unfollow: (() => void) | null = null;
  /** Counted out of its key's realtime connections (see RealtimeHub.release). */
  released = false;
  /** Incoming messages are handled in order, one at a time (auth is asynchronous). */
  inbox: Promise<void> = Promise.resolve();
  /** Bytes of the messages in {@link inbox} not handled yet (see {@link wait}). */
  waitingBytes = 0;
  /** Id of the {@link Batch} this connection last joined, and the frames it holds for it. */
  private batchId = -1;
  private held: Buffer | null = null;
  private heldMore: Buffer[] | null = null;

  constructor(
    readonly id: string,
    readonly socket: WebSocket,
    readonly ip: string,
    private readonly maxBuffered: number,
    /** What the client may send (messages and protocol pings alike). */
    readonly budget: MessageBudget,
  ) {}

  /**
   * Counts a received message of `size` bytes as waiting to be handled, unless that would take
   * what waits past `limit` (then nothing is counted and the answer is false). {@link handled}
   * takes it off again.
   */
  wait(size: number, limit: number): boolean {
    if (this.waitingBytes + size > limit) return false;
    this.waitingBytes += size;
    return true;
  }

  handled(size: number): void {
    this.waitingBytes -= size;
  }

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
    // Frames held for a coalesced write were sent before this message: they go first.
    this.flush();
    this.socket.send(text);
  }

  /** Answers a protocol-level ping, unless the client is too far behind (then it is closed). */
  pong(data: Buffer): void {
    if (this.closed || this.socket.readyState !== OPEN) return;
    if (this.socket.bufferedAmount > this.maxBuffered) {
      this.close(WS_CLOSE.SLOW_CONSUMER, 'slow consumer: send buffer full');
      return;
    }
    this.socket.pong(data);
  }

  sendJson(obj: unknown): void {
    this.send(JSON.stringify(obj));
  }

  /**
   * Sends one event on `channel` to this connection alone (a snapshot on subscribe, say) with its
   * next seq; the channel's other subscribers' seqs do not move. Not subscribed: the channel gets
   * a feed of its own for this connection. A message for every subscriber of a channel goes
   * through {@link sendToFeed} instead, which touches no per-connection state to number it.
   */
  sendEvent(channel: string, message: EventMessage, batch: Batch | null = null): void {
    let sub = this.subscriptions.get(channel);
    if (sub === undefined) {
      sub = new Feed(channel).join(this);
      this.subscriptions.set(channel, sub);
    }
    sub.base -= 1;
    this.deliver(sub.feed.sent - sub.base, message, batch);
  }

  /**
   * Sends one event frame with sequence number `seq`. The frame comes from `message`, which builds
   * it once per distinct seq, so a fan-out to subscribers that joined together costs no
   * per-connection serialisation. Within a {@link Batch} the frames are held and leave in one
   * socket write per connection when the batch is flushed.
   */
  deliver(seq: number, message: EventMessage, batch: Batch | null): void {
    if (this.closed || this.socket.readyState !== OPEN) return;
    if (batch !== null) {
      // The batch's later messages are only held: the buffer was judged at its first message
      // (what the batch itself adds is held back on purpose, not a client falling behind), and
      // the socket is chosen when the batch is written (see flush).
      if (this.batchId === batch.id) {
        const frame = message.frame(seq);
        if (this.held === null) this.held = frame;
        else (this.heldMore ??= []).push(frame);
        return;
      }
      if (this.socket.bufferedAmount > this.maxBuffered) {
        this.close(WS_CLOSE.SLOW_CONSUMER, 'slow consumer: send buffer full');
        return;
      }
      this.batchId = batch.id;
      this.held = message.frame(seq);
      this.heldMore = null;
      batch.connections.push(this);
      return;
    }
    if (this.socket.bufferedAmount > this.maxBuffered) {
      this.close(WS_CLOSE.SLOW_CONSUMER, 'slow consumer: send buffer full');
      return;
    }
    // Frames held for a coalesced write were sent before this message: they go first.
    this.flush();
    const raw = rawSocketOf(this.socket);
    if (raw === null) this.socket.send(message.text(seq));
    else raw.write(message.frame(seq));
  }

  /**
   * Writes the frames held for the current batch: one buffer as it is, several joined into one
   * (small frames: copying them is cheaper than a gathered write). Subscribers that joined a
   * channel together hold the very same frames, so `joins` (the batch's) keeps the last joined
   * buffer per first frame and they share one copy.
   */
  flush(joins: Map<Buffer, Joined> | null = null): void {
    const held = this.held;
    if (held === null) return;
    const more = this.heldMore;
    this.held = null;
    this.heldMore = null;
    if (this.closed || this.socket.readyState !== OPEN) return;
    const raw = rawSocketOf(this.socket);
    if (raw !== null) {
      raw.write(more === null ? held : joined(held, more, joins));
      return;
    }
    // Only reachable if ws started holding frames back mid-batch: send the texts through it.
    this.socket.send(frameText(held));
    if (more !== null) for (const f of more) this.socket.send(frameText(f));
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    // What was held for a coalesced write was sent before the close, except to a client too far
    // behind to take more.
    if (code === WS_CLOSE.SLOW_CONSUMER) {
      this.held = null;
      this.heldMore = null;
    } else {
      this.flush();
    }
    this.closed = true;
    if (this.authTimer !== null) clearTimeout(this.authTimer);
    this.onServerClose?.();
    try {
      this.socket.close(code, reason);
    } catch {
      this.socket.terminate();
    }
  }
}

/**
 * The messages of one channel to its subscribers: a public channel of a world, or a user's private
 * channel in a world. Sequence numbers are counted once per feed, not per connection: `sent`
 * messages went to every subscriber, and a subscriber's seq is `sent` minus its own `base`. A
 * subscription starts at seq 0 (`base` = `sent` when it joins); a message to one connection alone
 * (a snapshot) or a seq skipped for it (a lost batch) moves its `base` down by one.
 */
export class Feed {
  /** Messages sent to every subscriber of the feed. */
  sent = 0;
  readonly subscribers = new Set<FeedSubscription>();

  constructor(readonly channel: string) {}

  /** Subscribes `conn` at seq 0 (its next message is seq 1). */
  join(conn: Connection): FeedSubscription {
    const sub = new FeedSubscription(conn, this, this.sent);
    this.subscribers.add(sub);
    return sub;
  }
}

/** One connection's subscription to a {@link Feed}. */
export class FeedSubscription {
  constructor(
    readonly conn: Connection,
    readonly feed: Feed,
    /** The feed's `sent` at seq 0 of this subscription, less its own messages and skips. */
    public base: number,
  ) {}

  /** The last seq sent on this subscription. */
  get seq(): number {
    return this.feed.sent - this.base;
  }

  /** Starts again at seq 0 (a resubscribe: its snapshot is seq 1). */
  restart(): void {
    this.base = this.feed.sent;
  }

  /** The next message on this subscription shows a gap of one seq. */
  skip(): void {
    this.base -= 1;
  }

  leave(): void {
    this.feed.subscribers.delete(this);
  }
}

/**
 * Sends `message` to every subscriber of `feed`, each with its next seq: one counter moves for the
 * feed, and each subscriber's seq is a subtraction (no per-connection map to read or write).
 */
export function sendToFeed(feed: Feed, message: EventMessage, batch: Batch | null = null): void {
  const sent = ++feed.sent;
  for (const sub of feed.subscribers) sub.conn.deliver(sent - sub.base, message, batch);
}

let batchIds = 0;

/**
 * One fan-out batch: every message a connection gets from it leaves in one socket write (one
 * system call) when the batch is {@link flushBatch}ed. A batch carries several messages when the
 * server is busy (group commit gathers the orders of one event-loop turn) and when the
 * {@link Coalescer} holds it open for its window. A connection that gets one message gets a plain
 * write of that message's frame.
 */
export interface Batch {
  readonly id: number;
  readonly connections: Connection[];
  /** Frames joined for one write, by their first frame (see Connection.flush). */
  readonly joins: Map<Buffer, Joined>;
}

/** Frames `[first, ...more]` joined into `out`. */
export interface Joined {
  readonly more: Buffer[];
  readonly out: Buffer;
}

export function startBatch(): Batch {
  return { id: batchIds++, connections: [], joins: new Map() };
}

export function flushBatch(batch: Batch): void {
  for (const c of batch.connections) c.flush(batch.joins);
  batch.connections.length = 0;
  batch.joins.clear();
}

/** `first` and `more` as one buffer, reusing the join in `joins` when it holds the same frames. */
function joined(first: Buffer, more: Buffer[], joins: Map<Buffer, Joined> | null): Buffer {
  if (joins === null) return Buffer.concat([first, ...more]);
  const known = joins.get(first);
  if (known !== undefined && sameFrames(known.more, more)) return known.out;
  const out = Buffer.concat([first, ...more]);
  joins.set(first, { more, out });
  return out;
}

function sameFrames(a: Buffer[], b: Buffer[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The underlying TCP socket when a pre-built frame may be written to it directly: `ws` writes
 * unmasked, uncompressed server frames straight to the socket, so a frame written here lands in
 * order with its own writes. If `ws` ever holds frames back (its sender queue is in use, as with
 * compression), null: the caller goes through `ws.send`.
 */
function rawSocketOf(ws: WebSocket): Writable | null {
  const internals = ws as unknown as {
    _socket?: Writable;
    _sender?: { _queue?: unknown[]; _state?: number; _firstFragment?: boolean };
  };
  const sender = internals._sender;
  if (internals._socket === undefined || sender === undefined) return null;
  // ws 8: _state 0 is DEFAULT (not deflating, not reading a Blob), nothing queued behind it, and
  // not in the middle of a fragmented message.
  if (
    sender._state !== 0 ||
    sender._queue === undefined ||
    sender._queue.length > 0 ||
    sender._firstFragment !== true
  ) {
    return null;
  }
  return internals._socket;
}

/**
 * One event message serialised once for every subscriber of a channel: the JSON around the
 * per-connection seq, as bytes, and finished WebSocket text frames per seq value (built on first
 * use; subscribers that joined together share one).
 */
export class EventMessage {
  private readonly headText: string;
  private readonly tailText: string;
  private readonly head: Buffer;
  private readonly tail: Buffer;
  private readonly frames = new Map<number, Buffer>();
  private lastSeq = -1;
  private lastFrame: Buffer | null = null;

  /** `worldId`: set for a message of an ephemeral world, which names it (`world_id`). */
  constructor(channel: string, ts: number, data: unknown, worldId: string | null = null) {
    const world = worldId === null ? '' : `"world_id":${JSON.stringify(worldId)},`;
    this.headText = `{"type":"event",${world}"channel":${JSON.stringify(channel)},"seq":`;
    // `time` is the contract's timestamp form (ISO-8601 UTC); `ts`, the same instant in epoch
    // ms, stays for the clients that read it.
    this.tailText = `,"ts":${ts},"time":"${new Date(ts).toISOString()}","data":${JSON.stringify(data)}}`;
    this.head = Buffer.from(this.headText);
    this.tail = Buffer.from(this.tailText);
  }

  /** The message text for `seq`. */
  text(seq: number): string {
    return this.headText + seq + this.tailText;
  }

  /** The complete frame (FIN, text opcode, unmasked) for `seq`. */
  frame(seq: number): Buffer {
    // Subscribers that joined together ask for the same seq one after the other.
    if (seq === this.lastSeq) return this.lastFrame!;
    let frame = this.frames.get(seq);
    if (frame === undefined) {
      frame = textFrame(this.head, Buffer.from(String(seq)), this.tail);
      this.frames.set(seq, frame);
    }
    this.lastSeq = seq;
    this.lastFrame = frame;
    return frame;
  }
}

/** The text payload of a frame built by {@link textFrame}. */
export function frameText(frame: Buffer): string {
  const len = frame[1] & 0x7f;
  return frame.subarray(len < 126 ? 2 : len === 126 ? 4 : 10).toString();
}

/** RFC 6455 section 5.2 framing of one unfragmented, unmasked text message from its parts. */
export function textFrame(...parts: Buffer[]): Buffer {
  let length = 0;
  for (const p of parts) length += p.length;
  const header = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + length);
  frame[0] = 0x81;
  if (header === 2) frame[1] = length;
  else if (header === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  let at = header;
  for (const p of parts) at += p.copy(frame, at);
  return frame;
}
