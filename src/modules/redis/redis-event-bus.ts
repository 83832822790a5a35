import { randomBytes } from 'node:crypto';
import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { Subject, type Observable } from 'rxjs';
import { environmentOf, type WorldName } from '../../common/environment.js';
import { EventBus, type CommittedEvents } from '../trading/event-bus.js';
import { unprefixedKey } from './redis-key-prefix.js';
import {
  compareIds,
  decodeEntry,
  encodeBatch,
  seqKey,
  streamKey,
  worldOfKey,
} from './redis-event-bus-codec.js';

/**
 * One entry per batch, numbered by the world's counter in the same script, so stream order and
 * sequence order are the same whichever instances publish. Both keys expire after a quiet
 * spell (ARGV[5] ms): a deleted or idle world leaves nothing behind.
 * KEYS: stream, counter. ARGV: maxlen, instance, gap ("1"/"0"), batch JSON ("" for a marker), ttl.
 */
const PUBLISH = `
local seq = redis.call('INCR', KEYS[2])
local entry = {KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'i', ARGV[2], 's', seq}
if ARGV[3] == '1' then entry[#entry + 1] = 'g'; entry[#entry + 1] = '1' end
if ARGV[4] ~= '' then entry[#entry + 1] = 'b'; entry[#entry + 1] = ARGV[4] end
redis.call('XADD', unpack(entry))
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return seq
`;

type PublishCommand = (...args: (string | number)[]) => Promise<number>;

/**
 * Entries kept per world stream (XADD MAXLEN ~, so Redis may keep up to a hundred or so more): at
 * a few hundred bytes per batch, a few MB per busy world; a reader further behind than this
 * resyncs.
 */
export const EVENT_STREAM_MAXLEN = 10_000;
/** A world's stream expires after a day without a batch. */
const STREAM_TTL_MS = 86_400_000;
/** Longest a read blocks; a follow or a stop interrupts it earlier (CLIENT UNBLOCK). */
const BLOCK_MS = 5_000;
/** Most entries one read takes (per stream). */
const READ_COUNT = 500;
/** Pause after a failed read before the next attempt (the reconnect usually ends it earlier). */
const RETRY_MS = 1_000;

export interface RedisEventBusOptions {
  /** Entries kept per world stream (MAXLEN ~, so Redis may keep somewhat more). */
  maxLen: number;
  /** What tells this instance's entries from the others'; random per process by default. */
  instanceId?: string;
  /** Time for the resync batches this bus makes (their committedAt). */
  now?: () => number;
  /** At most one warning per this many ms while Redis is away. */
  warnIntervalMs?: number;
}

/** Where this instance has read a followed world's stream up to. */
interface Cursor {
  id: string;
  /** Sequence number of the entry at `id`; null: none seen yet (an empty stream). */
  seq: number | null;
}

/**
 * The committed-event stream shared by every instance through Redis Streams (REDIS_URL).
 *
 * - publish: local subscribers get the batch at once, as with the in-process bus; the batch is
 *   also appended to the world's stream (`events:{<world>}`, capped near `maxLen` entries) with
 *   this instance's id and the world's next sequence number.
 * - One blocking connection reads every world some local consumer follows ({@link follow}), from
 *   the newest entry at the time it started following, and hands other instances' batches to the
 *   local stream, in stream order, each once (marked `remote`); its own it skips.
 * - When continuity is lost (the sequence jumps: the stream was trimmed past this reader, or
 *   Redis restarted empty; a publisher says it lost batches; this reader's connection broke), it
 *   hands on a resync instead: `rebuilt: true, lost: true` and no events, which consumers take as
 *   "refresh from the engine, and tell clients messages were lost". After a broken connection it
 *   resumes from the newest entry, the resync standing for what it missed.
 * - Fail-open: without Redis a batch still reaches local subscribers and the publisher never
 *   sees an error. The worlds it could not append to are remembered; once Redis is back, a gap
 *   marker (or the next batch, flagged) makes every other reader resync. One warning per
 *   `warnIntervalMs` at most.
 */
export class RedisStreamsEventBus extends EventBus implements OnApplicationShutdown {
  private readonly log = new Logger('EventBus');
  private readonly subject = new Subject<CommittedEvents>();
  readonly instanceId: string;
  private readonly maxLen: number;
  private readonly now: () => number;
  private readonly warnIntervalMs: number;
  private readonly publishScript: PublishCommand;
  /** The blocking reader: its own connection, as XREAD BLOCK holds it. */
  private readonly reader: Redis;
  /** The reader's CLIENT ID on its current connection, for CLIENT UNBLOCK. */
  private readerId: string | null = null;
  /** A read is on its way or blocking; the number tells reads apart. */
  private blocked = 0;
  private reads = 0;
  /** A world was followed since the current round positioned its cursors. */
  private followed = false;
  /** World -> how many local followers. */
  private readonly follows = new Map<WorldName, number>();
  private readonly cursors = new Map<WorldName, Cursor>();
  /** Worlds with batches that never reached Redis -> the failure's number (see {@link lost}). */
  private readonly missed = new Map<WorldName, number>();
  private failures = 0;
  private markerRetry: NodeJS.Timeout | null = null;
  /** The reader failed: the worlds it follows resync once it reads again. */
  private readerBroken = false;
  private wake: (() => void) | null = null;
  private stopped = false;
  private lastWarnAt = Number.NEGATIVE_INFINITY;
  /** The reading loop; settles after {@link onApplicationShutdown}. */
  readonly done: Promise<void>;

  constructor(
    private readonly redis: Redis,
    options: RedisEventBusOptions,
  ) {
    super();
    this.maxLen = options.maxLen;
    this.instanceId = options.instanceId ?? `ins_${randomBytes(9).toString('base64url')}`;
    this.now = options.now ?? Date.now;
    this.warnIntervalMs = options.warnIntervalMs ?? 30_000;
    redis.defineCommand('svcEventPublish', { numberOfKeys: 2, lua: PUBLISH });
    const commands = redis as unknown as { svcEventPublish: PublishCommand };
    this.publishScript = commands.svcEventPublish.bind(redis);
    this.reader = redis.duplicate({
      connectionName: 'svc-sandbox-exchange:events',
      // A read cut by a lost connection fails (and the reader resyncs) rather than run again.
      autoResendUnfulfilledCommands: false,
    });
    // Failures surface through the reader's commands (and the throttled warning there).
    this.reader.on('error', () => undefined);
    this.reader.on('ready', () => {
      this.readerId = null;
      this.interrupt();
    });
    redis.on('ready', () => this.sendMarkers());
    this.done = this.run();
  }

  get stream(): Observable<CommittedEvents> {
    return this.subject.asObservable();
  }

  publish(batch: CommittedEvents): void {
    this.subject.next(batch);
    // Another instance's batch is already in the stream.
    if (batch.remote === true) return;
    this.append(batch.world, encodeBatch(batch));
  }

  override follow(world: WorldName): () => void {
    const n = this.follows.get(world) ?? 0;
    this.follows.set(world, n + 1);
    if (n === 0) {
      this.followed = true;
      this.interrupt();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.follows.get(world) ?? 1) - 1;
      if (left > 0) {
        this.follows.set(world, left);
        return;
      }
      this.follows.delete(world);
      this.cursors.delete(world);
    };
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.markerRetry !== null) clearTimeout(this.markerRetry);
    this.interrupt();
    this.reader.disconnect();
    await this.done;
  }

  /** Whether this instance reads the world's stream now (from where it started following). */
  following(world: WorldName): boolean {
    return this.cursors.has(world);
  }

  /** Worlds whose batches could not reach Redis and whose gap marker is still owed. */
  get owedMarkers(): WorldName[] {
    return [...this.missed.keys()];
  }

  /** Appends a batch (or, with `body` "", a bare gap marker); never throws. */
  private append(world: WorldName, body: string): void {
    // 'end': the connection was closed on purpose (shutdown), nobody is left to tell.
    if (this.stopped || this.redis.status === 'end') return;
    const owed = this.missed.get(world);
    if (this.redis.status !== 'ready') {
      this.lost(world, `Redis connection ${this.redis.status}`);
      return;
    }
    this.publishScript(
      streamKey(world),
      seqKey(world),
      this.maxLen,
      this.instanceId,
      owed === undefined ? '0' : '1',
      body,
      STREAM_TTL_MS,
    ).then(
      () => {
        // Settled by this entry, unless a later batch failed meanwhile (it needs its own marker).
        if (owed !== undefined && this.missed.get(world) === owed) this.missed.delete(world);
      },
      (err: unknown) => this.lost(world, err instanceof Error ? err.message : String(err)),
    );
  }

  private lost(world: WorldName, reason: string): void {
    this.missed.set(world, ++this.failures);
    this.warn(
      `could not append to the ${world} event stream (${reason}): local subscribers have the batch; other instances resync once Redis is back`,
    );
    // Redis may be back already (a failure that arrived after its return): try again shortly.
    if (this.redis.status === 'ready' && this.markerRetry === null && !this.stopped) {
      this.markerRetry = setTimeout(() => {
        this.markerRetry = null;
        this.sendMarkers();
      }, RETRY_MS);
      this.markerRetry.unref();
    }
  }

  /** Redis is back: a gap marker in each world this instance could not append to. */
  private sendMarkers(): void {
    for (const world of [...this.missed.keys()]) this.append(world, '');
  }

  private warn(message: string): void {
    const t = Date.now();
    if (t - this.lastWarnAt < this.warnIntervalMs) return;
    this.lastWarnAt = t;
    this.log.warn(message);
  }

  /** Wakes the reading loop: a world to start following, the reader back, or a stop. */
  private interrupt(): void {
    this.wake?.();
    this.unblock(this.blocked, 0);
  }

  /**
   * CLIENT UNBLOCK from the other connection; it may arrive before the read is blocking in
   * Redis (it then unblocks nothing), so it is sent again shortly while that read still waits.
   */
  private unblock(read: number, attempt: number): void {
    if (read === 0 || this.blocked !== read || this.readerId === null) return;
    if (this.redis.status !== 'ready' || attempt > 20) return;
    this.redis.client('UNBLOCK', this.readerId).then(
      (n) => {
        if (Number(n) === 0) setTimeout(() => this.unblock(read, attempt + 1), 5).unref();
      },
      () => undefined,
    );
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (this.reader.status !== 'ready' && this.cursors.size > 0 && !this.readerBroken) {
        // Lost between two reads: the same as a read that failed.
        this.readerBroken = true;
        this.warn(
          `the event stream reader lost Redis (${this.reader.status}): realtime resyncs once Redis answers again`,
        );
      }
      if (this.follows.size === 0 || this.reader.status !== 'ready') {
        await this.pause(this.follows.size === 0 ? BLOCK_MS : RETRY_MS);
        continue;
      }
      try {
        await this.readOnce();
      } catch (err) {
        if (this.stopped) break;
        this.warn(
          `reading the event streams failed (${err instanceof Error ? err.message : String(err)}): realtime resyncs once Redis answers again`,
        );
        this.readerBroken = true;
        await this.pause(RETRY_MS);
      }
    }
  }

  private async readOnce(): Promise<void> {
    if (this.readerBroken) {
      // Whatever went by meanwhile is covered by a resync, handed on once reading resumes from
      // the newest entry (so nothing appended after the resync is skipped).
      this.cursors.clear();
      this.followed = false;
      await this.position();
      this.readerBroken = false;
      for (const world of this.cursors.keys()) this.emitResync(world);
    }
    this.followed = false;
    // Newly followed worlds are read from here on: what they held before is in no batch this
    // reader hands on, so consumers refresh from it (a resync with nothing lost).
    for (const world of await this.position()) this.emitResync(world, false);
    this.readerId ??= String(await this.reader.client('ID'));
    const worlds = [...this.cursors.keys()];
    // Followed while positioning: position that one too before blocking.
    if (worlds.length === 0 || this.followed) return;
    const ids = worlds.map((w) => this.cursors.get(w)!.id);
    this.blocked = ++this.reads;
    let reply: [string, [string, string[]][]][] | null;
    try {
      // A world followed meanwhile interrupts this (CLIENT UNBLOCK answers it as a timeout).
      reply = (await this.reader.xread(
        'COUNT',
        READ_COUNT,
        'BLOCK',
        BLOCK_MS,
        'STREAMS',
        ...worlds.map(streamKey),
        ...ids,
      )) as [string, [string, string[]][]][] | null;
    } finally {
      this.blocked = 0;
    }
    if (reply !== null) for (const [key, entries] of reply) this.deliver(key, entries);
  }

  /**
   * Worlds newly followed start at their stream's newest entry: batches from now on. Answers the
   * worlds positioned.
   */
  private async position(): Promise<WorldName[]> {
    const fresh = [...this.follows.keys()].filter((w) => !this.cursors.has(w));
    if (fresh.length === 0) return [];
    const newest = await Promise.all(
      fresh.map((w) => this.reader.xrevrange(streamKey(w), '+', '-', 'COUNT', 1)),
    );
    const positioned: WorldName[] = [];
    fresh.forEach((world, i) => {
      // Let go of while this was asked.
      if (!this.follows.has(world)) return;
      positioned.push(world);
      const last = newest[i][0];
      this.cursors.set(
        world,
        last === undefined
          ? { id: '0-0', seq: null }
          : { id: last[0], seq: decodeEntry(last[1]).seq },
      );
    });
    return positioned;
  }

  private deliver(key: string, entries: [string, string[]][]): void {
    const name = unprefixedKey(this.reader, key);
    const world = name === null ? null : worldOfKey(name);
    if (world === null) return;
    for (const [id, fields] of entries) {
      // Looked up per entry: a consumer may let go of the world while its batches are handed on.
      const cursor = this.cursors.get(world);
      // Not followed any more, or an answer to a read from before a re-follow.
      if (cursor === undefined || compareIds(id, cursor.id) <= 0) continue;
      const entry = decodeEntry(fields);
      const jumped = cursor.seq !== null && entry.seq !== cursor.seq + 1;
      cursor.id = id;
      cursor.seq = entry.seq;
      const own = entry.instance === this.instanceId;
      // A jump is others' batches missed even at an own entry; an own gap flag is not: local
      // subscribers had every batch of this instance.
      if (jumped || (entry.gap && !own)) this.emitResync(world);
      if (own || entry.batch === null) continue;
      this.subject.next({ ...entry.batch, remote: true });
    }
  }

  /** A resync of the world: `lost` when batches were missed (else it starts being followed). */
  private emitResync(world: WorldName, lost = true): void {
    this.subject.next({
      environment: environmentOf(world),
      world,
      events: [],
      committedAt: this.now(),
      rebuilt: true,
      remote: true,
      ...(lost ? { lost: true } : {}),
    });
  }
}
