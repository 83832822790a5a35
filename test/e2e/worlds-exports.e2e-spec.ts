import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expectContractError, type Running } from '../support/harness.js';
import { as, limit, startOrdersApp, TRADABLE, trader, type Trader } from '../support/orders.js';
import {
  download,
  EXPORT_SCOPES,
  exportsClient,
  seedTrades,
  sha256,
  WINDOW,
  type Json,
} from '../support/exports.js';
import { ensureBuilt } from '../support/process.js';
import { openDatabaseOf } from '../support/test-database.js';
import { deleteWorld, idsOf, openWorld, type WorldHandle } from '../support/worlds-groups.js';
import { ExportRunner } from '../../src/modules/data-exports/export-runner.service.js';
import { WorldDatabases } from '../../src/modules/worlds/world-databases.service.js';

const SEVEN_DAYS_S = 7 * 24 * 3600;

async function waitFor(ok: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * Data exports inside ephemeral worlds: the datasets read the world's own file, jobs and files
 * belong to the world (unseen from the paper world and other worlds), expiry follows the world's
 * clock, a reset with the world key and the world's delete remove them, and a job keeps running
 * when its world is unloaded. Slow jobs (EXPORT_BATCH_ROWS=10) for the mid-export cases.
 */
describe('data exports inside ephemeral worlds', () => {
  let svc: Running;
  let ex: ReturnType<typeof exportsClient>;
  let a: Trader;
  const [m1, m2] = TRADABLE;
  const worldDir = (w: WorldHandle) => join(svc.dataDir, 'exports', 'worlds', w.id);
  const worldFiles = (w: WorldHandle) => (existsSync(worldDir(w)) ? readdirSync(worldDir(w)) : []);
  const buy = async (t: Pick<Trader, 'key'>, qty: number): Promise<Json> => {
    const r = await as(t, `${svc.api}/orders`, {
      method: 'POST',
      json: limit(m1, 'BUY', 'YES', 99, qty),
    });
    expect(r.status).toBe(201);
    expect(r.body.filled_quantity).toBe(qty);
    return r.body;
  };
  /** Creates an export, waits until READY and answers its JSONL rows. */
  const rows = async (t: Pick<Trader, 'key'>, dataset: string): Promise<[Json, Json[]]> => {
    const done = await ex.until(
      t,
      (await ex.created(t, { dataset, format: 'JSONL', ...WINDOW })).id,
    );
    const text = (await download(svc, t, done.id)).body.toString('utf8').trimEnd();
    return [done, text === '' ? [] : text.split('\n').map((l) => JSON.parse(l) as Json)];
  };

  // The export jobs' worker thread runs the build's compiled program (a no-op after the build).
  beforeAll(() => ensureBuilt(), 180_000);
  beforeAll(async () => {
    svc = await startOrdersApp({ env: { EXPORT_BATCH_ROWS: '10' } });
    ex = exportsClient(svc);
    a = await trader(svc, 'a@worlds-exports.test', { scopes: EXPORT_SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it("an export in world A holds A's orders, fills and trades only; paper and world B never see A's job", async () => {
    const wA = await openWorld(svc, a);
    const wB = await openWorld(svc, a);
    const inA = [await buy(wA, 2), await buy(wA, 1)];
    const inB = await buy(wB, 3);
    const inPaper = await buy(a, 4);

    const [ordersJob, orders] = await rows(wA, 'ORDERS');
    expect(ordersJob.environment).toBe('test');
    expect(orders.map((o) => o.id).sort()).toEqual(inA.map((o) => o.id as string).sort());
    expect(orders.every((o) => o.self_trade_prevention === 'CANCEL_TAKER')).toBe(true);
    const [, fills] = await rows(wA, 'FILLS');
    const aFills = inA.flatMap((o) => (o.fills as Json[]).map((f) => f.id as string));
    expect(fills.map((f) => f.id).sort()).toEqual(aFills.sort());
    const [, trades] = await rows(wA, 'TRADES');
    const elsewhere = [inB, inPaper].flatMap((o) => (o.fills as Json[]).map((f) => f.id as string));
    expect(trades.map((t) => t.id)).toEqual(expect.arrayContaining(aFills));
    expect(trades.some((t) => elsewhere.includes(t.id as string))).toBe(false);
    // B's export holds B's order only.
    const [, bOrders] = await rows(wB, 'ORDERS');
    expect(bOrders.map((o) => o.id)).toEqual([inB.id]);

    // The job and its file are A's: 404 from the paper world and from B, listed in A only.
    expect(existsSync(join(worldDir(wA), `${ordersJob.id}.jsonl`))).toBe(true);
    for (const other of [a, wB] as Pick<Trader, 'key'>[]) {
      expectContractError(await ex.get(other, ordersJob.id), 404, 'NOT_FOUND');
      const dl = await download(svc, other, ordersJob.id);
      expect(dl.status).toBe(404);
      expect(idsOf((await ex.list(other, '?limit=100')).body)).not.toContain(ordersJob.id);
      expectContractError(await ex.remove(other, ordersJob.id), 404, 'NOT_FOUND');
    }
    expect((await ex.get(wA, ordersJob.id)).status).toBe(200);
    const paperJob = await ex.created(a, { dataset: 'ORDERS', format: 'CSV', ...WINDOW });
    expect(idsOf((await ex.list(wA, '?limit=100')).body)).not.toContain(paperJob.id);
    expectContractError(await ex.get(wA, paperJob.id), 404, 'NOT_FOUND');
    const paperCsv = (await download(svc, a, (await ex.until(a, paperJob.id)).id)).body.toString();
    expect(paperCsv.split('\n')[0]).toContain(',post_only,self_trade_prevention,created_at,');
    expect(paperCsv).toContain(inPaper.id as string);
    for (const o of [...inA, inB]) expect(paperCsv).not.toContain(o.id as string);
  });

  it("/data reads in a world serve the world's data: datasets, estimates, unknown markets", async () => {
    const w = await openWorld(svc, a);
    const datasets = await as(w, `${svc.api}/data/datasets`);
    expect(datasets.status).toBe(200);
    const orders = (datasets.body as Json[]).find((d) => d.dataset === 'ORDERS');
    expect(orders.fields).toContain('self_trade_prevention');
    await buy(w, 1);
    await buy(w, 1);
    const body = { dataset: 'ORDERS', format: 'CSV', ...WINDOW };
    const est = await ex.estimate(w, body);
    expect(est.status).toBe(200);
    expect(est.body.record_count).toBe(2);
    const fresh = await openWorld(svc, a);
    expect((await ex.estimate(fresh, body)).body.record_count).toBe(0);
    const paper = (await ex.estimate(a, body)).body.record_count as number;
    expect(paper).toBeGreaterThan(0);
    expect(paper).not.toBe(2);
    // A well-formed market id the world does not have is 404, as in the paper world.
    expectContractError(
      await ex.estimate(w, { ...body, market_ids: ['mkt_nosuchmarket'] }),
      404,
      'NOT_FOUND',
    );
    expect((await ex.estimate(w, { ...body, market_ids: [m2.id] })).body.record_count).toBe(0);
  });

  it("expires a READY export on the world's clock; the paper export of the same moment stays", async () => {
    const w = await openWorld(svc, a);
    const body = { dataset: 'LEDGER', format: 'CSV', ...WINDOW };
    const job = await ex.until(w, (await ex.created(w, body)).id);
    const paperJob = await ex.until(a, (await ex.created(a, body)).id);
    expect(Date.parse(job.expires_at) - Date.parse(job.ready_at)).toBe(SEVEN_DAYS_S * 1000);
    const file = join(worldDir(w), `${job.id}.csv`);
    expect(existsSync(file)).toBe(true);
    const early = await as(w, `${svc.api}/sandbox/clock`, {
      method: 'POST',
      json: { advance_seconds: SEVEN_DAYS_S - 60 },
    });
    expect(early.status).toBe(200);
    expect((await ex.get(w, job.id)).body.status).toBe('READY');
    const past = await as(w, `${svc.api}/sandbox/clock`, {
      method: 'POST',
      json: { advance_seconds: 61 },
    });
    expect(past.status).toBe(200);
    expect((await ex.get(w, job.id)).body.status).toBe('EXPIRED');
    expect(existsSync(file)).toBe(false);
    const dl = await download(svc, w, job.id);
    expect(dl.status).toBe(410);
    expect(JSON.parse(dl.body.toString()).error.code).toBe('EXPORT_EXPIRED');
    // The paper world's clock did not move: its export is READY with its file.
    expect((await ex.get(a, paperJob.id)).body.status).toBe('READY');
    expect((await download(svc, a, paperJob.id)).status).toBe(200);
  });

  it("a sandbox reset with the world key deletes the world's jobs and files, never the paper ones", async () => {
    const w = await openWorld(svc, a);
    const body = { dataset: 'LEDGER', format: 'JSONL', ...WINDOW };
    const job = await ex.until(w, (await ex.created(w, body)).id);
    const paperJob = await ex.until(a, (await ex.created(a, body)).id);
    expect(worldFiles(w)).toEqual([`${job.id}.jsonl`]);
    const reset = await as(w, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(reset.status).toBe(200);
    expect(reset.body.cleared.exports).toBe(1);
    expectContractError(await ex.get(w, job.id), 404, 'NOT_FOUND');
    expect((await ex.list(w)).body.data).toEqual([]);
    expect(worldFiles(w)).toEqual([]);
    expect((await ex.get(a, paperJob.id)).body.status).toBe('READY');
    expect((await download(svc, a, paperJob.id)).status).toBe(200);
  });

  it('deleting a world stops its running export and removes its files from disk', async () => {
    const w = await openWorld(svc, a);
    await seedTrades(svc.dataDir, 20_000, m1.id, {
      world: w.id as `wld_${string}`,
      prefix: 'fil_del',
    });
    const ready = await ex.until(
      w,
      (await ex.created(w, { dataset: 'LEDGER', format: 'CSV', ...WINDOW })).id,
    );
    const running = await ex.created(w, { dataset: 'TRADES', format: 'CSV', ...WINDOW });
    await waitFor(() => worldFiles(w).includes(`${running.id}.csv.part`), 'the partial file');
    expect(worldFiles(w)).toContain(`${ready.id}.csv`);
    await deleteWorld(svc, a, w);
    expect(existsSync(worldDir(w))).toBe(false);
    // The key is revoked; the job is gone with the world's file, and nothing writes it again.
    expectContractError(await ex.get(w, ready.id), 401, 'API_KEY_REVOKED');
    expectContractError(await ex.get(a, running.id), 404, 'NOT_FOUND');
    await new Promise((r) => setTimeout(r, 200));
    expect(existsSync(worldDir(w))).toBe(false);
  });

  it('a world unloaded mid-export finishes the job from its file', async () => {
    const w = await openWorld(svc, a);
    await seedTrades(svc.dataDir, 20_000, m1.id, {
      world: w.id as `wld_${string}`,
      prefix: 'fil_unl',
    });
    const job = await ex.created(w, { dataset: 'TRADES', format: 'CSV', ...WINDOW });
    await waitFor(() => worldFiles(w).includes(`${job.id}.csv.part`), 'the partial file');
    const databases = svc.app.get(WorldDatabases);
    databases.unload(w.id as `wld_${string}`);
    expect(databases.isLoaded(w.id as `wld_${string}`)).toBe(false);
    // Unloaded while the job runs (not after it finished).
    expect(svc.app.get(ExportRunner).isRunning(job.id as string)).toBe(true);
    // No request reaches the world meanwhile: the job finishes on its own.
    await waitFor(() => worldFiles(w).includes(`${job.id}.csv`), 'the finished file');
    const done = await ex.until(w, job.id);
    expect(done.record_count).toBeGreaterThanOrEqual(20_000);
    const dl = await download(svc, w, job.id);
    expect(dl.status).toBe(200);
    expect(sha256(dl.body)).toBe(done.sha256);
    expect(dl.body.toString().split('\n').length - 2).toBe(done.record_count);
  });

  // Last: it restarts the app.
  it("a world's job a restart cut short is re-queued when any request next opens the world, then READY in full", async () => {
    const w = await openWorld(svc, a);
    await seedTrades(svc.dataDir, 20_000, m1.id, {
      world: w.id as `wld_${string}`,
      prefix: 'fil_rst',
    });
    const job = await ex.created(w, { dataset: 'TRADES', format: 'CSV', ...WINDOW });
    await waitFor(() => worldFiles(w).includes(`${job.id}.csv.part`), 'the partial file');
    await svc.close({ keepData: true });
    svc = await startOrdersApp({ env: { EXPORT_BATCH_ROWS: '10' }, dataDir: svc.dataDir });
    ex = exportsClient(svc);
    // Nothing of the world is opened at boot: its job is still marked RUNNING in the world's file
    // (the shutdown removed the partial file), until a request opens the world.
    const statusInFile = (): unknown => {
      const file = openDatabaseOf(svc.dataDir, w.id, { readonly: true });
      try {
        return file.prepare('SELECT status FROM data_exports WHERE id = ?').get(job.id);
      } finally {
        file.close();
      }
    };
    expect(statusInFile()).toEqual({ status: 'RUNNING' });
    expect(worldFiles(w)).toEqual([]);
    // Any request opens the world (here a wallet read, no exports call): the job resumes then.
    expect((await as(w, `${svc.api}/wallet`)).status).toBe(200);
    await waitFor(
      () => (statusInFile() as { status: string }).status === 'READY',
      'the job READY in the world file before any exports read',
      60_000,
    );
    const done = await ex.until(w, job.id, 'READY', 60_000);
    expect(done.record_count).toBe(20_000);
    expect(worldFiles(w)).toEqual([`${job.id}.csv`]);
    const dl = await download(svc, w, job.id);
    expect(sha256(dl.body)).toBe(done.sha256);
  }, 120_000);
});
