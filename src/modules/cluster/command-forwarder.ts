import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { WriterUnavailableError } from './cluster-errors.js';
import {
  commandStream,
  errorOf,
  fieldsOf,
  replyStream,
  writerPresenceKey,
  type CommandAnswer,
  type ForwardedCommand,
} from './command-wire.js';
import type { ClusterLog } from './lock-session.js';

/**
 * Adds the command to the world's stream only while a writer is present (its presence key,
 * refreshed by the writer's inbox, expires a few seconds after it dies): with no writer the
 * caller is answered 503 at once instead of waiting out the timeout. One script, one round trip;
 * both keys share the world's hash tag.
 */
const FORWARD_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
return redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*',
  'id', ARGV[2], 'reply', ARGV[3], 'ttl', ARGV[4], 'cmd', ARGV[5])`;

/** Most entries a world's command stream keeps (approximately); older unread ones are dropped. */
const STREAM_MAXLEN = '10000';
/** How long the reply reader blocks per read, and waits before retrying a failed one. */
const READ_BLOCK_MS = 1000;
const READ_RETRY_MS = 200;
/** How long a command waits for a reply reader that is (re)connecting before it is refused. */
const READER_WAIT_MS = 500;

export interface ForwarderOptions {
  /** The instance's Redis client (no offline queue: commands fail at once while Redis is away). */
  redis: Redis;
  instanceId: string;
  /**
   * The command's deadline (ms): a writer starts it only within this time of its arrival in
   * Redis, and drops it after. The caller waits this plus `graceMs` for the answer.
   */
  timeoutMs: number;
  /** Covers the commit of a command started just before its deadline (ms). */
  graceMs: number;
  log: ClusterLog;
}

interface Waiter {
  world: string;
  resolve: (answer: CommandAnswer) => void;
  reject: (err: unknown) => void;
}

/**
 * The non-writer's side of command forwarding: a trading command for a world this instance is
 * not the writer of is added to the world's command stream (Redis Streams) with a deadline and
 * this instance's reply stream; the writer runs it (WriterInbox) and adds the answer there. The
 * caller gets the writer's result, or its DomainError as if the command had run here, or 503
 * WRITER_UNAVAILABLE: no writer present, Redis away, or no answer by the deadline plus grace.
 *
 * A command is never run after its caller was answered 503 for it: the writer starts only those
 * still within their deadline (Redis time, so clocks of instances need not agree), and the
 * caller waits longer than that by the grace a commit takes.
 */
export class CommandForwarder {
  private readonly waiting = new Map<string, Waiter>();
  private reader: Redis | null = null;
  private stopped = false;
  private reading: Promise<void> | null = null;
  private readonly replies: string;

  constructor(private readonly opts: ForwarderOptions) {
    this.replies = replyStream(opts.instanceId);
  }

  /** Starts reading this instance's reply stream (a connection of its own: reads block). */
  start(): void {
    if (this.reader !== null || this.stopped) return;
    this.reader = this.opts.redis.duplicate({
      connectionName: `svc-replies:${this.opts.instanceId}`,
    });
    // Errors come back through the read loop; ioredis reports every failed attempt here too.
    this.reader.on('error', () => undefined);
    this.reading = this.readLoop(this.reader);
  }

  /**
   * Runs `command` on the world's writer and returns its result (the handler's, as JSON carries
   * it), or throws its DomainError, or WriterUnavailableError.
   */
  async forward<T = unknown>(world: string, command: ForwardedCommand): Promise<T> {
    const { redis } = this.opts;
    if (this.reader === null) this.start();
    if (redis.status !== 'ready' || !(await this.readerReady())) {
      throw new WriterUnavailableError(world, 'Redis is unavailable');
    }
    const id = randomUUID();
    const answered = new Promise<CommandAnswer>((resolve, reject) =>
      this.waiting.set(id, { world, resolve, reject }),
    );
    let added: unknown;
    try {
      added = await redis.eval(
        FORWARD_SCRIPT,
        2,
        writerPresenceKey(world),
        commandStream(world),
        STREAM_MAXLEN,
        id,
        this.replies,
        String(this.opts.timeoutMs),
        JSON.stringify(command),
      );
    } catch (err) {
      this.waiting.delete(id);
      this.opts.log.warn(`forwarding to the ${world} writer failed: ${String(err)}`);
      throw new WriterUnavailableError(world, 'Redis is unavailable');
    }
    if (added === null) {
      this.waiting.delete(id);
      throw new WriterUnavailableError(world, 'no writer is elected');
    }
    // Counted from the entry's arrival (it is in Redis now), so the wait ends after its deadline.
    const waitMs = this.opts.timeoutMs + this.opts.graceMs;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new WriterUnavailableError(world, `no answer within ${waitMs} ms`));
      }, waitMs);
    });
    try {
      const answer = await Promise.race([answered, late]);
      if (answer.ok) return answer.result as T;
      throw errorOf(answer);
    } finally {
      clearTimeout(timer);
      this.waiting.delete(id);
    }
  }

  /** The reply reader is connected, or connects within a moment (it is just starting). */
  private async readerReady(): Promise<boolean> {
    const reader = this.reader;
    if (reader === null || reader.status === 'ready') return reader !== null;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      timer = setTimeout(resolve, READER_WAIT_MS);
      reader.once('ready', resolve);
    });
    clearTimeout(timer);
    return (reader.status as string) === 'ready';
  }

  /** Callers still waiting for an answer. */
  get inFlight(): number {
    return this.waiting.size;
  }

  /** Stops reading; callers still waiting are answered 503. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.reader?.disconnect();
    await this.reading;
    for (const [id, w] of this.waiting) {
      this.waiting.delete(id);
      w.reject(new WriterUnavailableError(w.world, 'this instance is stopping'));
    }
  }

  private async readLoop(reader: Redis): Promise<void> {
    // Replies older than this instance are none of its business (its id is new per process).
    let last = '0-0';
    let failing = false;
    while (!this.stopped) {
      try {
        const res = (await reader.xread(
          'COUNT',
          500,
          'BLOCK',
          READ_BLOCK_MS,
          'STREAMS',
          this.replies,
          last,
        )) as [string, [string, string[]][]][] | null;
        failing = false;
        for (const [, entries] of res ?? []) {
          for (const [entryId, flat] of entries) {
            last = entryId;
            this.deliver(fieldsOf(flat));
          }
        }
      } catch (err) {
        if (this.stopped) return;
        if (!failing) this.opts.log.warn(`reading writer answers failed: ${String(err)}`);
        failing = true;
        await new Promise((r) => setTimeout(r, READ_RETRY_MS));
      }
    }
  }

  private deliver(fields: Record<string, string>): void {
    // A second answer (a deposed writer's, after the next one answered 503) finds no waiter.
    const w = this.waiting.get(fields.id);
    if (w === undefined) return;
    this.waiting.delete(fields.id);
    try {
      w.resolve(JSON.parse(fields.answer) as CommandAnswer);
    } catch (err) {
      w.reject(err);
    }
  }
}
