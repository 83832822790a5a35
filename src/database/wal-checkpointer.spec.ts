import { afterEach, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WalCheckpointer, writerFinishes, type WriterConnection } from './wal-checkpointer.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('WalCheckpointer', () => {
  const dirs: string[] = [];
  const checkpointers: WalCheckpointer[] = [];
  const dbs: Database.Database[] = [];
  afterEach(async () => {
    for (const c of checkpointers.splice(0)) await c.stop();
    for (const db of dbs.splice(0)) db.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** A WAL database and its writer connection, as the app has them. */
  function writer(): { db: Database.Database; conn: WriterConnection } {
    const dir = mkdtempSync(join(tmpdir(), 'svc-wal-'));
    dirs.push(dir);
    const file = join(dir, 'x.sqlite');
    const db = new Database(file);
    dbs.push(db);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    return { db, conn: { file, pragma: (sql) => db.pragma(sql) } };
  }

  const fill = (db: Database.Database, rows: number): void => {
    const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < rows; i++) ins.run('x'.repeat(200));
    })();
  };

  const autocheckpoint = (db: Database.Database): number =>
    (db.pragma('wal_autocheckpoint') as { wal_autocheckpoint: number }[])[0].wal_autocheckpoint;

  it('turns the writers’ own checkpoints off and copies every log from its thread', async () => {
    const a = writer();
    const b = writer();
    const c = new WalCheckpointer();
    checkpointers.push(c);
    await c.start([a.conn, b.conn], 60_000);
    expect(c.running).toBe(true);
    expect(autocheckpoint(a.db)).toBe(0);
    expect(autocheckpoint(b.db)).toBe(0);
    fill(a.db, 2000);
    fill(b.db, 500);
    const results = await c.checkpointNow();
    expect(results.map((r) => r.file)).toEqual([a.conn.file, b.conn.file]);
    for (const r of results) {
      expect(r.error).toBeUndefined();
      expect(r.busy).toBe(0);
      expect(r.log).toBeGreaterThan(0);
      expect(r.checkpointed).toBe(r.log); // all of it is in the database file now
    }
    expect(statSync(a.conn.file).size).toBeGreaterThan(2000 * 200);
  });

  it('keeps the log short while the writer keeps writing', async () => {
    const a = writer();
    const c = new WalCheckpointer();
    checkpointers.push(c);
    await c.start([a.conn], 5);
    let largest = 0;
    for (let round = 0; round < 40; round++) {
      fill(a.db, 200);
      await sleep(10);
      largest = Math.max(largest, statSync(`${a.conn.file}-wal`).size);
    }
    // 40 rounds of ~50 KiB: with no checkpoint at all the log would hold every one (~2 MiB+).
    expect(largest).toBeLessThan(1_000_000);
    expect(a.db.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 8000 });
  });

  it('the writer finishes a long, nearly copied log itself, so the next commit restarts it', async () => {
    const a = writer();
    const c = new WalCheckpointer();
    checkpointers.push(c);
    await c.start([a.conn], 60_000);
    fill(a.db, 40_000); // ~2,500+ frames in one go
    const [r] = await c.checkpointNow();
    expect(r.log).toBeGreaterThan(2000);
    // The worker's report as it comes when the writer kept committing during its copy: a few
    // frames short of the end.
    const report = { ...r, checkpointed: r.log - 100 };
    expect(writerFinishes(report)).toBe(true);
    (c as unknown as { onMessage(m: unknown): void }).onMessage({
      type: 'progress',
      results: [report],
    });
    expect(c.finishedByWriter).toBe(1);
    fill(a.db, 1);
    const [after] = await c.checkpointNow();
    expect(after.log).toBeLessThan(50); // restarted from the beginning
  });

  it('leaves a wholly copied log to restart at the next commit, with no checkpoint on the writer', async () => {
    const a = writer();
    const c = new WalCheckpointer();
    checkpointers.push(c);
    await c.start([a.conn], 5);
    fill(a.db, 40_000); // ~2,500+ frames in one go, all copied by the worker's next rounds
    const t0 = Date.now();
    let r = (await c.checkpointNow())[0];
    while (r.checkpointed < r.log && Date.now() - t0 < 5000) r = (await c.checkpointNow())[0];
    expect(r.log).toBeGreaterThan(2000);
    expect(r.checkpointed).toBe(r.log);
    await sleep(50); // ten more progress reports of the same, wholly copied log
    // A checkpoint by the writer would have cost the request thread two fsyncs for nothing.
    expect(c.finishedByWriter).toBe(0);
    fill(a.db, 1);
    const [after] = await c.checkpointNow();
    expect(after.log).toBeLessThan(50); // restarted from the beginning all the same
  });

  it('skips a wholly copied log, reporting nothing, until a commit changes it', async () => {
    const a = writer();
    const c = new WalCheckpointer();
    checkpointers.push(c);
    await c.start([a.conn], 5);
    /** Waits until a round report says the whole log is in the database file. */
    const copiedReport = async (after: number): Promise<{ log: number; checkpointed: number }> => {
      const t0 = Date.now();
      for (;;) {
        const r = c.lastReport[0];
        if (c.reports > after && r !== undefined && r.log > 0 && r.checkpointed === r.log) return r;
        if (Date.now() - t0 > 10_000) throw new Error('no report of a wholly copied log');
        await sleep(5);
      }
    };
    fill(a.db, 500);
    await copiedReport(0);
    const quiet = c.reports;
    await sleep(150); // about 30 rounds, each of which found nothing new in the log
    expect(c.reports).toBe(quiet);
    // checkpointNow never skips: it checkpoints the quiet database all the same.
    const [now] = await c.checkpointNow();
    expect(now.file).toBe(a.conn.file);
    expect(now.checkpointed).toBe(now.log);
    expect(c.reports).toBe(quiet);
    // A commit (here one that restarts the copied log, so its size need not change) is seen.
    fill(a.db, 10);
    const r = await copiedReport(quiet);
    expect(r.log).toBeLessThan(50); // the restarted log, copied by the worker's round
    expect(a.db.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 510 });
  });

  it('has the writer finish only a long log with a few frames left to copy', () => {
    const at = (log: number, checkpointed: number, error?: string) =>
      writerFinishes({ file: 'x', busy: 0, log, checkpointed, ...(error ? { error } : {}) });
    expect(at(2500, 2400)).toBe(true);
    expect(at(2000, 1999)).toBe(true);
    expect(at(2500, 2500)).toBe(false); // wholly copied: the next commit restarts it
    expect(at(2500, 2000)).toBe(false); // too much left: the worker copies it
    expect(at(1999, 1900)).toBe(false); // short: not worth a checkpoint
    expect(at(2500, 2400, 'busy')).toBe(false);
  });

  it('gives the writers their automatic checkpoints back when it stops or its worker dies', async () => {
    const a = writer();
    const c = new WalCheckpointer();
    await c.start([a.conn], 1000);
    await c.stop();
    expect(c.running).toBe(false);
    expect(autocheckpoint(a.db)).toBe(1000);
    expect(await c.checkpointNow()).toEqual([]);

    const d = new WalCheckpointer();
    checkpointers.push(d);
    await d.start([a.conn], 1000);
    expect(autocheckpoint(a.db)).toBe(0);
    await (d as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    await sleep(20);
    expect(d.running).toBe(false);
    expect(autocheckpoint(a.db)).toBe(1000);
  });

  it('refuses a database file that does not exist, and leaves the writer as it was', async () => {
    const a = writer();
    const c = new WalCheckpointer();
    const missing = {
      file: join(tmpdir(), 'svc-wal-missing', 'nope.sqlite'),
      pragma: a.conn.pragma,
    };
    await expect(c.start([missing], 1000)).rejects.toThrow();
    expect(c.running).toBe(false);
    expect(autocheckpoint(a.db)).toBe(1000);
  });
});
