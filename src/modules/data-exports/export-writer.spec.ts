import { afterAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATASET_DEFS, DatasetReader, type ExportScope } from './datasets.js';
import { countAndSampleInThread, countInThread } from './export-thread.js';
import { estimateSize, sampleSize, writeRows } from './export-writer.js';

const dir = mkdtempSync(join(tmpdir(), 'export-writer-'));
const dbFile = join(dir, 'engine.sqlite');
const ROWS = 30_000;
{
  const db = new Database(dbFile);
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE trades (id TEXT PRIMARY KEY, market_id TEXT, price INTEGER, quantity INTEGER,
    taker_book_side TEXT, created_at TEXT)`);
  const ins = db.prepare('INSERT INTO trades VALUES (?, ?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) {
      // Every third row is outside the window.
      const at = i % 3 === 0 ? '2025-06-01T00:00:00.000Z' : '2026-01-15T00:00:00.000Z';
      ins.run(`fil_${i}`, 'mkt_a', 1 + (i % 99), 1, i % 2 === 0 ? 'BID' : 'ASK', at);
    }
  })();
  db.close();
}
const scope: ExportScope = {
  def: DATASET_DEFS.TRADES,
  userId: 'usr_x',
  start: '2026-01-01T00:00:00.000Z',
  end: '2026-02-01T00:00:00.000Z',
  marketIds: null,
};
const inWindow = (hi: number): number => hi - Math.ceil(hi / 3);

// Worker threads are unref'd; this keeps Jest's loop busy meanwhile.
const alive = setInterval(() => undefined, 1000);
afterAll(() => {
  clearInterval(alive);
  rmSync(dir, { recursive: true, force: true });
});

describe('counting in a worker thread (the build’s export-worker.js)', () => {
  const job = {
    count: true as const,
    source: { sqliteFile: dbFile },
    dataset: 'TRADES' as const,
    userId: 'usr_x',
    start: scope.start,
    end: scope.end,
    marketIds: null,
  };

  it('counts the rows of the window through the snapshot bound, as the main thread does', async () => {
    await expect(
      countInThread({ ...job, hi: 25_000, stopAbove: Number.MAX_SAFE_INTEGER }),
    ).resolves.toBe(inWindow(25_000));
  });

  it('stops once past stopAbove (some number above it)', async () => {
    const n = await countInThread({ ...job, hi: ROWS, stopAbove: 1000 });
    expect(n).toBeGreaterThan(1000);
    expect(n).toBeLessThan(inWindow(ROWS));
  });

  it('an estimate’s sample is read in the thread too, the same as on the request thread', async () => {
    const db = new Database(dbFile, { readonly: true });
    try {
      const main = await sampleSize(new DatasetReader(db), scope, 'JSONL', ROWS);
      expect(main.rows).toBe(100);
      const got = await countAndSampleInThread({
        ...job,
        hi: ROWS,
        stopAbove: Number.MAX_SAFE_INTEGER,
        sample: 'JSONL',
      });
      expect(got).toEqual({ count: inWindow(ROWS), sample: main });
      // JSONL has no header: the mean sampled row's size times the count.
      expect(estimateSize(scope, 'JSONL', got.count, got.sample)).toBe(
        Math.round((main.bytes / main.rows) * got.count),
      );
      // A count alone samples nothing.
      const plain = await countAndSampleInThread({ ...job, hi: 10, stopAbove: 100 });
      expect(plain).toEqual({ count: inWindow(10), sample: null });
    } finally {
      db.close();
    }
  });

  it('rejects with the reader’s error', async () => {
    await expect(
      countInThread({
        ...job,
        source: { sqliteFile: join(dir, 'none.sqlite') },
        hi: 1,
        stopAbove: 10,
      }),
    ).rejects.toThrow(/does not exist|unable to open/);
  });
});

describe('writeRows', () => {
  it('writes every row of the window through the bound once, with its sha256, while pacing itself', async () => {
    const db = new Database(dbFile, { readonly: true });
    const path = join(dir, 'out.csv.part');
    let reported = 0;
    const written = await writeRows(
      new DatasetReader(db),
      scope,
      'CSV',
      20_000,
      path,
      500,
      (n) => (reported = n),
      // Small slices, rests and syncs, so each happens many times over.
      { sliceMs: 1, restPerWork: 0.5, syncBytes: 64 * 1024 },
    );
    db.close();
    const file = readFileSync(path);
    const lines = file.toString('utf8').trimEnd().split('\n');
    expect(lines[0]).toBe('id,market_id,price,quantity,taker_side,created_at');
    expect(lines.length - 1).toBe(inWindow(20_000));
    expect(new Set(lines.slice(1).map((l) => l.split(',')[0])).size).toBe(inWindow(20_000));
    expect(written).toEqual({
      records: inWindow(20_000),
      bytes: file.length,
      sha256: createHash('sha256').update(file).digest('hex'),
    });
    expect(reported).toBe(inWindow(20_000));
  });
});
