import { createHash } from 'node:crypto';
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import {
  formatRows,
  type RowSource,
  headerOf,
  type ExportFormat,
  type ExportScope,
} from './datasets.js';

/**
 * Rowids one counting step covers. A small count runs on the main thread (a create or estimate
 * needs the count to answer; a large one runs in a worker thread, see ExportRunner.count), so a
 * step is kept to a fraction of a millisecond of SQLite work on a quiet machine: bench:exports
 * profiled 20,000-rowid steps as stalls of the orders served beside them.
 */
const COUNT_SPAN = 2_000;

/** Characters of formatted rows gathered before a file write: few large writes, not many small. */
const FLUSH_BYTES = 1 << 20;

/** The next turn of the event loop, after pending I/O: requests are served between batches. */
export const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * Counts the scope's rows through row order `hi`, a span per turn. Stops early once past `stopAbove`
 * (the answer is then some number above it): an export over EXPORT_MAX_ROWS is refused anyway.
 */
export async function countRows(
  reader: RowSource,
  scope: ExportScope,
  hi: number,
  stopAbove = Number.MAX_SAFE_INTEGER,
): Promise<number> {
  let n = 0;
  for (let lo = 0; lo < hi; lo += COUNT_SPAN) {
    n += await reader.countRange(scope, lo, Math.min(hi, lo + COUNT_SPAN));
    if (n > stopAbove) return n;
    if (lo + COUNT_SPAN < hi) await nextTurn();
  }
  return n;
}

/** The first rows of a scope, formatted: what an estimate scales by the count. */
export interface SizeSample {
  rows: number;
  bytes: number;
}

/** Rows an estimate samples. */
const SAMPLE_ROWS = 100;

/**
 * The first {@link SAMPLE_ROWS} rows of the scope through row order `hi`, formatted. Read where
 * the count is read: on the request thread for a small table, else in the count's worker thread
 * (on PostgreSQL its session's plan walks the row_seq index, see PG_READER_OPTIONS).
 */
export async function sampleSize(
  reader: RowSource,
  scope: ExportScope,
  format: ExportFormat,
  hi: number,
): Promise<SizeSample> {
  const sample = await reader.page(scope, 0, hi, SAMPLE_ROWS);
  if (sample.length === 0) return { rows: 0, bytes: 0 };
  return { rows: sample.length, bytes: Buffer.byteLength(formatRows(scope.def, format, sample)) };
}

/** The estimated size: the header plus the mean size of the sampled rows times the count. */
export function estimateSize(
  scope: ExportScope,
  format: ExportFormat,
  count: number,
  sample: SizeSample | null,
): number {
  const header = Buffer.byteLength(headerOf(scope.def, format));
  if (count === 0 || sample === null || sample.rows === 0) return header;
  return header + Math.round((sample.bytes / sample.rows) * count);
}

export interface Written {
  records: number;
  bytes: number;
  sha256: string;
}

/**
 * How a job's worker thread paces itself. An export is background work on a machine whose CPUs
 * and disk also serve requests, so the worker does not run flat out: after each `sliceMs` of work
 * it rests `restPerWork` times as long (measured in wall time, so a busy machine, which stretches
 * the slices, also stretches the rests), and it flushes its file to disk every `syncBytes` so
 * the kernel never holds a whole export's dirty pages for one long flush at the end, which would
 * queue the service's own database syncs behind it.
 */
export interface Pacing {
  sliceMs: number;
  restPerWork: number;
  syncBytes: number;
}

export const EXPORT_PACING: Pacing = { sliceMs: 20, restPerWork: 0.5, syncBytes: 8 << 20 };

/**
 * Writes the scope's rows through row order `hi` to `path` in constant memory, a batch of rows at a
 * time, each formatted, hashed and gathered to about {@link FLUSH_BYTES} per write; the file is
 * on disk (fdatasync) when this resolves. It runs in an export job's worker thread
 * (export-worker.ts), so its writes are synchronous: they run on that thread, at its lowered
 * priority, rather than on the libuv pool the request thread's own file work uses. `progress`
 * hears the rows written so far after each batch. The worker is stopped by terminating it; the
 * caller removes the partial file of a write that did not finish.
 */
export async function writeRows(
  reader: RowSource,
  scope: ExportScope,
  format: ExportFormat,
  hi: number,
  path: string,
  batchRows: number,
  progress: (records: number) => void = () => undefined,
  pacing: Pacing = EXPORT_PACING,
): Promise<Written> {
  const fd = openSync(path, 'w', 0o600);
  const hash = createHash('sha256');
  let bytes = 0;
  let unsynced = 0;
  let records = 0;
  let pending = '';
  const flush = (): void => {
    if (pending === '') return;
    const buf = Buffer.from(pending, 'utf8');
    pending = '';
    hash.update(buf);
    for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off);
    bytes += buf.length;
    unsynced += buf.length;
    if (unsynced >= pacing.syncBytes) {
      fdatasyncSync(fd);
      unsynced = 0;
    }
  };
  try {
    pending = headerOf(scope.def, format);
    let lo = 0;
    let slice = performance.now();
    for (;;) {
      const rows = await reader.page(scope, lo, hi, batchRows);
      if (rows.length === 0) break;
      lo = Number(rows[rows.length - 1][0]);
      records += rows.length;
      pending += formatRows(scope.def, format, rows);
      if (pending.length >= FLUSH_BYTES) flush();
      progress(records);
      const worked = performance.now() - slice;
      if (worked >= pacing.sliceMs) {
        await sleep(worked * pacing.restPerWork);
        slice = performance.now();
      }
    }
    flush();
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return { records, bytes, sha256: hash.digest('hex') };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
