import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { expectContractError, type Running } from '../support/harness.js';
import {
  as,
  expectValidation,
  keyFor,
  limit,
  place,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import {
  download,
  EXPORT_SCOPES,
  exportsClient,
  gunzip,
  seedTrades,
  sha256,
  WINDOW,
  type Json,
} from '../support/exports.js';
import { ensureBuilt } from '../support/process.js';

const DAY = 86_400_000;

/**
 * Historical data exports in one app (paper feed stopped, clock at 2026-11-22T12:00Z): datasets,
 * bad input, a TRADES export end to end (file, sha256, gzip, Range), JSONL, estimate, the own
 * datasets, worlds and users apart, reset, 7-day expiry.
 */
describe('data exports', () => {
  let svc: Running;
  let ex: ReturnType<typeof exportsClient>;
  let a: Trader;
  let aLive: Trader;
  let b: Trader;
  const [m1, m2] = TRADABLE;
  const window = { start: '2026-11-22T11:00:00Z', end: '2026-11-22T11:00:01Z' };
  const paperDir = () => join(svc.dataDir, 'exports', 'paper');

  // The export jobs' worker thread runs the build's compiled program (a no-op after the build).
  beforeAll(() => ensureBuilt(), 180_000);
  beforeAll(async () => {
    svc = await startOrdersApp({ env: { EXPORT_MAX_ROWS: '5000' } });
    ex = exportsClient(svc);
    a = await trader(svc, 'a@exports.test', { scopes: EXPORT_SCOPES });
    aLive = await keyFor(svc, a.email, a.token, { environment: 'live', scopes: EXPORT_SCOPES });
    b = await trader(svc, 'b@exports.test', { scopes: EXPORT_SCOPES });
    await seedTrades(svc.dataDir, 1200, m1.id);
    await seedTrades(svc.dataDir, 50, m2.id, { prefix: 'fil_seedm2' });
    await seedTrades(svc.dataDir, 30, m1.id, { world: 'live', prefix: 'fil_seedlive' });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('lists the seven datasets with their fields; data:read is required', async () => {
    const res = await as(a, `${svc.api}/data/datasets`);
    expect(res.status).toBe(200);
    expect(res.body.map((d: Json) => d.dataset)).toEqual([
      'TRADES',
      'MARKETS',
      'INDEX_POINTS',
      'CRYPTO_PRICES',
      'ORDERS',
      'FILLS',
      'LEDGER',
    ]);
    const trades = res.body.find((d: Json) => d.dataset === 'TRADES');
    expect(trades.fields).toEqual([
      'id',
      'market_id',
      'price',
      'quantity',
      'taker_side',
      'created_at',
    ]);
    expect(res.body.filter((d: Json) => d.own).map((d: Json) => d.dataset)).toEqual([
      'ORDERS',
      'FILLS',
      'LEDGER',
    ]);
    const noScope = await keyFor(svc, a.email, a.token, { scopes: ['orders:read'] });
    for (const url of ['/data/datasets', '/data/exports']) {
      expectContractError(await as(noScope, `${svc.api}${url}`), 403, 'INSUFFICIENT_SCOPE');
    }
  });

  it('refuses bad input with 400 naming the field, creating nothing', async () => {
    const ok = { dataset: 'TRADES', format: 'CSV', ...window };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...ok, dataset: 'QUOTES' }, 'dataset'],
      [{ ...ok, format: 'XML' }, 'format'],
      [{ ...ok, start: 'yesterday' }, 'start'],
      [{ ...ok, end: '2026-13-01' }, 'end'],
      [{ ...ok, start: window.end, end: window.start }, 'end'],
      [{ ...ok, start: '2025-01-01T00:00:00Z', end: '2026-01-03T00:00:00Z' }, 'end'],
      [{ ...ok, market_ids: Array.from({ length: 101 }, () => m1.id) }, 'market_ids'],
      [{ ...ok, market_ids: [m1.id, 'MKT_1'] }, 'market_ids[1]'],
      [{ ...ok, market_ids: [m1.id, 'mkt_nosuchmarket', 7] }, 'market_ids'],
      [{ ...ok, market_ids: [m1.id, m1.id] }, 'market_ids[1]'],
      [{ ...ok, dataset: 'LEDGER', market_ids: [m1.id] }, 'market_ids'],
      [{ ...ok, dataset: 'CRYPTO_PRICES', market_ids: [] }, 'market_ids'],
      [{ ...ok, colour: 'blue' }, 'colour'],
    ];
    for (const [body, field] of cases) {
      expectValidation(await ex.create(a, body), field);
      expectValidation(await ex.estimate(a, body), field);
    }
    // A well-formed id of no market here is an unknown id, not bad input (the body matches the
    // request schema): 404 naming it, nothing created.
    const unknown = { ...ok, market_ids: [m1.id, 'mkt_nosuchmarket'] };
    for (const res of [await ex.create(a, unknown), await ex.estimate(a, unknown)]) {
      const err = expectContractError(res, 404, 'NOT_FOUND');
      expect(err.details).toEqual({ market_id: 'mkt_nosuchmarket' });
    }
    expect((await ex.list(a)).body.data).toEqual([]);
  });

  it('builds a TRADES CSV export whose bytes match its sha256, plain, gzip and by ranges', async () => {
    const created = await ex.created(a, {
      dataset: 'TRADES',
      format: 'CSV',
      market_ids: [m1.id],
      ...window,
    });
    expect(created).toMatchObject({
      status: 'QUEUED',
      dataset: 'TRADES',
      format: 'CSV',
      environment: 'test',
    });
    expect(created.id).toMatch(/^dex_/);
    const done = await ex.until(a, created.id);
    expect(done).toMatchObject({ record_count: 1200, market_ids: [m1.id], error: null });
    expect(done.expires_at).toBe(new Date(Date.parse(done.ready_at) + 7 * DAY).toISOString());

    const plain = await download(svc, a, done.id);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toMatch(/^text\/csv/);
    expect(plain.headers['accept-ranges']).toBe('bytes');
    expect(plain.headers.etag).toBe(`"${done.sha256}"`);
    expect(plain.body.length).toBe(done.size_bytes);
    // The files hold users' data: the service user's alone.
    expect(statSync(join(paperDir(), `${done.id}.csv`)).mode & 0o777).toBe(0o600);
    expect(statSync(paperDir()).mode & 0o777).toBe(0o700);
    expect(sha256(plain.body)).toBe(done.sha256);
    const lines = plain.body.toString('utf8').trimEnd().split('\n');
    expect(lines[0]).toBe('id,market_id,price,quantity,taker_side,created_at');
    expect(lines).toHaveLength(1201);
    expect(lines[1]).toBe(`fil_seed000000000,${m1.id},1,1,YES,2026-11-22T11:00:00.000Z`);

    const gz = await download(svc, a, done.id, { 'accept-encoding': 'gzip' });
    expect(gz.status).toBe(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(sha256(gunzip(gz.body))).toBe(done.sha256);

    const size = done.size_bytes as number;
    const cut = [0, 1000, 20_000, size - 1];
    const parts: Buffer[] = [];
    for (let i = 0; i < cut.length - 1; i++) {
      const last = i === cut.length - 2 ? size - 1 : cut[i + 1] - 1;
      const r = await download(svc, a, done.id, { range: `bytes=${cut[i]}-${last}` });
      expect(r.status).toBe(206);
      expect(r.headers['content-range']).toBe(`bytes ${cut[i]}-${last}/${size}`);
      parts.push(r.body);
    }
    expect(sha256(Buffer.concat(parts))).toBe(done.sha256);
    const suffix = await download(svc, a, done.id, { range: 'bytes=-10' });
    expect(suffix.body.equals(plain.body.subarray(size - 10))).toBe(true);
    const past = await download(svc, a, done.id, { range: `bytes=${size}-` });
    expect(past.status).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${size}`);
    expect(JSON.parse(past.body.toString()).error.code).toBe('RANGE_NOT_SATISFIABLE');
  });

  it('writes JSONL, one object a line with the dataset fields; estimate counts and changes nothing', async () => {
    const body = { dataset: 'TRADES', format: 'JSONL', market_ids: [m2.id], ...window };
    const before = (await ex.list(a)).body.data;
    const files = readdirSync(paperDir());
    const est = await ex.estimate(a, body);
    expect(est.status).toBe(200);
    expect(est.body.record_count).toBe(50);
    expect((await ex.list(a)).body.data).toEqual(before);
    expect(readdirSync(paperDir())).toEqual(files);

    const done = await ex.until(a, (await ex.created(a, body)).id);
    expect(done.record_count).toBe(50);
    // A sample of 100 rows covers all 50: the estimate is exact.
    expect(est.body.size_bytes).toBe(done.size_bytes);
    const file = await download(svc, a, done.id);
    expect(file.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const rows = file.body
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    expect(rows).toHaveLength(50);
    expect(rows[1]).toEqual({
      id: 'fil_seedm2000000001',
      market_id: m2.id,
      price: 2,
      quantity: 2,
      taker_side: 'NO',
      created_at: '2026-11-22T11:00:00.000Z',
    });
  });

  it('over EXPORT_MAX_ROWS is 422 EXPORT_TOO_LARGE and creates nothing', async () => {
    await seedTrades(svc.dataDir, 4000, m2.id, {
      prefix: 'fil_seedbig',
      createdAt: '2026-11-22T10:00:00.000Z',
    });
    const before = (await ex.list(a)).body.data.length;
    const res = await ex.create(a, {
      dataset: 'TRADES',
      format: 'CSV',
      start: '2026-11-22T09:00:00Z',
      end: '2026-11-22T12:00:00Z',
    });
    const err = expectContractError(res, 422, 'EXPORT_TOO_LARGE');
    expect(err.details.max_rows).toBe(5000);
    expect(err.details.rows).toBeGreaterThan(5000);
    expect((await ex.list(a)).body.data.length).toBe(before);
  });

  it("exports the caller's own orders, fills and ledger only", async () => {
    const mine = await place(svc, a, limit(m1, 'BUY', 'YES', m1.reference + 1, 3));
    await place(svc, b, limit(m1, 'BUY', 'YES', m1.reference + 1, 2));
    const win = { start: '2026-11-22T11:59:00Z', end: '2026-11-22T12:01:00Z' };
    const read = async (t: Trader, dataset: string): Promise<Json[]> => {
      const done = await ex.until(
        t,
        (await ex.created(t, { dataset, format: 'JSONL', ...win })).id,
      );
      const text = (await download(svc, t, done.id)).body.toString('utf8').trimEnd();
      return text === '' ? [] : text.split('\n').map((l) => JSON.parse(l) as Json);
    };
    const orders = await read(a, 'ORDERS');
    expect(orders.map((o) => o.id)).toEqual([mine.id]);
    expect(orders[0]).toMatchObject({
      status: 'FILLED',
      cancel_reason: null,
      quantity: 3,
      filled_quantity: 3,
      post_only: false,
    });
    const fills = await read(a, 'FILLS');
    expect(fills.length).toBeGreaterThan(0);
    expect(fills.every((f) => f.order_id === mine.id && f.liquidity === 'TAKER')).toBe(true);
    expect(fills.reduce((s, f) => s + (f.quantity as number), 0)).toBe(3);
    const ledger = await read(a, 'LEDGER');
    expect(ledger.filter((l) => l.type === 'TRADE').length).toBe(fills.length);
    const bFills = await read(b, 'FILLS');
    expect(bFills.reduce((s, f) => s + (f.quantity as number), 0)).toBe(2);
  });

  it('keeps worlds and users apart: each world reads its own data, the other world and other users get 404', async () => {
    const paper = await ex.until(
      a,
      (await ex.created(a, { dataset: 'TRADES', format: 'CSV', market_ids: [m1.id], ...window }))
        .id,
    );
    const live = await ex.until(
      aLive,
      (
        await ex.created(aLive, {
          dataset: 'TRADES',
          format: 'CSV',
          market_ids: [m1.id],
          ...window,
        })
      ).id,
    );
    expect(paper.record_count).toBe(1200);
    expect(live).toMatchObject({ record_count: 30, environment: 'live' });
    expect(existsSync(join(svc.dataDir, 'exports', 'live', `${live.id}.csv`))).toBe(true);
    for (const [t, id] of [
      [aLive, paper.id],
      [a, live.id],
      [b, paper.id],
    ] as [Trader, string][]) {
      expectContractError(await ex.get(t, id), 404, 'NOT_FOUND');
      expect((await download(svc, t, id)).status).toBe(404);
      expectContractError(await ex.remove(t, id), 404, 'NOT_FOUND');
    }
    expect((await ex.list(aLive)).body.data.map((e: Json) => e.id)).toEqual([live.id]);
    expect((await ex.list(b)).body.data.every((e: Json) => e.id !== paper.id)).toBe(true);
    expect((await ex.get(a, paper.id)).status).toBe(200);
  });

  it('pages the list oldest first with a cursor', async () => {
    const all = (await ex.list(a, '?limit=100')).body.data.map((e: Json) => e.id);
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await ex.list(a, `?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(res.status).toBe(200);
      paged.push(...res.body.data.map((e: Json) => e.id));
      cursor = res.body.next_cursor;
    } while (cursor !== null);
    expect(paged).toEqual(all);
    expect([...all].sort()).toEqual(all);
  });

  it('expires a READY export 7 days after ready on the service clock: file deleted, download 410', async () => {
    const done = await ex.until(
      a,
      (await ex.created(a, { dataset: 'TRADES', format: 'CSV', market_ids: [m2.id], ...window }))
        .id,
    );
    const path = join(paperDir(), `${done.id}.csv`);
    expect(existsSync(path)).toBe(true);
    (svc.clock as ManualClock).advance(7 * DAY - 1000);
    expect((await ex.get(a, done.id)).body.status).toBe('READY');
    expect((await download(svc, a, done.id)).status).toBe(200);
    (svc.clock as ManualClock).advance(1000);
    expect((await ex.get(a, done.id)).body).toMatchObject({
      status: 'EXPIRED',
      sha256: done.sha256,
    });
    expect(existsSync(path)).toBe(false);
    const gone = await download(svc, a, done.id);
    expect(gone.status).toBe(410);
    expect(JSON.parse(gone.body.toString()).error.code).toBe('EXPORT_EXPIRED');
  });

  it('a sandbox reset deletes the paper exports and their files; live ones stay', async () => {
    const liveNow = await ex.until(
      aLive,
      (await ex.created(aLive, { dataset: 'TRADES', format: 'CSV', ...window })).id,
    );
    const paperIds = (await ex.list(a, '?limit=100')).body.data.map((e: Json) => e.id as string);
    expect(paperIds.length).toBeGreaterThan(0);
    const reset = await as(a, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(reset.status).toBe(200);
    expect(reset.body.cleared.exports).toBe(paperIds.length);
    expect((await ex.list(a)).body.data).toEqual([]);
    const left = readdirSync(paperDir()).filter((f) =>
      paperIds.some((id: string) => f.startsWith(id)),
    );
    expect(left).toEqual([]);
    expect((await ex.list(aLive)).body.data.map((e: Json) => e.id)).toContain(liveNow.id);
    expect(existsSync(join(svc.dataDir, 'exports', 'live', `${liveNow.id}.csv`))).toBe(true);
  });

  it('another window shape: a date-only window over a whole day counts the same rows', async () => {
    const est = await ex.estimate(a, {
      dataset: 'TRADES',
      format: 'CSV',
      market_ids: [m1.id],
      ...WINDOW,
    });
    expect(est.body.record_count).toBeGreaterThanOrEqual(1200);
  });
});
