import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DataSource, type Repository } from 'typeorm';
import { startPlatformServices, type PlatformServices } from '../../../test/support/services.js';
import { ManualClock } from '../../common/clock/clock.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { loadConfig } from '../../config/app-config.js';
import { ConfigService } from '../../config/config.service.js';
import {
  PLATFORM_ENTITIES,
  PLATFORM_MIGRATIONS,
  postgresOptions,
} from '../../database/databases.js';
import { lockKey } from '../cluster/lock-key.js';
import type { WorldClocks } from '../worlds/world-clocks.service.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import type { WorldStorage } from '../worlds/world-storage.js';
import { IdempotencyRecordEntity } from './entities/idempotency-record.entity.js';
import { IdempotencyService } from './idempotency.service.js';

/**
 * Idempotency-Key claims of several instances on one PostgreSQL database (issue 24): a peer may
 * settle a RUNNING record only once the instance that claimed it is gone, never because one of its
 * sessions dropped while its request still runs (the retry would run the request a second time).
 */
let services: PlatformServices;
let ds: DataSource;
let repo: Repository<IdempotencyRecordEntity>;
const clock = new ManualClock('2026-11-22T12:00:00.000Z');
const open: IdempotencyService[] = [];

beforeAll(async () => {
  services = await startPlatformServices();
  ds = new DataSource(
    postgresOptions('platform', services.databaseUrl, PLATFORM_ENTITIES, PLATFORM_MIGRATIONS),
  );
  await ds.initialize();
  repo = ds.getRepository(IdempotencyRecordEntity);
}, 120_000);

afterEach(async () => {
  for (const s of open.splice(0)) await s.onApplicationShutdown();
  await repo.clear(); // each case's instances are gone now: their records would be settled next
});

afterAll(async () => {
  await ds?.destroy();
  await services?.stop();
}, 60_000);

/** An instance's Idempotency-Key service on the shared database (no engine effect recorded). */
async function instance(): Promise<IdempotencyService> {
  const config = new ConfigService(loadConfig({ DATABASE_URL: services.databaseUrl }), {
    jwtSecret: 'x'.repeat(32),
    encryptionKey: '0'.repeat(64),
  });
  // The engines hold no effect of these keys: every lookup finds nothing.
  const noEffects = {
    driver: {
      databaseConnection: {
        prepare: () => ({ get: () => undefined, all: () => [], run: () => undefined }),
      },
    },
  } as unknown as DataSource;
  const svc = new IdempotencyService(
    ds,
    clock,
    config,
    new WorldDatabases(noEffects, noEffects, {} as WorldStorage),
    { for: () => clock } as unknown as WorldClocks,
  );
  open.push(svc);
  await svc.claimants.start();
  return svc;
}

function request(key: string): FastifyRequest {
  return {
    id: 'req_1',
    method: 'POST',
    url: '/api/v1/orders',
    headers: { 'idempotency-key': key },
    raw: { rawHeaders: ['Idempotency-Key', key] },
    rawBody: Buffer.from('{"quantity":1}'),
    svc: { userId: 'usr_1', world: 'test', environment: 'test' },
  } as unknown as FastifyRequest;
}

/** A reply that records what a replay sends. */
function reply(statusCode = 200): FastifyReply & { sent: { status: number; body: unknown } } {
  const r = {
    statusCode,
    headers: {} as Record<string, string>,
    sent: { status: 0, body: undefined as unknown },
    code(s: number) {
      r.sent.status = s;
      return r;
    },
    header(name: string, value: string) {
      r.headers[name.toLowerCase()] = value;
      return r;
    },
    getHeader: (name: string) => r.headers[name.toLowerCase()],
    type(t: string) {
      r.headers['content-type'] = t;
      return r;
    },
    send(body: unknown) {
      r.sent.body = body;
      return r;
    },
  };
  return r as unknown as FastifyReply & { sent: { status: number; body: unknown } };
}

/** The backends holding the advisory lock an instance takes to claim keys, with their names. */
async function claimHolders(instanceId: string): Promise<{ pid: number; name: string }[]> {
  const [ns, key] = lockKey(0x4944454d, instanceId);
  const r = await services.admin.query<{ pid: number; name: string }>(
    `SELECT l.pid, a.application_name AS name FROM pg_locks l
       JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::bigint::oid
        AND l.objid = $2::bigint::oid AND l.objsubid = 2`,
    [ns >>> 0, key >>> 0],
  );
  return r.rows;
}

async function until<T>(what: string, probe: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await probe();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function refusal(p: Promise<unknown>): Promise<DomainError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

describe('Idempotency-Key claims across instances on PostgreSQL', () => {
  it('a running instance whose claim session dropped keeps its key: the retry elsewhere is 409, then the first answer', async () => {
    const a = await instance();
    const b = await instance();
    const first = request('order-1');
    expect(await a.begin(first, reply())).toBe(false); // A runs the request

    // A's claim session is terminated while its request still runs (A itself lives on).
    const [held] = await claimHolders(a.claimants.instanceId);
    expect(held).toBeDefined();
    await services.admin.query('SELECT pg_terminate_backend($1)', [held.pid]);
    await until('the terminated session to end', async () => {
      const r = await services.admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [
        held.pid,
      ]);
      return r.rowCount === 0 ? true : null;
    });

    // B's sweep must not take A for gone, nor release A's key to a retry.
    expect(await b.settleOrphans()).toBe(0);
    const record = await repo.findOneBy({ ownerId: 'test:usr_1', idemKey: 'order-1' });
    expect(record?.state).toBe('RUNNING');
    expect(record?.claimedBy).toBe(a.claimants.instanceId);
    const retry = await refusal(b.begin(request('order-1'), reply()));
    expect(retry.code).toBe('IDEMPOTENCY_KEY_IN_USE');

    // A answers; the retry on B now replays that answer.
    const answered = reply(201);
    answered.header('content-type', 'application/json; charset=utf-8');
    await a.finish(first, answered, '{"id":"ord_1"}');
    const replay = reply();
    expect(await b.begin(request('order-1'), replay)).toBe(true);
    expect(replay.sent.status).toBe(201);
    expect(replay.sent.body).toBe('{"id":"ord_1"}');
    expect(replay.getHeader('idempotent-replayed')).toBe('true');

    // A took its claim lock again at once, on a session named after it.
    const again = await until('A to hold its claim lock again', async () => {
      const h = await claimHolders(a.claimants.instanceId);
      return h.length === 1 && h[0].pid !== held.pid ? h[0] : null;
    });
    expect(held.name).toBe(`svc-idempotency:${a.claimants.instanceId}`);
    expect(again.name).toBe(`svc-idempotency:${a.claimants.instanceId}`);
  }, 60_000);

  it('its instance session dropping instead leaves the key to it as well, and it takes that lock again', async () => {
    const a = await instance();
    const b = await instance();
    expect(await a.begin(request('order-3'), reply())).toBe(false);
    const name = `svc-idempotency-instance:${a.claimants.instanceId}`;
    const sessionOf = async () =>
      (
        await services.admin.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
          [name],
        )
      ).rows.map((r) => r.pid);
    const [pid] = await sessionOf();
    expect(pid).toBeDefined();
    await services.admin.query('SELECT pg_terminate_backend($1)', [pid]);
    expect(await b.settleOrphans()).toBe(0);
    expect((await refusal(b.begin(request('order-3'), reply()))).code).toBe(
      'IDEMPOTENCY_KEY_IN_USE',
    );
    await until('A to hold its instance lock again', async () => {
      const pids = await sessionOf();
      return pids.length === 1 && pids[0] !== pid ? true : null;
    });
    expect(await b.settleOrphans()).toBe(0);
  }, 60_000);

  it('an instance that is gone (every session of it ended) is settled: the retry runs', async () => {
    const a = await instance();
    const b = await instance();
    expect(await a.begin(request('order-2'), reply())).toBe(false);
    await b.begin(request('order-2'), reply()).then(
      () => {
        throw new Error('B ran a key A is running');
      },
      (e: unknown) => expect((e as DomainError).code).toBe('IDEMPOTENCY_KEY_IN_USE'),
    );
    // A stops: PostgreSQL ends its sessions and their locks (as for kill -9).
    await a.claimants.close();
    await until('A to be gone', async () =>
      (await claimHolders(a.claimants.instanceId)).length === 0 ? true : null,
    );
    expect(await b.settleOrphans()).toBe(1);
    expect(await repo.findOneBy({ ownerId: 'test:usr_1', idemKey: 'order-2' })).toBeNull();
    expect(await b.begin(request('order-2'), reply())).toBe(false); // the retry runs
  }, 60_000);
});
