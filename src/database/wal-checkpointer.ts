/**
 * WAL checkpoints off the request thread.
 *
 * In WAL mode SQLite copies the log back into the database file whenever a commit takes the log
 * past 1,000 pages, inside that commit. Under steady order flow that is dozens of times a second,
 * each a stall of a few milliseconds for the requests of that batch: measured, it was the main
 * source of the order route's p90 and p99 latency.
 *
 * Here a worker thread holds its own connection to each database and runs PASSIVE checkpoints in
 * a loop. A PASSIVE checkpoint never blocks the writer, which keeps appending while the copy
 * runs. The log restarts from its beginning at the next write once everything in it has been
 * copied, so when the worker reports a long log that is almost all copied, the writer finishes
 * the last few frames itself (a small checkpoint) and the next commit restarts the log. A log the
 * worker reports as wholly copied is left alone: the next commit restarts it anyway, and a
 * checkpoint by the writer then would copy the frames committed since the report and wait for
 * two fsyncs on the request thread. Measured under bench:orders, 39 of 40 of the writer's
 * checkpoints were of such logs, 4 to 32 ms each of blocked event loop for 0.1 to 4 ms of CPU.
 * The writer's own automatic checkpoint is off while the worker runs and comes back if the worker
 * ever stops, so the log stays bounded either way.
 *
 * A database whose log the worker found wholly copied is skipped by the rounds after it until its
 * log file changes (size, modification time or inode: any commit writes to it). A checkpoint of a
 * quiet log copies nothing, yet cost about 100 µs of CPU per database per round, 40 rounds a
 * second: about half of what an idle service spent. A round that skips every database reports
 * nothing, so the request thread is not woken for it either. The stamp is read before the
 * checkpoint, so a commit during the checkpoint changes it and is never skipped; at worst a commit
 * within the file system's timestamp granularity of that read, with the log's size unchanged (a
 * restarted log), waits in the log for the next commit's round. `checkpointNow` never skips.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** SQLite's default automatic checkpoint threshold, restored if the worker stops. */
export const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

/** A log at least this long (frames) that is nearly all copied is finished by the writer. */
const FINISH_LOG_FRAMES = 2000;
/** "Nearly all": at most this many frames left to copy. */
const FINISH_REMAINING_FRAMES = 200;

/** The writer's side of one database: its own connection, used between commits. */
export interface WriterConnection {
  readonly file: string;
  pragma(sql: string): unknown;
}

/** One checkpoint of one database, as SQLite reports it. */
export interface CheckpointResult {
  file: string;
  /** 1 if another checkpoint or a lock kept this one from running. */
  busy: number;
  /** Frames in the log, and how many of them are now in the database file. */
  log: number;
  checkpointed: number;
  error?: string;
}

/** The worker's program (CommonJS, evaluated): no build step, and it runs under the tests too. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.driver);
const dbs = workerData.files.map((file) => {
  const db = new Database(file, { fileMustExist: true });
  db.pragma('busy_timeout = 0');
  db.pragma('synchronous = NORMAL');
  // quiet: the stamp of a log found wholly copied, until the log file changes.
  return { file, db, quiet: null };
});
function logStamp(file) {
  try {
    const s = statSync(file + '-wal', { bigint: true });
    return s.size + ':' + s.mtimeNs + ':' + s.ino;
  } catch {
    return null;
  }
}
function checkpointAll(skipQuiet) {
  const results = [];
  for (const d of dbs) {
    const stamp = logStamp(d.file);
    if (skipQuiet && stamp !== null && stamp === d.quiet) continue;
    try {
      const [r] = d.db.pragma('wal_checkpoint(PASSIVE)');
      d.quiet = r.busy === 0 && r.log === r.checkpointed ? stamp : null;
      results.push({ file: d.file, busy: r.busy, log: r.log, checkpointed: r.checkpointed });
    } catch (err) {
      d.quiet = null;
      const error = String((err && err.message) || err);
      results.push({ file: d.file, busy: 1, log: 0, checkpointed: 0, error });
    }
  }
  return results;
}
let stopped = false;
const timer = setInterval(() => {
  if (stopped) return;
  const results = checkpointAll(true);
  if (results.length > 0) parentPort.postMessage({ type: 'progress', results });
}, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m.type === 'checkpoint') {
    parentPort.postMessage({ type: 'checkpointed', id: m.id, results: checkpointAll(false) });
  }
  if (m.type === 'stop') {
    stopped = true;
    clearInterval(timer);
    for (const { db } of dbs) db.close();
    parentPort.postMessage({ type: 'stopped' });
    parentPort.close();
  }
});
parentPort.postMessage({ type: 'ready' });
`;

/**
 * Whether the writer finishes a log the worker reported (see the file comment): a long log with a
 * few frames left to copy. None left: the next commit restarts it with no checkpoint at all.
 */
export function writerFinishes(r: CheckpointResult): boolean {
  const left = r.log - r.checkpointed;
  return (
    r.error === undefined &&
    r.log >= FINISH_LOG_FRAMES &&
    left > 0 &&
    left <= FINISH_REMAINING_FRAMES
  );
}

interface WorkerMessage {
  type: 'ready' | 'progress' | 'checkpointed' | 'stopped';
  id?: number;
  results?: CheckpointResult[];
}

export class WalCheckpointer {
  private worker: Worker | null = null;
  private nextId = 0;
  private readonly waiting = new Map<number, (r: CheckpointResult[]) => void>();
  private writers: readonly WriterConnection[] = [];
  /** Logs the writer finished itself (see the file comment), for tests and diagnostics. */
  finishedByWriter = 0;
  /** The worker's round reports so far (a round that skipped every database sends none). */
  reports = 0;
  /** The results of the last round report. */
  lastReport: CheckpointResult[] = [];

  /**
   * Starts the worker on the writers' databases (existing WAL files) and turns the writers'
   * automatic checkpoints off; resolves once the worker has opened every database.
   */
  async start(writers: readonly WriterConnection[], intervalMs: number): Promise<void> {
    if (this.worker !== null) throw new Error('checkpointer already started');
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { files: writers.map((w) => w.file), intervalMs, driver },
    });
    // Never what keeps the process alive: shutdown stops it, and a crash must not hang exit.
    worker.unref();
    this.worker = worker;
    try {
      await new Promise<void>((resolve, reject) => {
        const onMessage = (m: WorkerMessage) => {
          if (m.type !== 'ready') return;
          worker.off('error', reject);
          worker.off('message', onMessage);
          resolve();
        };
        worker.on('message', onMessage);
        worker.once('error', reject);
      });
    } catch (err) {
      this.worker = null;
      await worker.terminate();
      throw err;
    }
    this.writers = writers;
    for (const w of writers) w.pragma('wal_autocheckpoint = 0');
    worker.on('message', (m: WorkerMessage) => this.onMessage(m));
    // If the worker dies, the writers checkpoint for themselves again.
    worker.once('exit', () => this.detach());
    worker.once('error', () => this.detach());
  }

  get running(): boolean {
    return this.worker !== null;
  }

  /** Runs one checkpoint of every database in the worker now (tests, diagnostics). */
  checkpointNow(): Promise<CheckpointResult[]> {
    const worker = this.worker;
    if (worker === null) return Promise.resolve([]);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      worker.postMessage({ type: 'checkpoint', id });
    });
  }

  /** Closes the worker's connections, ends it, and gives the writers their checkpoints back. */
  async stop(): Promise<void> {
    const worker = this.worker;
    if (worker === null) return;
    this.detach();
    const stopped = new Promise<void>((resolve) => {
      worker.on('message', (m: WorkerMessage) => {
        if (m.type === 'stopped') resolve();
      });
      worker.once('exit', () => resolve());
    });
    worker.postMessage({ type: 'stop' });
    await Promise.race([stopped, new Promise((r) => setTimeout(r, 2000).unref())]);
    await worker.terminate();
  }

  private onMessage(m: WorkerMessage): void {
    const results = m.results ?? [];
    if (m.type === 'checkpointed' && m.id !== undefined) {
      this.waiting.get(m.id)?.(results);
      this.waiting.delete(m.id);
    }
    if (m.type === 'progress') {
      this.reports++;
      this.lastReport = results;
    }
    if (m.type !== 'progress' && m.type !== 'checkpointed') return;
    for (const r of results) {
      if (!writerFinishes(r)) continue;
      const writer = this.writers.find((w) => w.file === r.file);
      if (writer === undefined) continue;
      try {
        writer.pragma('wal_checkpoint(PASSIVE)');
        this.finishedByWriter++;
      } catch {
        // Busy or closing: the worker's next round tries again.
      }
    }
  }

  private detach(): void {
    if (this.worker === null) return;
    this.worker = null;
    for (const w of this.writers) {
      try {
        w.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
      } catch {
        // A writer already closed (shutdown order) needs nothing.
      }
    }
    this.writers = [];
    for (const resolve of this.waiting.values()) resolve([]);
    this.waiting.clear();
  }
}
