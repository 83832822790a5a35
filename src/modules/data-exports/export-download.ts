import { createReadStream } from 'node:fs';
import { pipeline, Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../common/errors/domain-error.js';
import type { ExportFile } from './data-exports.service.js';

/** The byte range a `Range` header asks of a file of `size` bytes: null for the whole file. */
export function byteRange(
  header: string | undefined,
  size: number,
): [number, number] | null | 'unsatisfiable' {
  if (header === undefined) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  // A syntactically invalid or multi-range header is ignored (RFC 9110 14.2): the whole file.
  if (m === null || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return [Math.max(0, size - suffix), size - 1];
  }
  const first = Number(m[1]);
  const last = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < first) return null;
  if (first >= size) return 'unsatisfiable';
  return [first, last];
}

/** Whether the client takes gzip (a q=0 refuses it). */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding.trim() !== 'gzip' && coding.trim() !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * Sends an export's file: whole (gzip-encoded when the client asks), or one byte range of the
 * file as stored (206; a range past the end is 416 with `Content-Range: bytes * /size`). The ETag
 * is the file's sha256; HEAD sends the headers only.
 */
export function sendExportFile(req: FastifyRequest, reply: FastifyReply, file: ExportFile): void {
  const range = byteRange(req.headers.range, file.size);
  if (range === 'unsatisfiable') {
    throw new DomainError(
      'RANGE_NOT_SATISFIABLE',
      `The range ${String(req.headers.range)} is outside the file's ${file.size} bytes`,
      { size_bytes: file.size },
      { 'Content-Range': `bytes */${file.size}`, 'Accept-Ranges': 'bytes' },
    );
  }
  const ext = file.format === 'CSV' ? 'csv' : 'jsonl';
  reply
    .type(file.format === 'CSV' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
    .header('Content-Disposition', `attachment; filename="${file.id}.${ext}"`)
    .header('Accept-Ranges', 'bytes')
    .header('ETag', `"${file.sha256}"`)
    .header('Vary', 'Accept-Encoding');
  const head = req.method === 'HEAD';
  if (range !== null) {
    const [first, last] = range;
    reply
      .code(206)
      .header('Content-Range', `bytes ${first}-${last}/${file.size}`)
      .header('Content-Length', String(last - first + 1));
    void reply.send(
      head ? Readable.from([]) : createReadStream(file.path, { start: first, end: last }),
    );
    return;
  }
  if (acceptsGzip(req.headers['accept-encoding'])) {
    reply.header('Content-Encoding', 'gzip');
    void reply.send(
      head
        ? Readable.from([])
        : pipeline(createReadStream(file.path), createGzip(), () => undefined),
    );
    return;
  }
  reply.header('Content-Length', String(file.size));
  void reply.send(head ? Readable.from([]) : createReadStream(file.path));
}
