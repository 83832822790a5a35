import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { once } from 'node:events';
import {
  DatasetReader,
  formatRows,
  headerOf,
  type ExportFormat,
  type ExportScope,
} from './datasets.js';

/**
 * Rowids one counting step covers. Counting runs on the main thread (a create or estimate needs
 * the count to answer), so a step is kept to a fraction of a millisecond of SQLite work on a quiet
 * machine: bench:exports profiled 20,000-rowid steps as the main thread's only export work left,
 * each a stall of the orders served beside it.
 */
const COUNT_SPAN = 2_000;

/** Bytes of formatted rows gathered before a file write. */
const FLUSH_BYTES = 64 * 1024;

/** The next turn of the event loop, after pending I/O: requests are served between batches. */
export const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * Counts the scope's rows through rowid `hi`, a span per turn. Stops early once past `stopAbove`
 * (the answer is then some number above it): an export over EXPORT_MAX_ROWS is refused anyway.
 */
export async function countRows(
  reader: DatasetReader,
  scope: ExportScope,
  hi: number,
  stopAbove = Number.MAX_SAFE_INTEGER,
): Promise<number> {
  let n = 0;
  for (let lo = 0; lo < hi; lo += COUNT_SPAN) {
    n += reader.countRange(scope, lo, Math.min(hi, lo + COUNT_SPAN));
    if (n > stopAbove) return n;
    if (lo + COUNT_SPAN < hi) await nextTurn();
  }
  return n;
}

/** The estimated size: the header plus the mean size of a sample of rows times the count. */
export function estimateSize(
  reader: DatasetReader,
  scope: ExportScope,
  format: ExportFormat,
  hi: number,
  count: number,
): number {
  const header = Buffer.byteLength(headerOf(scope.def, format));
  if (count === 0) return header;
  const sample = reader.page(scope, 0, hi, 100);
  if (sample.length === 0) return header;
  const bytes = Buffer.byteLength(formatRows(scope.def, format, sample));
  return header + Math.round((bytes / sample.length) * count);
}

export interface Written {
  records: number;
  bytes: number;
  sha256: string;
}

/**
 * Writes the scope's rows through rowid `hi` to `path` in constant memory: a batch of rows per
 * event-loop turn, each formatted, hashed and written, waiting for 'drain' when the stream's
 * buffer is full. `progress` hears the rows written so far after each batch. It runs in an
 * export job's worker thread (export-worker.ts), which is stopped by terminating it; the caller
 * removes the partial file of a write that did not finish.
 */
export async function writeRows(
  reader: DatasetReader,
  scope: ExportScope,
  format: ExportFormat,
  hi: number,
  path: string,
  batchRows: number,
  progress: (records: number) => void = () => undefined,
): Promise<Written> {
  const fh = await open(path, 'w', 0o600);
  const out = fh.createWriteStream({ autoClose: false, highWaterMark: 1 << 16 });
  const hash = createHash('sha256');
  let bytes = 0;
  let records = 0;
  // Formatted rows gather to about FLUSH_BYTES before each write: one file write per batch of
  // a few rows would spend the time in system calls.
  let pending = '';
  const flush = async (): Promise<void> => {
    if (pending === '') return;
    const buf = Buffer.from(pending, 'utf8');
    pending = '';
    hash.update(buf);
    bytes += buf.length;
    if (!out.write(buf)) await once(out, 'drain');
  };
  const write = async (text: string): Promise<void> => {
    pending += text;
    if (pending.length >= FLUSH_BYTES) await flush();
  };
  try {
    await write(headerOf(scope.def, format));
    let lo = 0;
    for (;;) {
      const rows = reader.page(scope, lo, hi, batchRows);
      if (rows.length === 0) break;
      lo = Number(rows[rows.length - 1][0]);
      records += rows.length;
      await write(formatRows(scope.def, format, rows));
      progress(records);
      await nextTurn();
    }
    await flush();
    out.end();
    await once(out, 'finish');
  } finally {
    out.destroy();
    await fh.close().catch(() => undefined);
  }
  return { records, bytes, sha256: hash.digest('hex') };
}
