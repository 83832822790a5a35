import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { WriterUnavailableError } from './cluster-errors.js';
import {
  commandStream,
  errorOf,
  fieldsOf,
  readyWithin,
  replyStream,
  writerPresenceKey,
  type CommandAnswer,
  type ForwardedCommand,
} from './command-wire.js';
import type { ClusterLog } from './lock-session.js';

/**
 * Adds the command to the world's stream only while a writer is present (its presence key,
 * refreshed by the writer's inbox, expires a few seconds after it dies): with no writer the
 * caller is answered 503 at once instead of waiting out the timeout. A script that runs at or
 * after the command's absolute deadline (ARGV[5], Redis time: a Redis that froze with the script
 * in its socket runs it when it thaws, after the caller was answered 503) adds nothing and
 * returns 0. One script, one round trip; both keys share the world's hash tag.
 */
const FORWARD_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local t = redis.call('TIME')
if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) >= tonumber(ARGV[5]) then return 0 end
return redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*',
  'id', ARGV[2], 'reply', ARGV[3], 'ttl', ARGV[4], 'dl', ARGV[5], 'cmd', ARGV[6])`;

/** Most entries a world's command stream keeps (approximately); older unread ones are dropped. */
const STREAM_MAXLEN = '10000';
/** How long the reply reader blocks per read, and waits before retrying a failed one. */
const READ_BLOCK_MS = 1000;
const READ_RETRY_MS = 200;
/** How long a command waits for a reply reader that is (re)connecting before it is refused. */
const READER_WAIT_MS = 500;
/** How often Redis's clock is sampled, and how many recent samples the offset is taken from. */
const CLOCK_SAMPLE_MS = 5_000;
const CLOCK_SAMPLES = 12;

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
  private readonly clock: RedisClock;

  constructor(private readonly opts: ForwarderOptions) {
    this.replies = replyStream(opts.instanceId);
    this.clock = new RedisClock(opts.redis);
  }

  /** Starts reading this instance's reply stream (a connection of its own: reads block). */
  start(): void {
    if (this.reader !== null || this.stopped) return;
    this.clock.start();
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
    // Everything below, Redis round trips included, fits in the deadline plus grace from now:
    // a Redis that froze (connections open, no answers) costs the caller a 503, never a hang.
    const started = performance.now();
    const waitMs = this.opts.timeoutMs + this.opts.graceMs;
    const { redis } = this.opts;
    if (this.reader === null) this.start();
    if (redis.status !== 'ready' || !(await this.readerReady())) {
      throw new WriterUnavailableError(world, 'Redis is unavailable');
    }
    const id = randomUUID();
    const answered = new Promise<CommandAnswer>((resolve, reject) =>
      this.waiting.set(id, { world, resolve, reject }),
    );
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => {
          this.waiting.delete(id);
          reject(new WriterUnavailableError(world, `no answer within ${waitMs} ms`));
        },
        Math.max(0, started + waitMs - performance.now()),
      );
    });
    try {
      const offset = await Promise.race([this.clock.offset(), late]);
      if (offset === null) throw new WriterUnavailableError(world, 'Redis is unavailable');
      // The absolute deadline, on Redis's clock: the writer starts the command only before it.
      const deadline = Math.floor(started + offset + this.opts.timeoutMs);
      let added: unknown;
      try {
        added = await Promise.race([
          redis.eval(
            FORWARD_SCRIPT,
            2,
            writerPresenceKey(world),
            commandStream(world),
            STREAM_MAXLEN,
            id,
            this.replies,
            String(this.opts.timeoutMs),
            String(deadline),
            JSON.stringify(command),
          ),
          late,
        ]);
      } catch (err) {
        if (err instanceof WriterUnavailableError) throw err;
        this.opts.log.warn(`forwarding to the ${world} writer failed: ${String(err)}`);
        throw new WriterUnavailableError(world, 'Redis is unavailable');
      }
      if (added === null) throw new WriterUnavailableError(world, 'no writer is elected');
      if (added === 0) throw new WriterUnavailableError(world, 'Redis answered after the deadline');
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
    return this.reader !== null && readyWithin(this.reader, READER_WAIT_MS);
  }

  /** Callers still waiting for an answer. */
  get inFlight(): number {
    return this.waiting.size;
  }

  /** Stops reading; callers still waiting are answered 503. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clock.stop();
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
      // Not connected yet (the boot) or reconnecting: wait for it, it is no failed read.
      if (!(await readyWithin(reader, READ_BLOCK_MS))) continue;
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

/**
 * Redis's clock as seen from this process: a lower bound of (Redis time - performance.now()),
 * the largest of the last few samples. A sample's TIME ran between the call and its answer, so
 * Redis's time minus the local time at the answer never exceeds the true offset: a deadline
 * computed with it falls no later on Redis's clock than the caller stops waiting. Monotonic
 * local time, so a stepped wall clock changes nothing; instances' clocks need not agree.
 */
export class RedisClock {
  private readonly samples: number[] = [];
  private sampling: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly redis: Redis) {}

  start(): void {
    if (this.timer !== null) return;
    void this.sample();
    this.timer = setInterval(() => void this.sample(), CLOCK_SAMPLE_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** The offset (ms); before a first sample, one is taken (null: Redis did not answer it). */
  async offset(): Promise<number | null> {
    if (this.samples.length === 0) await this.sample();
    return this.samples.length === 0 ? null : Math.max(...this.samples);
  }

  /** One TIME round trip (one at a time); a failed one leaves the samples as they were. */
  private sample(): Promise<void> {
    this.sampling ??= (async () => {
      try {
        const [s, us] = await this.redis.time();
        const offset = Number(s) * 1000 + Number(us) / 1000 - performance.now();
        this.samples.push(offset);
        if (this.samples.length > CLOCK_SAMPLES) this.samples.shift();
      } catch {
        // Redis away: the next sample decides.
      } finally {
        this.sampling = null;
      }
    })();
    return this.sampling;
  }
}
