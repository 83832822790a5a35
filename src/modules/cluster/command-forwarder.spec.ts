import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { DomainError } from '../../common/errors/domain-error.js';
import { RedisServer } from '../../../test/support/redis-server.js';
import { WriterUnavailableError } from './cluster-errors.js';
import { CommandForwarder } from './command-forwarder.js';
import { WriterInbox, type CommandHandler } from './command-inbox.js';
import { commandStream, writerPresenceKey, type ForwardedCommand } from './command-wire.js';

/**
 * Command forwarding over Redis Streams on a real redis-server (one for the file): a non-writer
 * instance's forwarder, a writer's inbox, and what happens across a writer's death and Redis's.
 */
let server: RedisServer;
const closers: (() => Promise<void> | void)[] = [];
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };
let n = 0;

beforeAll(async () => {
  server = await RedisServer.start();
}, 30_000);

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

afterAll(async () => {
  await server.stop();
});

/** A client as the service makes it (RedisConnection): no offline queue, no retries. */
function client(keyPrefix?: string): Redis {
  const c = new Redis(server.url, {
    keyPrefix,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 50,
  });
  c.on('error', () => undefined);
  closers.push(() => c.disconnect());
  return c;
}

async function connected(c: Redis): Promise<Redis> {
  if (c.status !== 'ready') await new Promise((r) => c.once('ready', r));
  return c;
}

async function forwarder(
  timeoutMs = 2000,
  graceMs = 500,
  keyPrefix?: string,
): Promise<CommandForwarder> {
  const f = new CommandForwarder({
    redis: await connected(client(keyPrefix)),
    instanceId: `fwd-${++n}`,
    timeoutMs,
    graceMs,
    log: quiet,
  });
  f.start();
  closers.push(() => f.stop());
  // The reply reader's connection is up before the first command.
  await until(
    'the reply reader',
    () => (f as unknown as { reader: Redis }).reader.status === 'ready',
  );
  return f;
}

async function inbox(
  handler: CommandHandler,
  instanceId = `writer-${++n}`,
  keyPrefix?: string,
): Promise<WriterInbox> {
  const i = new WriterInbox({
    redis: await connected(client(keyPrefix)),
    instanceId,
    handler,
    blockMs: 200,
    log: quiet,
  });
  closers.push(() => i.stop());
  return i;
}

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const start = Date.now();
  while (!ok()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function timed<T>(p: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const start = Date.now();
  try {
    const value = await p;
    return { ms: Date.now() - start, value };
  } catch (error) {
    return { ms: Date.now() - start, error };
  }
}

const place: ForwardedCommand = {
  op: 'orders.place',
  args: { market_id: 'MKT-1', side: 'yes', price: 55, quantity: 3 },
  idempotency: { ownerId: 'test:usr_1', key: 'k-1' },
};

describe('command forwarding', () => {
  it('round-trips on clients with a key prefix (REDIS_KEY_PREFIX): the group is on the prefixed stream', async () => {
    const prefix = `dep${++n}:`;
    const writer = await inbox(async (_world, cmd) => ({ ran: cmd.op }), undefined, prefix);
    writer.serve('test');
    const f = await forwarder(2000, 500, prefix);
    expect(await f.forward('test', place)).toEqual({ ran: place.op });
    // Every key of the exchange carries the prefix: nothing was made beside it.
    const raw = await connected(client());
    expect((await raw.keys('*')).filter((k) => !k.startsWith(prefix))).toEqual([]);
  });

  it('runs a command on the writer and returns its result; a DomainError comes back as thrown', async () => {
    const seen: [string, ForwardedCommand][] = [];
    const writer = await inbox(async (world, cmd) => {
      seen.push([world, cmd]);
      if (cmd.op === 'orders.cancel') {
        throw new DomainError(
          'ORDER_NOT_OPEN',
          'Order ord_9 is no longer open',
          { order_id: 'ord_9' },
          { 'X-Test': 'kept' },
        );
      }
      return { order_id: 'ord_1', status: 'RESTING', args: cmd.args };
    });
    writer.serve('test');
    const f = await forwarder();
    expect(await f.forward('test', place)).toEqual({
      order_id: 'ord_1',
      status: 'RESTING',
      args: place.args,
    });
    expect(seen).toEqual([['test', place]]);

    const refused = await timed(f.forward('test', { op: 'orders.cancel', args: { id: 'ord_9' } }));
    expect(refused.error).toBeInstanceOf(DomainError);
    const e = refused.error as DomainError;
    expect([e.status, e.code, e.message, e.details, e.headers]).toEqual([
      409,
      'ORDER_NOT_OPEN',
      'Order ord_9 is no longer open',
      { order_id: 'ord_9' },
      { 'X-Test': 'kept' },
    ]);
    // Anything but a DomainError is a 500 without its message (it could hold internals).
    const broken = await inbox(() => {
      throw new Error('secret internals');
    });
    broken.serve('wld_broken');
    const crashed = await timed(f.forward('wld_broken', place));
    expect([(crashed.error as DomainError).code, (crashed.error as DomainError).message]).toEqual([
      'INTERNAL',
      'Internal error',
    ]);
    // Answered entries are acknowledged and gone from the stream.
    expect(await writerRedis(writer).xlen(commandStream('test'))).toBe(0);
  });

  it('keeps the stream order of commands, and answers many callers at once', async () => {
    const order: number[] = [];
    const writer = await inbox((_, cmd) => {
      order.push((cmd.args as { i: number }).i);
      return (cmd.args as { i: number }).i * 2;
    });
    writer.serve('test');
    const f = await forwarder();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => f.forward('test', { op: 'x', args: { i } })),
    );
    expect(answers).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
    expect(order).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('answers 503 WRITER_UNAVAILABLE with Retry-After at once when no writer is present', async () => {
    const f = await forwarder(2000);
    const r = await timed(f.forward('wld_nobody', place));
    expect(r.error).toBeInstanceOf(WriterUnavailableError);
    const e = r.error as WriterUnavailableError;
    expect([e.status, e.code, e.headers['Retry-After']]).toEqual([503, 'WRITER_UNAVAILABLE', '1']);
    expect(r.ms).toBeLessThan(500);
    // Nothing was queued for a later writer.
    expect(await writerRedis(f).exists(commandStream('wld_nobody'))).toBe(0);
  });

  it('answers 503 after the deadline plus grace when the present writer does not answer, and never runs it later', async () => {
    const f = await forwarder(400, 300);
    const redis = writerRedis(f);
    // A writer that just died: its presence has not expired yet.
    await redis.set(writerPresenceKey('wld_gap'), 'dead-writer', 'PX', 3000);
    const r = await timed(f.forward('wld_gap', place));
    expect(r.error).toBeInstanceOf(WriterUnavailableError);
    // 700 ms, read with Date.now(): Node's timers count from the event loop's cached millisecond,
    // which can be up to 1 ms before `start` (a fresh-clone run measured 699).
    expect(r.ms).toBeGreaterThanOrEqual(699);
    expect(r.ms).toBeLessThan(1500);
    // The next writer takes over after the caller was answered 503: the command is dropped.
    expect(await redis.xlen(commandStream('wld_gap'))).toBe(1);
    const ran: ForwardedCommand[] = [];
    const next = await inbox((_, cmd) => void ran.push(cmd));
    next.serve('wld_gap');
    await untilAsync(async () => (await redis.xlen(commandStream('wld_gap'))) === 0);
    // And a command sent now runs: the new writer serves.
    expect(await f.forward('wld_gap', { op: 'after', args: {} })).toBeNull();
    expect(ran.map((c) => c.op)).toEqual(['after']);
  });

  it('runs a command queued during a failover when the next writer takes over within its deadline', async () => {
    const f = await forwarder(3000, 500);
    const redis = writerRedis(f);
    await redis.set(writerPresenceKey('wld_failover'), 'dead-writer', 'PX', 3000);
    const pending = timed(f.forward('wld_failover', place));
    await new Promise((r) => setTimeout(r, 300));
    const next = await inbox(() => ({ order_id: 'ord_2' }));
    next.serve('wld_failover');
    const r = await pending;
    expect(r.value).toEqual({ order_id: 'ord_2' });
  });

  it('does not run again a command the dead writer read but never answered; its caller gets 503 at once', async () => {
    const f = await forwarder(5000, 500);
    let release: () => void = () => undefined;
    const ranOnFirst: string[] = [];
    const first = await inbox((_, cmd) => {
      ranOnFirst.push(cmd.op);
      // Dies while running it (it may have committed): it never answers.
      return new Promise<void>((r) => (release = r));
    }, 'writer-first');
    first.serve('wld_dead');
    const pending = timed(f.forward('wld_dead', place));
    await until('the first writer to run it', () => ranOnFirst.length === 1);
    // It dies: it runs nothing more, and its connections go, as a kill -9 would take them.
    (first as unknown as { stopped: boolean }).stopped = true;
    const admin = await connected(client());
    const ids = [String(await writerRedis(first).client('ID'))];
    const list = String(await admin.client('LIST'));
    for (const line of list.split('\n')) {
      if (line.includes('name=svc-inbox:writer-first')) ids.push(/\bid=(\d+)/.exec(line)![1]);
    }
    expect(ids).toHaveLength(2);
    for (const id of ids) await admin.client('KILL', 'ID', id);

    const ranOnNext: string[] = [];
    const next = await inbox((_, cmd) => void ranOnNext.push(cmd.op), 'writer-next');
    next.serve('wld_dead');
    const r = await pending;
    expect(r.error).toBeInstanceOf(WriterUnavailableError);
    expect(r.ms).toBeLessThan(3000);
    expect(ranOnNext).toEqual([]);
    release();
  });

  it('logs no failed read while its readers connect at boot', async () => {
    const warnings: string[] = [];
    const log = { ...quiet, warn: (m: string) => void warnings.push(m) };
    const f = new CommandForwarder({
      redis: await connected(client()),
      instanceId: `fwd-${++n}`,
      timeoutMs: 2000,
      graceMs: 500,
      log,
    });
    f.start();
    closers.push(() => f.stop());
    const i = new WriterInbox({
      redis: await connected(client()),
      instanceId: `writer-${++n}`,
      handler: () => 'ok',
      blockMs: 200,
      log,
    });
    closers.push(() => i.stop());
    i.serve('wld_boot');
    expect(await f.forward('wld_boot', place)).toBe('ok');
    expect(warnings).toEqual([]);
  });

  it('answers 503 within the deadline plus grace while Redis is frozen; the command is never run after it thaws', async () => {
    const ran: string[] = [];
    const writer = await inbox((_, cmd) => {
      ran.push(cmd.op);
      return 'ok';
    });
    writer.serve('wld_frozen');
    const f = await forwarder(600, 300);
    expect(await f.forward('wld_frozen', { op: 'before', args: {} })).toBe('ok');
    // Connections stay open and nothing answers (SIGSTOP, as DEBUG SLEEP would) for 2.5 s.
    server.freeze();
    const thawed = new Promise<void>((r) =>
      setTimeout(() => {
        server.thaw();
        r();
      }, 2500),
    );
    let r: Awaited<ReturnType<typeof timed>>;
    try {
      r = await timed(f.forward('wld_frozen', { op: 'frozen', args: {} }));
    } finally {
      await thawed;
    }
    expect(r.error).toBeInstanceOf(WriterUnavailableError);
    expect((r.error as WriterUnavailableError).headers['Retry-After']).toBe('1');
    expect(r.ms).toBeGreaterThanOrEqual(850);
    expect(r.ms).toBeLessThan(2000);
    // The script queued in the frozen Redis's socket ran at the thaw, past the command's
    // deadline: it added nothing, and the writer serves the next command.
    await untilAsync(
      async () => (await timed(f.forward('wld_frozen', { op: 'after', args: {} }))).value === 'ok',
    );
    expect(ran).toEqual(['before', 'after']);
    expect(await writerRedis(f).xlen(commandStream('wld_frozen'))).toBe(0);
  }, 20_000);

  it('the writer drops unrun and unanswered an entry it reads after its absolute deadline', async () => {
    const ran: string[] = [];
    const writer = await inbox((_, cmd) => void ran.push(cmd.op));
    const redis = writerRedis(writer);
    const [s] = await redis.time();
    // A generous time to live from its arrival, but the caller's absolute deadline has passed
    // (it began waiting before a freeze that delayed the entry's arrival).
    await redis.xadd(
      commandStream('wld_backlog'),
      '*',
      'id',
      'c-late',
      'reply',
      'reply:{late}',
      'ttl',
      '60000',
      'dl',
      String(Number(s) * 1000 - 1),
      'cmd',
      JSON.stringify({ op: 'late', args: {} }),
    );
    writer.serve('wld_backlog');
    await untilAsync(async () => (await redis.xlen(commandStream('wld_backlog'))) === 0);
    const f = await forwarder(2000, 500);
    expect(await f.forward('wld_backlog', { op: 'next', args: {} })).toBeNull();
    expect(ran).toEqual(['next']);
    expect(await redis.exists('reply:{late}')).toBe(0);
  });

  it('fails fast with 503 while Redis is down (not a hang), and forwards again once it is back', async () => {
    const writer = await inbox(() => 'ok');
    writer.serve('test');
    const f = await forwarder(2000, 500);
    expect(await f.forward('test', place)).toBe('ok');
    await server.stop();
    try {
      for (let i = 0; i < 3; i++) {
        const r = await timed(f.forward('test', place));
        expect(r.error).toBeInstanceOf(WriterUnavailableError);
        expect(r.ms).toBeLessThan(1000);
      }
    } finally {
      await server.start();
    }
    // A fresh, empty Redis: the writer makes its group and presence again, the reader reconnects.
    await untilAsync(async () => {
      const r = await timed(f.forward('test', place));
      return r.value === 'ok';
    }, 10_000);
  }, 30_000);
});

/** The inbox's or forwarder's own command connection. */
function writerRedis(x: WriterInbox | CommandForwarder): Redis {
  return (x as unknown as { opts: { redis: Redis } }).opts.redis;
}

async function untilAsync(ok: () => Promise<boolean>, ms = 5000): Promise<void> {
  const start = Date.now();
  while (!(await ok())) {
    if (Date.now() - start > ms) throw new Error(`timed out after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
