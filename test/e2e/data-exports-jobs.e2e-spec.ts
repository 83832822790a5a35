import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expectContractError, type Running } from '../support/harness.js';
import { startOrdersApp, TRADABLE, trader, type Trader } from '../support/orders.js';
import {
  download,
  EXPORT_SCOPES,
  exportsClient,
  seedTrades,
  type Json,
} from '../support/exports.js';
import { ensureBuilt } from '../support/process.js';

/**
 * The job rules, with slow jobs: 19,000 seeded trades written 10 rows a batch (EXPORT_BATCH_ROWS=10,
 * one event-loop turn each), so a job runs long enough to be seen QUEUED and RUNNING.
 */
describe('data exports: jobs', () => {
  let svc: Running;
  let ex: ReturnType<typeof exportsClient>;
  let a: Trader;
  let b: Trader;
  const [m1, m2, m3] = TRADABLE;
  // Under the 20,000 rowids up to which a create counts its rows on the request thread
  // (export-runner.service.ts), with the 20 rows of `small`: a create here does not start a worker
  // thread just to count, as each did with the 200,000 rows of `huge` in the table (now seeded
  // only for the one case that needs them, last).
  const BIG_ROWS = 19_000;
  const big = {
    dataset: 'TRADES',
    format: 'CSV',
    market_ids: [m1.id],
    start: '2026-11-22T11:00:00Z',
    end: '2026-11-22T11:00:01Z',
  };
  const small = { ...big, market_ids: [m2.id] };
  // 200,000 rows at 10 a batch: 20,000 event-loop turns, seconds even on a quiet machine, so no
  // job of it finishes while the limit test creates its eleven.
  const huge = { ...big, market_ids: [m3.id] };
  const files = (id: string) =>
    readdirSync(join(svc.dataDir, 'exports', 'paper')).filter((f) => f.startsWith(id));
  const statuses = async (t: Trader): Promise<Map<string, string>> => {
    const res = await ex.list(t, '?limit=100');
    return new Map(res.body.data.map((e: Json) => [e.id as string, e.status as string]));
  };
  const clear = async (t: Trader) => {
    for (const id of (await statuses(t)).keys()) expect((await ex.remove(t, id)).status).toBe(204);
  };

  // The export jobs' worker thread runs the build's compiled program (a no-op after the build).
  beforeAll(() => ensureBuilt(), 180_000);
  beforeAll(async () => {
    svc = await startOrdersApp({ env: { EXPORT_BATCH_ROWS: '10' } });
    ex = exportsClient(svc);
    a = await trader(svc, 'a@jobs.test', { scopes: EXPORT_SCOPES });
    b = await trader(svc, 'b@jobs.test', { scopes: EXPORT_SCOPES });
    await seedTrades(svc.dataDir, BIG_ROWS, m1.id);
    await seedTrades(svc.dataDir, 20, m2.id, { prefix: 'fil_small' });
  });
  // Each case starts with no exports, whatever the one before left (a failed case once left ten,
  // and the next ones met EXPORT_LIMIT_REACHED).
  afterEach(async () => {
    await clear(a);
    await clear(b);
  });
  afterAll(async () => {
    await svc.close();
  });

  it('runs at most 2 per user, the rest QUEUED and started in creation order; another user is not held up', async () => {
    // Sent together, so the window in which a running job could finish before the list below is
    // one round of requests (five sequential creates, each counting its rows in the thread that
    // runs the jobs, once outlasted a 20,000-row job on a loaded machine). Creation order is the
    // server's: the list returns it (oldest first), and the queue must follow it.
    const sent = await Promise.all([
      ...Array.from({ length: 4 }, () => ex.created(a, big)),
      ex.created(b, big),
    ]);
    const other = sent[4].id as string;
    let s = await statuses(a);
    const jobs = [...s.keys()];
    expect([...jobs].sort()).toEqual(
      sent
        .slice(0, 4)
        .map((e) => e.id as string)
        .sort(),
    );
    expect(jobs.map((id) => s.get(id))).toEqual(['RUNNING', 'RUNNING', 'QUEUED', 'QUEUED']);
    expect((await ex.get(b, other)).body.status).toBe('RUNNING');
    const queued = await download(svc, a, jobs[2]);
    expect(queued.status).toBe(409);
    expect(JSON.parse(queued.body.toString()).error).toMatchObject({
      code: 'EXPORT_NOT_READY',
      details: { status: 'QUEUED' },
    });
    expect((await download(svc, a, jobs[0])).status).toBe(409);
    const deadline = Date.now() + 60_000;
    do {
      s = await statuses(a);
      const st = jobs.map((id) => s.get(id));
      expect(st.filter((x) => x === 'RUNNING').length).toBeLessThanOrEqual(2);
      // A later job never starts before an earlier one.
      for (let i = 1; i < 4; i++) {
        if (st[i] !== 'QUEUED') expect(st[i - 1]).not.toBe('QUEUED');
      }
      expect(st.every((x) => x !== 'FAILED')).toBe(true);
      await new Promise((r) => setTimeout(r, 10));
      // Until the last queued job has started: the order is then settled (the third and fourth
      // jobs finishing as well took as long again: two more jobs of BIG_ROWS to write and poll).
    } while (s.get(jobs[3]) === 'QUEUED' && Date.now() < deadline);
    // The first two made way for the others by finishing whole.
    for (const id of jobs.slice(0, 2)) {
      expect((await ex.get(a, id)).body).toMatchObject({ status: 'READY', record_count: BIG_ROWS });
    }
    expect(['RUNNING', 'READY']).toContain(s.get(jobs[3]));
  });

  it('DELETE stops a RUNNING export and removes its partial file; the next queued one starts', async () => {
    const [j1, j2, j3] = [
      (await ex.created(a, big)).id,
      (await ex.created(a, big)).id,
      (await ex.created(a, big)).id,
    ];
    // Wait until j1 has written part of its file.
    const deadline = Date.now() + 10_000;
    while (files(j1).length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(files(j1)).toEqual([`${j1}.csv.part`]);
    expect((await ex.remove(a, j1)).status).toBe(204);
    expect(files(j1)).toEqual([]);
    expectContractError(await ex.get(a, j1), 404, 'NOT_FOUND');
    expectContractError(await ex.remove(a, j1), 404, 'NOT_FOUND');
    const s = await statuses(a);
    expect([s.get(j2), s.get(j3)]).toEqual(['RUNNING', 'RUNNING']);
    await clear(a);
    expect(readdirSync(join(svc.dataDir, 'exports', 'paper'))).toEqual([]);
  });

  it('keeps 10 per user: the 11th removes the oldest finished export with its file', async () => {
    // Created one after the other (the creation order is the age the rule goes by), then waited
    // for together: two run at a time, so waiting for each before the next made ten rounds of a
    // worker's start and poll instead of five.
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await ex.created(a, small)).id as string);
    for (const id of ids) await ex.until(a, id);
    expect(files(ids[0])).toEqual([`${ids[0]}.csv`]);
    const eleventh = (await ex.created(a, small)).id;
    expectContractError(await ex.get(a, ids[0]), 404, 'NOT_FOUND');
    expect(files(ids[0])).toEqual([]);
    const kept = [...(await statuses(a)).keys()];
    expect(kept).toEqual([...ids.slice(1), eleventh]);
    await ex.until(a, eleventh);
  });

  // Last: its 200,000 rows stay in the table, and every create after them counts in a worker thread.
  describe('with 200,000 more rows', () => {
    beforeAll(() => seedTrades(svc.dataDir, 200_000, m3.id, { prefix: 'fil_huge' }));

    it('keeps 10 per user: with none finished the 11th is 422 EXPORT_LIMIT_REACHED', async () => {
      // Sent together, so the window in which a running job could finish is one round of requests
      // (sequential creates, each counting its rows in a thread, once outlasted a 20,000-row job).
      const sent = await Promise.all(Array.from({ length: 11 }, () => ex.create(a, huge)));
      const refused = sent.filter((r) => r.status !== 202);
      expect(sent.filter((r) => r.status === 202)).toHaveLength(10);
      expect(refused).toHaveLength(1);
      const err = expectContractError(refused[0], 422, 'EXPORT_LIMIT_REACHED');
      expect(err.details.limit).toBe(10);
      const s = await statuses(a);
      expect(s.size).toBe(10);
      expect([...s.values()].filter((x) => x === 'READY')).toEqual([]);
    });
  });
});
