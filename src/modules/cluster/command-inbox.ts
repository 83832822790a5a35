import type { Redis } from 'ioredis';
import { prefixedKey, unprefixedKey } from '../redis/redis-key-prefix.js';
import { WriterUnavailableError } from './cluster-errors.js';
import {
  WRITERS_GROUP,
  answerOf,
  commandStream,
  entryDeadline,
  fieldsOf,
  readyWithin,
  writerPresenceKey,
  type CommandAnswer,
  type ForwardedCommand,
} from './command-wire.js';
import type { ClusterLog } from './lock-session.js';

/** Runs a forwarded command on this instance's engine of the world; throws DomainError. */
export type CommandHandler = (world: string, command: ForwardedCommand) => unknown;

/** Deletes the presence key only if it is still this instance's (a successor may have set it). */
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/** Most answers an instance's reply stream keeps, and how long it outlives its last answer. */
const REPLY_MAXLEN = '1000';
const REPLY_TTL_MS = 60_000;
const READ_RETRY_MS = 200;

export interface InboxOptions {
  redis: Redis;
  instanceId: string;
  handler: CommandHandler;
  /** How long a read blocks (ms); the presence is refreshed at least this often. */
  blockMs?: number;
  /** How long the presence outlives the last refresh (ms): how long a dead writer seems present. */
  presenceMs?: number;
  log: ClusterLog;
}

/**
 * The writer's side of command forwarding: for each world this instance is the writer of, it
 * reads the world's command stream in the `writers` consumer group, runs each command through
 * the handler and adds the answer to the requester's reply stream, acknowledging (and deleting)
 * the entry in the same transaction. While it serves a world it keeps the world's presence key
 * alive, which forwarders require before they add a command.
 *
 * What a takeover does with what the previous writer left (safety first: never run a command
 * twice, never run one whose caller was already answered 503):
 * - entries never delivered run, if still within their deadline (the caller is still waiting);
 * - entries past their deadline are dropped unrun (their caller got, or is about to get, a 503);
 * - entries the previous writer read but never acknowledged (XAUTOCLAIM) are not run again: it
 *   may have committed them before it died. Their callers are answered 503 at once; a retry
 *   with the same Idempotency-Key then learns whether the first attempt was applied.
 */
export class WriterInbox {
  private readonly served = new Set<string>();
  /** Worlds whose group exists and whose leftovers were settled since they were served. */
  private readonly ready = new Set<string>();
  /** Entry ids being run now: never claimed back from ourselves as leftovers. */
  private readonly running = new Set<string>();
  private reader: Redis | null = null;
  /** The reader connection's CLIENT ID, to interrupt its blocking read. */
  private readerId: string | null = null;
  private loop: Promise<void> | null = null;
  private stopped = false;
  private wake: (() => void) | null = null;
  private readonly blockMs: number;
  private readonly presenceMs: number;

  constructor(private readonly opts: InboxOptions) {
    this.blockMs = opts.blockMs ?? 1000;
    this.presenceMs = opts.presenceMs ?? 3000;
  }

  /** Serves a world (this instance just became its writer: call after its engine is restored). */
  serve(world: string): void {
    if (this.stopped) return;
    this.served.add(world);
    this.ready.delete(world);
    // Present at once, not after the read in progress: forwarders may send from now on.
    void this.opts.redis
      .set(writerPresenceKey(world), this.opts.instanceId, 'PX', this.presenceMs)
      .catch(() => undefined);
    if (this.reader === null) {
      this.reader = this.opts.redis.duplicate({
        connectionName: `svc-inbox:${this.opts.instanceId}`,
      });
      const reader = this.reader;
      reader.on('error', () => undefined);
      reader.on('ready', () => {
        reader.client('ID').then(
          (id) => (this.readerId = String(id)),
          () => undefined,
        );
      });
      this.loop = this.run(reader);
    }
    this.wake?.();
    void this.interruptRead();
  }

  /**
   * Ends the blocking read in progress (CLIENT UNBLOCK), so the next one reads the worlds served
   * now: a new world at once, and a world given up no more (its commands go to its new writer).
   */
  private async interruptRead(): Promise<void> {
    if (this.readerId === null) return;
    await this.opts.redis.client('UNBLOCK', this.readerId).catch(() => undefined);
  }

  /** Stops serving a world (this instance stepped down): forwarders stop sending at once. */
  async unserve(world: string): Promise<void> {
    this.served.delete(world);
    this.ready.delete(world);
    await this.interruptRead();
    await this.opts.redis
      .eval(RELEASE_SCRIPT, 1, writerPresenceKey(world), this.opts.instanceId)
      .catch(() => undefined);
  }

  isServing(world: string): boolean {
    return this.served.has(world);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const world of [...this.served]) await this.unserve(world);
    this.wake?.();
    this.reader?.disconnect();
    await this.loop;
  }

  private async run(reader: Redis): Promise<void> {
    let failing = false;
    while (!this.stopped) {
      if (this.served.size === 0) {
        await new Promise<void>((r) => {
          this.wake = r;
          setTimeout(r, this.blockMs).unref();
        });
        this.wake = null;
        continue;
      }
      // Not connected yet (its first term) or reconnecting: wait for it, it is no failed read.
      if (!(await readyWithin(reader, this.blockMs))) continue;
      try {
        await this.refreshPresence();
        for (const world of this.served) if (!this.ready.has(world)) await this.takeOver(world);
        // Only worlds whose leftovers are settled (one served meanwhile waits for the next round).
        const worlds = [...this.served].filter((w) => this.ready.has(w));
        if (worlds.length === 0) continue;
        const res = (await reader.xreadgroup(
          'GROUP',
          WRITERS_GROUP,
          this.opts.instanceId,
          'COUNT',
          100,
          'BLOCK',
          this.blockMs,
          'STREAMS',
          ...worlds.map(commandStream),
          ...worlds.map(() => '>'),
        )) as [string, [string, string[]][]][] | null;
        failing = false;
        if (res === null) continue;
        const now = await this.redisNow();
        for (const [stream, entries] of res) {
          const name = unprefixedKey(reader, stream);
          const world = worlds.find((w) => commandStream(w) === name)!;
          for (const [id, flat] of entries) this.handle(world, id, fieldsOf(flat), now);
        }
      } catch (err) {
        if (this.stopped) return;
        // A Redis that came back empty lost the groups: make them again before reading.
        if (String(err).includes('NOGROUP')) this.ready.clear();
        if (!failing) this.opts.log.warn(`reading forwarded commands failed: ${String(err)}`);
        failing = true;
        await new Promise((r) => setTimeout(r, READ_RETRY_MS));
      }
    }
  }

  private async refreshPresence(): Promise<void> {
    const pipe = this.opts.redis.pipeline();
    for (const world of this.served) {
      pipe.set(writerPresenceKey(world), this.opts.instanceId, 'PX', this.presenceMs);
    }
    await pipe.exec();
  }

  /** Redis's clock (ms), which stamped the entries' ids: deadlines never compare two clocks. */
  private async redisNow(): Promise<number> {
    const [s, us] = await this.opts.redis.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  }

  /** Makes the group if missing, then settles the entries previous writers left unanswered. */
  private async takeOver(world: string): Promise<void> {
    const stream = commandStream(world);
    try {
      // From the start of the stream: commands added before the first writer ever read it.
      // ioredis's keyPrefix does not reach XGROUP's key (XREADGROUP's and XAUTOCLAIM's it does):
      // the prefix is put on by hand, or the group would sit on another stream.
      await this.opts.redis.xgroup(
        'CREATE',
        prefixedKey(this.opts.redis, stream),
        WRITERS_GROUP,
        '0',
        'MKSTREAM',
      );
    } catch (err) {
      if (!String(err).includes('BUSYGROUP')) throw err;
    }
    const now = await this.redisNow();
    let cursor = '0-0';
    do {
      const [next, entries] = (await this.opts.redis.xautoclaim(
        stream,
        WRITERS_GROUP,
        this.opts.instanceId,
        0,
        cursor,
        'COUNT',
        100,
      )) as [string, [string, string[] | null][]];
      cursor = next;
      for (const [id, flat] of entries) {
        if (this.running.has(id) || flat === null) continue;
        const fields = fieldsOf(flat);
        const expired = now >= entryDeadline(id, fields);
        // Not run again: the writer that read it may have committed it before it died.
        await this.settle(
          world,
          id,
          fields,
          expired
            ? null
            : answerOf(new WriterUnavailableError(world, 'the writer stopped while running it')),
        );
      }
    } while (cursor !== '0-0');
    if (this.served.has(world)) this.ready.add(world);
  }

  /** Starts one command (in arrival order; its answer is sent when it settles). */
  private handle(world: string, id: string, fields: Record<string, string>, now: number): void {
    if (!this.served.has(world)) {
      // Stepped down while the read was on its way: another instance is the writer now.
      void this.settle(
        world,
        id,
        fields,
        answerOf(new WriterUnavailableError(world, 'stepped down')),
      );
      return;
    }
    if (now >= entryDeadline(id, fields)) {
      // Its caller stops waiting about now, and gets a 503: it must not happen after all.
      void this.settle(world, id, fields, null);
      return;
    }
    this.running.add(id);
    const done = (answer: CommandAnswer) =>
      this.settle(world, id, fields, answer).finally(() => this.running.delete(id));
    let command: ForwardedCommand;
    try {
      command = JSON.parse(fields.cmd) as ForwardedCommand;
    } catch (err) {
      void done(answerOf(err));
      return;
    }
    // Called now, not after an await, so commands reach the engine in their stream order.
    let result: unknown;
    try {
      result = this.opts.handler(world, command);
    } catch (err) {
      void done(this.failed(world, command, err));
      return;
    }
    Promise.resolve(result).then(
      (value) => done({ ok: true, result: value ?? null }),
      (err: unknown) => done(this.failed(world, command, err)),
    );
  }

  private failed(world: string, command: ForwardedCommand, err: unknown): CommandAnswer {
    const answer = answerOf(err);
    if (answer.ok === false && answer.code === 'INTERNAL') {
      this.opts.log.error(`forwarded ${command.op} in ${world} failed: ${String(err)}`);
    }
    return answer;
  }

  /**
   * Answers an entry (null: drops it unanswered) and acknowledges and deletes it, in one
   * transaction: an entry is either answered and gone, or still pending for the next writer.
   */
  private async settle(
    world: string,
    id: string,
    fields: Record<string, string>,
    answer: CommandAnswer | null,
  ): Promise<void> {
    const stream = commandStream(world);
    const tx = this.opts.redis.multi();
    if (answer !== null && fields.reply !== undefined) {
      tx.xadd(
        fields.reply,
        'MAXLEN',
        '~',
        REPLY_MAXLEN,
        '*',
        'id',
        fields.id,
        'answer',
        JSON.stringify(answer),
      );
      tx.pexpire(fields.reply, REPLY_TTL_MS);
    }
    tx.xack(stream, WRITERS_GROUP, id);
    tx.xdel(stream, id);
    try {
      await tx.exec();
    } catch (err) {
      // Left pending: the next writer settles it (unrun); its caller times out with a 503.
      this.opts.log.warn(
        `answering forwarded command ${fields.id} in ${world} failed: ${String(err)}`,
      );
    }
  }
}
