import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { PgSyncConnection } from '../../common/sql/pg-sync-connection.js';
import type { SqlConnection } from '../../common/sql/sql-connection.js';
import { sqliteFileOf } from '../../common/sql/sqlite-dialect.js';
import type { Dataset, ExportFormat } from './datasets.js';
import type { SizeSample, Written } from './export-writer.js';

/**
 * Where an export's worker thread reads its world's rows on a connection of its own: the world's
 * SQLite file (opened read-only), or its PostgreSQL schema (a `pg` client, read-only session).
 */
export type ExportSource = { sqliteFile: string } | { postgresUrl: string; schema: string };

/** The source of a world's engine connection. */
export function exportSourceOf(db: SqlConnection): ExportSource {
  if (db instanceof PgSyncConnection) {
    return { postgresUrl: db.url, schema: db.schema ?? 'public' };
  }
  return { sqliteFile: sqliteFileOf(db) };
}

/** What an export job's worker thread is given: the job's scope and where to read and write. */
export interface ExportThreadJob {
  /** The job's world engine database, which the worker reads on a connection of its own. */
  source: ExportSource;
  dataset: Dataset;
  format: ExportFormat;
  userId: string;
  start: string;
  end: string;
  marketIds: string[] | null;
  /** The snapshot bound: the largest row order (rowid, row_seq) when the job was created. */
  hi: number;
  /** The partial file to write. */
  path: string;
  batchRows: number;
}

/**
 * A count of a scope's rows through `hi`, stopping once past `stopAbove`
 * (see {@link countRows}): the same program, without a file.
 */
export type CountThreadJob = Omit<ExportThreadJob, 'format' | 'path' | 'batchRows'> & {
  count: true;
  stopAbove: number;
  /** An estimate's: the first rows formatted in this format too (see sampleSize). */
  sample?: ExportFormat;
};

/** What a count job reports: the count, and the sample when one was asked for and rows exist. */
export interface Counted {
  count: number;
  sample: SizeSample | null;
}

/** Messages from the worker thread. */
export type ExportThreadMessage =
  | { type: 'progress'; records: number }
  | { type: 'counted'; count: number; sample: SizeSample | null }
  | { type: 'done'; written: Written }
  | { type: 'failed'; message: string };

/**
 * The worker's heap bounds. A batch of rows and their text need little; a runaway worker ends
 * with ERR_WORKER_OUT_OF_MEMORY, which fails its job, instead of growing the service's memory.
 */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 16 };

/**
 * The worker's compiled program. In a build (dist/, dist-bench/src/) it sits beside this module.
 * When this module runs from its TypeScript source (Jest transforms it), there is no compiled
 * sibling and the program is the build's copy under dist/ (the test command builds first).
 */
export function exportWorkerFile(): string {
  const sibling = fileURLToPath(new URL('./export-worker.js', import.meta.url));
  if (existsSync(sibling)) return sibling;
  return fileURLToPath(
    new URL('../../../dist/modules/data-exports/export-worker.js', import.meta.url),
  );
}

/**
 * Counts a scope's rows in a worker thread of its own: a count of a large table is tens or
 * hundreds of milliseconds of SQLite work, which on the request thread would delay the requests
 * served meanwhile (bench:exports). Rejects when the worker fails or stops without a count.
 */
export async function countInThread(
  job: CountThreadJob,
  file = exportWorkerFile(),
): Promise<number> {
  return (await countAndSampleInThread(job, file)).count;
}

/**
 * {@link countInThread}, and the sample of an estimate (job.sample): on PostgreSQL the request
 * thread's connection is synchronous, and a sample planned badly (a scan and sort of the whole
 * range on a table not yet analysed) would block the event loop; the worker's session cannot
 * sort (PG_READER_OPTIONS).
 */
export function countAndSampleInThread(
  job: CountThreadJob,
  file = exportWorkerFile(),
): Promise<Counted> {
  if (!existsSync(file)) {
    return Promise.reject(
      new Error(`the export worker ${file} is missing: build the service (npm run build)`),
    );
  }
  const worker = new Worker(file, { workerData: job, resourceLimits: RESOURCE_LIMITS });
  return new Promise<Counted>((resolve, reject) => {
    let count: Counted | null = null;
    let failure: string | null = null;
    worker.on('message', (m: ExportThreadMessage) => {
      if (m.type === 'counted') count = { count: m.count, sample: m.sample };
      else if (m.type === 'failed') failure = m.message;
    });
    worker.on('error', (err) => {
      failure ??= `export worker crashed: ${err.message}`;
    });
    worker.once('exit', (code) => {
      if (count !== null && failure === null) resolve(count);
      else reject(new Error(failure ?? `export worker stopped (exit code ${code})`));
    });
  });
}

/**
 * One export job running in its own worker thread. `done` settles once the thread has exited:
 * with the figures of the complete file, or rejected when the worker failed, crashed or was
 * stopped. `stop()` terminates the thread at once (DELETE, reset, shutdown).
 */
export class ExportThread {
  readonly done: Promise<Written>;
  /** Rows written so far, as last reported. */
  records = 0;
  private readonly worker: Worker;

  constructor(job: ExportThreadJob, file = exportWorkerFile()) {
    if (!existsSync(file)) {
      throw new Error(`the export worker ${file} is missing: build the service (npm run build)`);
    }
    this.worker = new Worker(file, { workerData: job, resourceLimits: RESOURCE_LIMITS });
    // Never what keeps the process alive: shutdown terminates it.
    this.worker.unref();
    this.done = new Promise<Written>((resolve, reject) => {
      let written: Written | null = null;
      let failure: string | null = null;
      this.worker.on('message', (m: ExportThreadMessage) => {
        if (m.type === 'progress') this.records = m.records;
        else if (m.type === 'done') written = m.written;
        else if (m.type === 'failed') failure = m.message;
      });
      this.worker.on('error', (err) => {
        failure ??= `export worker crashed: ${err.message}`;
      });
      this.worker.on('messageerror', (err) => {
        failure ??= `export worker message unreadable: ${err.message}`;
      });
      this.worker.once('exit', (code) => {
        if (written !== null && failure === null) resolve(written);
        else reject(new Error(failure ?? `export worker stopped (exit code ${code})`));
      });
    });
    // The runner awaits `done`; this keeps a rejection that races its await from being unhandled.
    this.done.catch(() => undefined);
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}
