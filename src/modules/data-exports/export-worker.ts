/**
 * The program of an export job's worker thread (loaded from its compiled file, see
 * export-thread.ts): it opens the job's world database read-only, reads and formats the rows,
 * hashes and writes them to the partial file, and reports to the main thread by message. On
 * SQLite it opens the world's file (WAL mode lets this reader run beside the main thread's writer
 * without blocking it); on PostgreSQL a `pg` client of its own reads the world's schema in keyset
 * pages (pg-row-source.ts). Nothing here
 * touches the job's row: the main thread owns the job's lifecycle. Given a count job instead
 * (CountThreadJob), it counts the scope's rows and reports the count: how a create or estimate
 * of a large export counts off the request thread.
 */
import Database from 'better-sqlite3';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { basename } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { DATASET_DEFS, DatasetReader, type RowSource } from './datasets.js';
import type {
  CountThreadJob,
  ExportSource,
  ExportThreadJob,
  ExportThreadMessage,
} from './export-thread.js';
import { countRows, sampleSize, writeRows } from './export-writer.js';

/** Progress is reported at most this often: each message is main-thread work. */
const PROGRESS_MS = 1000;
/** The worker connection's page cache, in KiB. */
const PAGE_CACHE_KIB = 1024;
/** The worker thread's nice value: below the request thread when both want a CPU. */
const EXPORT_NICE = 10;

/**
 * An export is background work: when the CPUs are busy the thread serving requests should have
 * them first. On Linux a thread's nice value is its own (setpriority on its thread id), so this
 * lowers the worker thread alone; elsewhere, or if refused, it keeps the process's priority.
 */
function lowerPriority(): void {
  try {
    setPriority(Number(basename(readlinkSync('/proc/thread-self'))), EXPORT_NICE);
  } catch {
    // Not Linux, or not allowed: the export runs at the service's priority.
  }
}

const port = parentPort;
if (port === null) throw new Error('export-worker.js runs as a worker thread only');
const post = (m: ExportThreadMessage): void => port.postMessage(m);
const job = workerData as ExportThreadJob | CountThreadJob;

/** The job's rows on a connection of this thread's own, and how to close it. */
async function open(source: ExportSource): Promise<{ reader: RowSource; close(): unknown }> {
  if ('postgresUrl' in source) {
    // Loaded only here: a SQLite job's worker does without the pg driver.
    const { PgRowSource } = await import('./pg-row-source.js');
    const pgSource = await PgRowSource.open(source.postgresUrl, source.schema);
    return { reader: pgSource, close: () => pgSource.close() };
  }
  const db = new Database(source.sqliteFile, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    // One pass over the rows in rowid order reads each page once: a small page cache does (the
    // driver's default is 16 MB per connection, all of it resident once filled).
    db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  } catch (err) {
    db.close();
    throw err;
  }
  return { reader: new DatasetReader(db), close: () => db.close() };
}

async function main(): Promise<void> {
  lowerPriority();
  const { reader, close } = await open(job.source);
  try {
    const scope = {
      def: DATASET_DEFS[job.dataset],
      userId: job.userId,
      start: job.start,
      end: job.end,
      marketIds: job.marketIds,
    };
    if ('count' in job) {
      const count = await countRows(reader, scope, job.hi, job.stopAbove);
      const sample =
        job.sample !== undefined && count > 0
          ? await sampleSize(reader, scope, job.sample, job.hi)
          : null;
      post({ type: 'counted', count, sample });
      return;
    }
    let reported = Date.now();
    const written = await writeRows(
      reader,
      scope,
      job.format,
      job.hi,
      job.path,
      job.batchRows,
      (records) => {
        const now = Date.now();
        if (now - reported < PROGRESS_MS) return;
        reported = now;
        post({ type: 'progress', records });
      },
    );
    post({ type: 'done', written });
  } finally {
    await close();
  }
}

main().catch((err: unknown) => {
  post({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
});
