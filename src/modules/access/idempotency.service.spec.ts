import { afterEach, describe, expect, it } from '@jest/globals';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, type Repository } from 'typeorm';
import { ManualClock } from '../../common/clock/clock.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { ConfigService } from '../../config/config.service.js';
import { loadConfig } from '../../config/app-config.js';
import {
  PLATFORM_DB,
  PLATFORM_ENTITIES,
  PLATFORM_MIGRATIONS,
  sqliteOptions,
} from '../../database/databases.js';
import { IdempotencyRecordEntity } from './entities/idempotency-record.entity.js';
import { IDEMPOTENCY_TTL_MS, IdempotencyService } from './idempotency.service.js';
import type { WorldClocks } from '../worlds/world-clocks.service.js';
import type { WorldStorage } from '../worlds/world-storage.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

/** A mutation carrying an Idempotency-Key, as the access pipeline hands it over. */
function request(key: string): FastifyRequest {
  return {
    method: 'POST',
    url: '/api/v1/orders',
    headers: { 'idempotency-key': key },
    raw: { rawHeaders: ['Idempotency-Key', key] },
    rawBody: Buffer.from('{"quantity":1}'),
    svc: { userId: 'usr_1', environment: 'test' },
  } as unknown as FastifyRequest;
}

const reply = {} as FastifyReply;

describe('IdempotencyService: an expired key reused by two identical requests at once', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  /**
   * The service over a real platform database, with the second read of a record held back
   * until `release()`: it reads the row as it was (expired) but answers only after the other
   * request has already replaced it, the interleaving that used to let both requests run.
   */
  async function setup(): Promise<{
    svc: IdempotencyService;
    clock: ManualClock;
    repo: Repository<IdempotencyRecordEntity>;
    release: () => void;
  }> {
    const dir = mkdtempSync(join(tmpdir(), 'svc-idem-'));
    const ds = new DataSource(
      sqliteOptions(PLATFORM_DB, dir, PLATFORM_ENTITIES, PLATFORM_MIGRATIONS),
    );
    await ds.initialize();
    cleanups.push(async () => {
      await ds.destroy();
      rmSync(dir, { recursive: true, force: true });
    });
    const real = ds.getRepository(IdempotencyRecordEntity);
    let calls = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const repo = new Proxy(real, {
      get(target, prop, receiver) {
        if (prop !== 'findOneBy') return Reflect.get(target, prop, receiver) as unknown;
        return async (where: object) => {
          const row = await target.findOneBy(where);
          if (++calls === 2) await gate; // the 2nd read: request B of the race
          return row;
        };
      },
    });
    const fakeDs = { getRepository: () => repo } as unknown as DataSource;
    const clock = new ManualClock('2026-11-22T12:00:00.000Z');
    const config = new ConfigService(loadConfig({}), {
      jwtSecret: 'x'.repeat(32),
      encryptionKey: '0'.repeat(64),
    });
    // begin() never reads the engines: their statements are prepared, never run.
    const noEngine = {
      driver: { databaseConnection: { prepare: () => ({}) } },
    } as unknown as DataSource;
    return {
      svc: new IdempotencyService(
        fakeDs,
        clock,
        config,
        new WorldDatabases(noEngine, noEngine, {} as WorldStorage),
        // No ephemeral world in these requests: every world reads the service clock.
        { for: () => clock } as unknown as WorldClocks,
      ),
      clock,
      repo: real,
      release,
    };
  }

  it('lets exactly one of them run; the other gets IDEMPOTENCY_KEY_IN_USE', async () => {
    const { svc, clock, repo, release } = await setup();
    // A first use of the key, answered and stored, then left to expire.
    const first = request('k-1');
    expect(await svc.begin(first, reply)).toBe(false);
    await repo.update({ idemKey: 'k-1' }, { state: 'DONE', responseStatus: 201 });
    clock.advance(IDEMPOTENCY_TTL_MS + 1000);

    // B reads the expired row, then waits; A reads it, replaces it and starts running.
    const b = svc.begin(request('k-1'), reply).then(
      (answered) => ({ answered, error: null as unknown }),
      (error: unknown) => ({ answered: false, error }),
    );
    await tick();
    const a = await svc.begin(request('k-1'), reply);
    expect(a).toBe(false); // A runs
    const running = await repo.findOneBy({ idemKey: 'k-1' });
    expect(running?.state).toBe('RUNNING');

    // B resumes with the stale (expired) row: it must not delete A's record and run as well.
    release();
    const outcome = await b;
    expect(outcome.error).toBeInstanceOf(DomainError);
    expect((outcome.error as DomainError).code).toBe('IDEMPOTENCY_KEY_IN_USE');
    const after = await repo.findBy({ idemKey: 'k-1' });
    expect(after).toHaveLength(1);
    expect(after[0].state).toBe('RUNNING'); // still A's record
    expect(after[0].createdAt).toBe(running?.createdAt);
  });
});
