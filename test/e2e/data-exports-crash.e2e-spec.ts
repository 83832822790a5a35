import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startService, type ServiceProcess } from '../support/process.js';
import { TRADABLE, trader, type Trader } from '../support/orders.js';
import { EXPORT_SCOPES, exportsClient, seedTrades, sha256, type Json } from '../support/exports.js';
import { dropDatabaseOf } from '../support/test-database.js';

const ROWS = 200_000;
const ENV = { SANDBOX_FEED_INTERVAL_MS: '0', RATE_LIMITS_ENABLED: 'false' };
const body = {
  dataset: 'TRADES',
  format: 'CSV',
  start: '2026-01-01T00:00:00Z',
  end: '2026-12-31T00:00:00Z',
};

/** The service process's resident memory (VmRSS of /proc/<pid>/status), in bytes. */
function rss(svc: ServiceProcess): number {
  const status = readFileSync(`/proc/${svc.proc.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) * 1024;
}

/**
 * The built service as a child process (node dist/main.js) on one DATA_DIR holding 200,000
 * trades, seeded through the engine database beside the running service (SQLite's WAL; in the
 * PostgreSQL pass its database on the pass's PostgreSQL, the export files still in DATA_DIR): an
 * export's memory stays flat, and a kill -9 in the middle of one leaves no short file under the
 * final name; the job is re-queued at the next boot and then READY with every row.
 */
describe('data exports: memory and crash safety (child process)', () => {
  let svc: ServiceProcess;
  let dataDir: string;
  let a: Trader;
  const dir = () => join(dataDir, 'exports', 'paper');

  beforeAll(async () => {
    svc = await startService({ env: ENV, testDatabase: true });
    dataDir = svc.dataDir;
    a = await trader(svc, 'a@crash-exports.test', { scopes: EXPORT_SCOPES });
    // Beside the running service, which the first test then uses (one boot fewer).
    await seedTrades(dataDir, ROWS, TRADABLE[0].id);
  }, 120_000);
  afterAll(async () => {
    await svc?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    await dropDatabaseOf(dataDir);
  });

  it('exports 200,000 rows with the service resident memory growing under 50 MB', async () => {
    const ex = exportsClient(svc);
    const before = rss(svc);
    let peak = before;
    const created = await ex.created(a, body);
    let done: Json;
    for (;;) {
      peak = Math.max(peak, rss(svc));
      done = (await ex.get(a, created.id)).body;
      if (done.status !== 'QUEUED' && done.status !== 'RUNNING') break;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(done).toMatchObject({ status: 'READY', record_count: ROWS });
    // Measured: VmRSS sampled every ~10 ms from before the create until READY.
    expect(peak - before).toBeLessThan(50 * 1024 * 1024);
    const file = readFileSync(join(dir(), `${done.id}.csv`));
    expect(file.length).toBe(done.size_bytes);
    expect(sha256(file)).toBe(done.sha256);
    await svc.stop();
  }, 120_000);

  it('a kill -9 mid-export leaves no READY short file; at restart the job is re-queued and READY in full', async () => {
    // Small batches so the export is still running when it is killed.
    svc = await startService({
      dataDir,
      env: { ...ENV, EXPORT_BATCH_ROWS: '20' },
      testDatabase: true,
    });
    let ex = exportsClient(svc);
    const created = await ex.created(a, body);
    const part = join(dir(), `${created.id}.csv.part`);
    const deadline = Date.now() + 20_000;
    while (!(existsSync(part) && statSync(part).size > 100_000) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
    }
    expect((await ex.get(a, created.id)).body.status).toBe('RUNNING');
    await svc.stop('SIGKILL');
    expect(existsSync(join(dir(), `${created.id}.csv`))).toBe(false);
    expect(existsSync(part)).toBe(true);

    svc = await startService({ dataDir, env: ENV, testDatabase: true });
    ex = exportsClient(svc);
    const done = await ex.until(a, created.id, 'READY', 60_000);
    expect(done.record_count).toBe(ROWS);
    expect(existsSync(part)).toBe(false);
    const file = readFileSync(join(dir(), `${created.id}.csv`));
    expect(sha256(file)).toBe(done.sha256);
    expect(file.toString('utf8').trimEnd().split('\n')).toHaveLength(ROWS + 1);
    expect(readdirSync(dir()).filter((f) => f.endsWith('.part'))).toEqual([]);
    expect(svc.stdout()).toMatch(/re-queued/);
  }, 120_000);
});
