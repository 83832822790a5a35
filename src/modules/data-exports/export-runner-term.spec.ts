import { afterAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorldName } from '../../common/environment.js';
import type { SqlConnection } from '../../common/sql/sql-connection.js';
import type { ConfigService } from '../../config/config.service.js';
import { FencedError } from '../cluster/cluster-errors.js';
import { fenceSync } from '../cluster/fence.js';
import type { EngineRegistry } from '../trading/engine-registry.js';
import type { WorldDatabases } from '../worlds/world-databases.service.js';
import { WorldScoped } from '../worlds/world-scoped.js';
import { DataExportsRepository } from './data-exports.repository.js';
import { ExportRunner } from './export-runner.service.js';

/**
 * Cluster mode, a writer deposed while alive: its export jobs stop here, and it can mark none
 * READY (the fence runs in that update's transaction); the new writer re-queues and runs them.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** An engine database with the export jobs' table and, attached, the platform's writers. */
function database(): SqlConnection {
  const db = new Database(':memory:');
  db.exec(`CREATE TABLE data_exports (id TEXT PRIMARY KEY, user_id TEXT, dataset TEXT, format TEXT,
    start TEXT, "end" TEXT, market_ids TEXT, status TEXT, last_rowid INTEGER, counted_rows INTEGER,
    record_count INTEGER, size_bytes INTEGER, sha256 TEXT, error TEXT, created_at TEXT,
    ready_at TEXT, expires_at TEXT)`);
  db.exec(`ATTACH ':memory:' AS platform`);
  db.exec('CREATE TABLE platform.cluster_writers (world TEXT PRIMARY KEY, epoch INTEGER)');
  db.exec(`INSERT INTO platform.cluster_writers VALUES ('test', 1)`);
  db.exec(`INSERT INTO data_exports (id, user_id, dataset, format, status, created_at)
    VALUES ('exp_1', 'usr_1', 'LEDGER', 'CSV', 'RUNNING', '2027-01-01T00:00:00Z')`);
  return db as unknown as SqlConnection;
}

const figures = {
  record_count: 3,
  size_bytes: 10,
  sha256: 'x',
  ready_at: '2027-01-01T00:00:01Z',
  expires_at: '2027-01-08T00:00:01Z',
};

/**
 * An ExportRunner, bootstrapped, over `engines` (the registry's writer role and term hooks), each
 * world's jobs on the database `dbOf` gives it (by default a new one per world), in a DATA_DIR of
 * its own.
 */
function startedRunner(
  engines: Pick<EngineRegistry, 'writes' | 'onTermStart' | 'onTermEnd'>,
  dbOf: (world: WorldName) => SqlConnection = () => database(),
): ExportRunner {
  const dataDir = mkdtempSync(join(tmpdir(), 'export-term-'));
  dirs.push(dataDir);
  const worlds = {
    perWorld: <T>(make: (db: SqlConnection, world: WorldName) => T) =>
      new WorldScoped<T>((w) => make(dbOf(w), w)),
    onLoad: () => undefined,
  } as unknown as WorldDatabases;
  const config = { values: { dataDir, exportSweepMs: 60_000 } } as unknown as ConfigService;
  const runner = new ExportRunner(
    worlds,
    config,
    { for: () => ({ nowDate: () => new Date(), now: () => Date.now() }) } as never,
    {} as never,
    {} as never,
    { ...engines, fence: () => null } as unknown as EngineRegistry,
  );
  runner.onApplicationBootstrap();
  return runner;
}

describe('export jobs when a writer term ends', () => {
  it('a fenced writer cannot mark a job READY: the update rolls back and the job stays RUNNING', () => {
    const db = database();
    const repo = new DataExportsRepository(db);
    // Another instance took the world over (epoch 2): this one's epoch 1 is fenced off.
    db.exec(`UPDATE platform.cluster_writers SET epoch = 2 WHERE world = 'test'`);
    expect(() => repo.ready('exp_1', figures, (c) => fenceSync(c, 'test', 1))).toThrow(FencedError);
    expect(repo.get('exp_1')!.status).toBe('RUNNING');
    // The writer of epoch 2 marks it.
    expect(repo.ready('exp_1', figures, (c) => fenceSync(c, 'test', 2))).toBe(true);
    expect(repo.get('exp_1')!.status).toBe('READY');
  });

  it('stops the jobs of the world whose term ended, and only those', async () => {
    let termEnd: (world: WorldName) => void = () => undefined;
    const runner = startedRunner({
      writes: () => true,
      onTermStart: () => undefined,
      onTermEnd: (cb: (world: WorldName) => void) => (termEnd = cb),
    });
    const stopped: string[] = [];
    const running = (runner as unknown as { running: Map<string, object> }).running;
    const job = (world: WorldName, id: string) => {
      let finish: () => void = () => undefined;
      const entry = {
        world,
        userId: 'usr_1',
        cancelled: false,
        deposed: false,
        thread: {
          stop: () => {
            stopped.push(id);
            finish();
            return Promise.resolve();
          },
        },
        done: new Promise<void>((r) => (finish = r)).then(() => void running.delete(id)),
      };
      running.set(id, entry);
      return entry;
    };
    const paper = job('test', 'exp_paper');
    const live = job('live', 'exp_live');
    termEnd('test');
    await paper.done;
    expect(stopped).toEqual(['exp_paper']);
    expect([paper.deposed, paper.cancelled]).toEqual([true, true]);
    expect([live.deposed, live.cancelled]).toEqual([false, false]);
    expect(runner.isRunning('exp_live')).toBe(true);
    expect(runner.isRunning('exp_paper')).toBe(false);
    await runner.onModuleDestroy();
  });

  it('an ephemeral world opened here before its term began re-queues its cut-short jobs when the term begins', async () => {
    // After a restart, the first request to a world opens it (its sandbox-scenario stage) before
    // the forward stage campaigns for it: its jobs' rows are read while no instance writes it.
    const world = 'wld_termstart' as WorldName;
    const worldDb = database();
    let writer = false;
    let termStart: (world: WorldName) => void = () => undefined;
    const runner = startedRunner(
      {
        writes: (w: WorldName) => w !== world || writer,
        onTermStart: (cb: (world: WorldName) => void) => (termStart = cb),
        onTermEnd: () => undefined,
      },
      (w) => (w === world ? worldDb : database()),
    );
    // Nothing starts a job in this test: only the world's rows are looked at.
    await runner.onModuleDestroy();
    const repo = runner.parts.repos.get(world);
    expect(repo.get('exp_1')!.status).toBe('RUNNING');
    writer = true;
    termStart(world);
    expect(repo.get('exp_1')!.status).toBe('QUEUED');
  });
});
