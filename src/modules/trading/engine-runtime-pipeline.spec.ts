import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Logger } from '@nestjs/common';
import pg from 'pg';
import { startServices, type Services } from '../../../test/support/services.js';
import { ManualClock } from '../../common/clock/clock.js';
import { PgSyncConnection } from '../../common/sql/pg-sync-connection.js';
import {
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  openDatabase,
  postgresOptions,
} from '../../database/databases.js';
import { runDeferred } from '../../common/sql/sql-connection.js';
import { FencedError, WriterUnavailableError } from '../cluster/cluster-errors.js';
import { deferredFenceStatement, isFenceRefusal } from '../cluster/fence.js';
import { EngineRuntime } from './engine-runtime.js';
import { InProcessEventBus, type CommittedEvents } from './event-bus.js';
import { TradingRepository } from './trading.repository.js';
import { restingBuy } from '../../../test/support/engine-commands.js';

/**
 * The pipelined group commit on a real PostgreSQL (issue 24): a batch's transaction is sent
 * without blocking the thread, the next batch forms while it is in flight and is sent when it
 * has answered; a failed commit refuses the batch formed on top of it too.
 */
let services: Services;
let admin: pg.Client;
const open: PgSyncConnection[] = [];

beforeAll(async () => {
  services = await startServices();
  const ds = await openDatabase(
    postgresOptions('paper', services.databaseUrl, ENGINE_ENTITIES, ENGINE_MIGRATIONS),
  );
  await ds.destroy();
  admin = new pg.Client({
    connectionString: services.databaseUrl,
    options: '-c search_path=paper',
  });
  await admin.connect();
}, 120_000);

beforeEach(async () => {
  await admin.query(
    'TRUNCATE orders, trades, positions, ledger, accounts, markets, idempotency_effects, webhook_spool CASCADE',
  );
  await admin.query(
    `INSERT INTO markets (id, slug, title, description, category, status, close_time,
       reference_price, volume, created_at, updated_at)
     VALUES ('mkt_a', 'a', 'A', '', 'test', 'OPEN', '2099-01-01T00:00:00.000Z', 50, 0,
       '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
  );
});

afterEach(async () => {
  for (const db of open.splice(0)) db.close();
  await admin.query('ROLLBACK').catch(() => undefined);
});

afterAll(async () => {
  await admin?.end();
  await services?.stop();
}, 60_000);

const log = {
  log: () => undefined,
  warn: () => undefined,
  error: () => undefined,
} as unknown as Logger;
let seq = 0;
const ids = { next: (p: string) => `${p}${Date.now()}_${++seq}` };

function runtime() {
  const db = new PgSyncConnection(services.databaseUrl, 'paper');
  open.push(db);
  const repo = new TradingRepository(db, 'test', 'house', () => ids.next('txn'));
  const bus = new InProcessEventBus();
  const published: CommittedEvents[] = [];
  bus.stream.subscribe((b) => published.push(b));
  const rt = new EngineRuntime('test', repo, new ManualClock(0), ids, bus, log, null, 1_000_000);
  rt.ensureAccount('u1');
  published.length = 0;
  return { rt, published };
}

const order = restingBuy;

/** The end of this event-loop turn: a batch run in it has been sent (or committed). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Holds every commit that inserts an order until `release` (another session locks the table). */
async function holdOrders(): Promise<{ release: () => Promise<void> }> {
  await admin.query('BEGIN');
  await admin.query('LOCK TABLE orders IN EXCLUSIVE MODE');
  return { release: async () => void (await admin.query('COMMIT')) };
}

function settled(p: Promise<unknown>): { done: boolean; error: unknown } {
  const state = { done: false, error: undefined as unknown };
  p.then(
    () => (state.done = true),
    (err: unknown) => {
      state.done = true;
      state.error = err;
    },
  );
  return state;
}

async function storedOrderIds(): Promise<string[]> {
  const r = await admin.query<{ id: string }>('SELECT id FROM orders ORDER BY row_seq');
  return r.rows.map((row) => row.id);
}

const acceptedIds = (batches: CommittedEvents[]) =>
  batches.flatMap((b) =>
    b.events.flatMap((e) => (e.type === 'order.accepted' ? [e.order.id] : [])),
  );

describe('pipelined group commit on PostgreSQL', () => {
  it('a second batch forms while the first commit is in flight, and commits after it in its own transaction', async () => {
    const { rt, published } = runtime();
    const hold = await holdOrders();
    const a = rt.runBatched(order('a'));
    const sa = settled(a);
    await turn(); // batch 1 is sent; its COMMIT waits for the lock, the thread does not
    const b = rt.runBatched(order('b'));
    const c = rt.runBatched(order('c'));
    const sb = settled(b);
    // The next batch ran on the engine holding the first (both open orders of the key).
    expect(rt.openOrderCount('key_1', 'u1')).toBe(3);
    await turn();
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Neither answered: batch 1 is not committed, batch 2 waits for it.
    expect(sa.done).toBe(false);
    expect(sb.done).toBe(false);
    expect(published).toHaveLength(0);
    expect(await storedOrderIds()).toEqual([]);
    await hold.release();
    const [ra, rb, rc] = await Promise.all([a, b, c]);
    const ida = ra.ok ? ra.order.id : '';
    const idb = rb.ok ? rb.order.id : '';
    const idc = rc.ok ? rc.order.id : '';
    // Two transactions, in order: batch 1 (a), then batch 2 (b and c).
    expect(published.map((p) => acceptedIds([p]))).toEqual([[ida], [idb, idc]]);
    expect(await storedOrderIds()).toEqual([ida, idb, idc]);
  });

  it('a failing first commit refuses both batches: neither is in the database or the engine', async () => {
    const { rt, published } = runtime();
    // The first batch's webhook spool row is refused by the database at COMMIT.
    await admin.query(`ALTER TABLE webhook_spool ADD CONSTRAINT no_boom CHECK (payload <> 'boom')`);
    try {
      let first = true;
      rt.spooler = () => {
        const payload = first ? 'boom' : 'fine';
        first = false;
        return payload;
      };
      const hold = await holdOrders();
      const a = rt.runBatched(order('a'));
      const sa = settled(a);
      await turn();
      const b = rt.runBatched(order('b'));
      const sb = settled(b);
      await turn();
      expect(rt.openOrderCount('key_1', 'u1')).toBe(2);
      await hold.release();
      await expect(a).rejects.toThrow(/no_boom/);
      await expect(b).rejects.toThrow(/no_boom/);
      expect(sa.error).toBeDefined();
      expect(sb.error).toBeDefined();
      // Nothing of either batch is stored, published or left in the rebuilt engine.
      expect(await storedOrderIds()).toEqual([]);
      expect((await admin.query('SELECT count(*)::int AS n FROM webhook_spool')).rows[0].n).toBe(0);
      expect(acceptedIds(published)).toEqual([]);
      expect(published.some((p) => p.rebuilt === true)).toBe(true);
      expect(rt.openOrderCount('key_1', 'u1')).toBe(0);
      expect(rt.committedReads().openOrders('u1')).toEqual([]);
      // The runtime goes on: the next order commits.
      const d = await rt.runBatched(order('d'));
      expect(d.ok).toBe(true);
      expect(await storedOrderIds()).toEqual([d.ok ? d.order.id : '']);
    } finally {
      await admin.query('ROLLBACK').catch(() => undefined);
      await admin.query('ALTER TABLE webhook_spool DROP CONSTRAINT no_boom');
    }
  });

  it('the order of batches on the bus is their commit order, at most one in flight', async () => {
    const { rt, published } = runtime();
    const all: Promise<unknown>[] = [];
    for (let t = 0; t < 30; t++) {
      for (let i = 0; i < 3; i++) all.push(rt.runBatched(order(`o${t}_${i}`)));
      await turn();
    }
    await Promise.all(all);
    const stored = await storedOrderIds();
    expect(stored).toHaveLength(90);
    expect(acceptedIds(published)).toEqual(stored);
    // Pipelined: batches formed while another was in flight joined into fewer, larger ones.
    expect(published.length).toBeLessThanOrEqual(30);
  });

  it('a synchronous command waits for the batch in flight, and runs on its committed state', async () => {
    const { rt, published } = runtime();
    const a = rt.runBatched(order('a'));
    await turn(); // in flight
    const r = rt.run(order('sync'));
    expect(r.ok).toBe(true);
    // The batch in flight landed first (published before the command's own commit).
    expect(published.map((p) => p.events[0]?.type)).toEqual(['order.accepted', 'order.accepted']);
    const ra = await a;
    const ids2 = [ra.ok ? ra.order.id : '', r.ok ? r.order.id : ''];
    expect(acceptedIds(published)).toEqual(ids2);
    expect(await storedOrderIds()).toEqual(ids2);
  });

  it('flush (shutdown, a world unloading) waits for the batch in flight and commits the one formed on top', async () => {
    const { rt, published } = runtime();
    const a = rt.runBatched(order('a'));
    await turn(); // in flight
    const b = rt.runBatched(order('b')); // forms on top, not sent
    rt.flush();
    // Both committed and published before flush returned, in order, one transaction each.
    expect(published).toHaveLength(2);
    const [ra, rb] = await Promise.all([a, b]);
    const both = [ra.ok ? ra.order.id : '', rb.ok ? rb.order.id : ''];
    expect(acceptedIds(published)).toEqual(both);
    expect(await storedOrderIds()).toEqual(both);
  });

  it('the fence goes with the COMMIT: the batch of a deposed writer is refused 503-class and nothing of it is stored', async () => {
    await admin.query('CREATE SCHEMA IF NOT EXISTS fencing');
    await admin.query(
      'CREATE TABLE IF NOT EXISTS fencing.cluster_writers (world varchar(40) PRIMARY KEY, epoch integer NOT NULL)',
    );
    await admin.query('DELETE FROM fencing.cluster_writers');
    await admin.query(`INSERT INTO fencing.cluster_writers VALUES ('test', 1)`);
    const { rt, published } = runtime();
    rt.fence = (db) => {
      const f = deferredFenceStatement('test', 1, 'fencing');
      runDeferred(db.prepare(f.sql), ...f.params);
    };
    rt.fenceRefusal = (err) => (isFenceRefusal(err) ? new FencedError('test', 1) : null);
    const a = await rt.runBatched(order('a'));
    expect(a.ok).toBe(true);
    // Another instance takes the world over: epoch 2.
    await admin.query(`UPDATE fencing.cluster_writers SET epoch = 2 WHERE world = 'test'`);
    const b = rt.runBatched(order('b'));
    await expect(b).rejects.toBeInstanceOf(FencedError);
    await expect(b).rejects.toBeInstanceOf(WriterUnavailableError);
    expect(await storedOrderIds()).toEqual([a.ok ? a.order.id : '']);
    expect(acceptedIds(published)).toEqual([a.ok ? a.order.id : '']);
    expect(rt.openOrderCount('key_1', 'u1')).toBe(1);
  });
});

describe('the pipelined group commit and the fence of applied Idempotency-Keys', () => {
  /** Two requests under one key, each its own claim of it (a peer's settle let the second in). */
  const first = { ownerId: 'test:u1', key: 'k-1', claimId: 'claim-1', claimedAt: 0 };
  const second = { ...first, claimId: 'claim-2' };

  it('a second request under the key while the first is in flight waits for its COMMIT, then is refused', async () => {
    const { rt } = runtime();
    const a = rt.runBatched(order('a'), first);
    await turn(); // in flight
    await expect(rt.runBatched(order('b'), second)).rejects.toMatchObject({
      code: 'IDEMPOTENT_REQUEST_APPLIED',
    });
    const placed = await a;
    const id = placed.ok ? placed.order.id : '';
    expect(await storedOrderIds()).toEqual([id]);
    const effects = await admin.query('SELECT idem_key, order_ids FROM idempotency_effects');
    expect(effects.rows).toEqual([{ idem_key: 'k-1', order_ids: JSON.stringify([id]) }]);
    expect(rt.openOrderCount('key_1', 'u1')).toBe(1);
  });

  it('the first failing at COMMIT takes the key back: the second runs and is the one stored', async () => {
    const { rt } = runtime();
    await admin.query(`ALTER TABLE webhook_spool ADD CONSTRAINT no_boom CHECK (payload <> 'boom')`);
    try {
      let firstBatch = true;
      rt.spooler = () => {
        const payload = firstBatch ? 'boom' : 'fine';
        firstBatch = false;
        return payload;
      };
      const a = rt.runBatched(order('a'), first);
      const sa = settled(a);
      await turn(); // in flight
      const b = await rt.runBatched(order('b'), second);
      expect(sa.done).toBe(true);
      await expect(a).rejects.toThrow(/no_boom/);
      expect(b.ok).toBe(true);
      expect(await storedOrderIds()).toEqual([b.ok ? b.order.id : '']);
      // And the key is now the second's: a third request under it is refused.
      await expect(
        rt.runBatched(order('c'), { ...first, claimId: 'claim-3' }),
      ).rejects.toMatchObject({ code: 'IDEMPOTENT_REQUEST_APPLIED' });
    } finally {
      await admin.query('ALTER TABLE webhook_spool DROP CONSTRAINT no_boom');
    }
  });
});
