import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuilt } from '../support/process.js';
import { startOrdersApp, TRADABLE, trader, type Trader } from '../support/orders.js';
import type { Running } from '../support/harness.js';
import { EXPORT_SCOPES, exportsClient, seedTrades, sha256, type Json } from '../support/exports.js';
import { openDatabaseOf } from '../support/test-database.js';

/**
 * Enough rows that an export outlasts each step a case takes while it runs: the main thread
 * blocked until the file grows 1 MB (a CSV trade row is about 150 bytes: 1 MB is about 7,000 rows),
 * a table renamed or the app closed once 100 KB are written. 200,000 rows were four full exports
 * of 4,000 batches each: over a minute of the PostgreSQL pass, for no rule about size.
 */
const ROWS = 50_000;
const body = {
  dataset: 'TRADES',
  format: 'CSV',
  start: '2026-01-01T00:00:00Z',
  end: '2026-12-31T00:00:00Z',
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const size = (path: string): number => (existsSync(path) ? statSync(path).size : 0);

/** Waits (without blocking the app, which shares this thread) until `ok()` or the deadline. */
async function waitFor(ok: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/**
 * Exports run in worker threads: one app in this process (the worker program is the build's
 * dist/modules/data-exports/export-worker.js), 50,000 seeded trades. Rows are written while the
 * main thread is blocked; a worker that fails mid-export leaves a FAILED job with its error and
 * no file; closing the app terminates a running worker at once, and the next boot re-queues the
 * job and finishes it in full.
 */
describe('data exports: worker threads', () => {
  let svc: Running;
  let ex: ReturnType<typeof exportsClient>;
  let a: Trader;
  const paperDir = () => join(svc.dataDir, 'exports', 'paper');
  const files = (id: string) => readdirSync(paperDir()).filter((f) => f.startsWith(id));

  // The export jobs' worker thread runs the build's compiled program (a no-op after the build).
  beforeAll(() => ensureBuilt(), 180_000);
  beforeAll(async () => {
    svc = await startOrdersApp({ env: { EXPORT_BATCH_ROWS: '50' } });
    ex = exportsClient(svc);
    a = await trader(svc, 'a@worker-exports.test', { scopes: EXPORT_SCOPES });
    await seedTrades(svc.dataDir, ROWS, TRADABLE[0].id, { createdAt: '2026-06-01T00:00:00.000Z' });
  }, 120_000);
  afterAll(async () => {
    await svc?.close();
  });

  it('writes rows while the main thread is blocked: the export does not run on it', async () => {
    const created = await ex.created(a, body);
    const part = join(paperDir(), `${created.id}.csv.part`);
    await waitFor(() => size(part) > 0, 'the partial file');
    // Block this thread (the app's main thread) until the file has grown by 1 MB. On the main
    // thread an export could add at most the one write already handed to the file system.
    const from = size(part);
    const deadline = Date.now() + 20_000;
    let grew = 0;
    while (grew < 1024 * 1024 && Date.now() < deadline && existsSync(part)) {
      grew = size(part) - from;
    }
    expect(grew).toBeGreaterThanOrEqual(1024 * 1024);
    const done = await ex.until(a, created.id, 'READY', 60_000);
    expect(done.record_count).toBe(ROWS);
    const file = readFileSync(join(paperDir(), `${created.id}.csv`));
    expect(file.length).toBe(done.size_bytes);
    expect(sha256(file)).toBe(done.sha256);
    expect((await ex.remove(a, created.id)).status).toBe(204);
  });

  it('a worker that fails mid-export leaves the job FAILED with its error and no file', async () => {
    const created = await ex.created(a, body);
    const part = join(paperDir(), `${created.id}.csv.part`);
    await waitFor(() => size(part) > 100_000, 'a partial file with rows');
    // The table the worker reads disappears under it: its next batch fails.
    const db = openDatabaseOf(svc.dataDir, 'paper');
    db.exec('ALTER TABLE trades RENAME TO trades_moved');
    let failed: Json;
    try {
      await waitFor(() => !existsSync(part), 'the partial file to go');
      failed = (await ex.get(a, created.id)).body;
      for (let i = 0; failed.status === 'RUNNING' && i < 200; i++) {
        await sleep(10);
        failed = (await ex.get(a, created.id)).body;
      }
    } finally {
      db.exec('ALTER TABLE trades_moved RENAME TO trades');
      db.close();
    }
    expect(failed).toMatchObject({ status: 'FAILED', record_count: null, sha256: null });
    expect(failed.error).toMatch(/no such table: trades|relation "trades" does not exist/);
    expect(files(created.id)).toEqual([]);
    // The runner carries on: the next export runs in a new worker and is READY in full.
    const next = await ex.created(a, body);
    expect((await ex.until(a, next.id, 'READY', 60_000)).record_count).toBe(ROWS);
    for (const id of [created.id, next.id]) expect((await ex.remove(a, id)).status).toBe(204);
  });

  it('closing the app terminates a running worker at once; the next boot re-queues the job and finishes it', async () => {
    const created = await ex.created(a, body);
    const part = join(paperDir(), `${created.id}.csv.part`);
    await waitFor(() => size(part) > 100_000, 'a partial file with rows');
    const dataDir = svc.dataDir;
    const t0 = Date.now();
    await svc.close({ keepData: true });
    // A worker left running would keep writing: the partial file is gone and stays gone.
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(existsSync(part)).toBe(false);
    await sleep(200);
    expect(existsSync(part)).toBe(false);
    const jobs = openDatabaseOf(dataDir, 'paper', { readonly: true });
    const row = jobs.prepare('SELECT status FROM data_exports WHERE id = ?').get(created.id);
    jobs.close();
    expect(row).toEqual({ status: 'RUNNING' });

    svc = await startOrdersApp({ dataDir });
    ex = exportsClient(svc);
    const done = await ex.until(a, created.id, 'READY', 60_000);
    expect(done.record_count).toBe(ROWS);
    const file = readFileSync(join(paperDir(), `${created.id}.csv`));
    expect(sha256(file)).toBe(done.sha256);
    expect(svc.logs.some((l) => /export\(s\) cut short re-queued/.test(l))).toBe(true);
  }, 120_000);
});
