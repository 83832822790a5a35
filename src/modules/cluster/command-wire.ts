import type { Redis } from 'ioredis';
import { DomainError } from '../../common/errors/domain-error.js';
import { ERROR_CODES, type ErrorCode } from '../../common/errors/error-codes.js';
import { WriterUnavailableError } from './cluster-errors.js';

/**
 * What travels between an instance and a world's writer over Redis Streams. Keys carry the
 * world (or the instance) in a hash tag, so a world's command stream and its writer's presence
 * key sit on one Redis Cluster node (the forwarding script touches both).
 */

/** A trading command as the writer's handler runs it: the operation, its arguments, its key. */
export interface ForwardedCommand {
  /** The operation, as the handler knows it (e.g. 'orders.place', 'orders.cancel'). */
  op: string;
  /** Its arguments: anything JSON can carry. */
  args: unknown;
  /** The caller's Idempotency-Key scope, so the writer records the effect in the same commit. */
  idempotency?: { ownerId: string; key: string } | null;
}

/** The writer's answer: the handler's result, or the DomainError it threw, as the client sees it. */
export type CommandAnswer =
  | { ok: true; result: unknown }
  | {
      ok: false;
      code: string;
      message: string;
      details: Record<string, unknown>;
      headers: Record<string, string>;
    };

/** The consumer group the writers of a world read its command stream in. */
export const WRITERS_GROUP = 'writers';

export function commandStream(world: string): string {
  return `cluster:{${world}}:commands`;
}

/** Holds the current writer's instance id while it serves the world (expires if it dies). */
export function writerPresenceKey(world: string): string {
  return `cluster:{${world}}:writer`;
}

export function replyStream(instanceId: string): string {
  return `cluster:reply:{${instanceId}}`;
}

/** The answer for an error the handler threw: a DomainError as it is, anything else INTERNAL. */
export function answerOf(err: unknown): CommandAnswer {
  if (err instanceof DomainError) {
    return {
      ok: false,
      code: err.code,
      message: err.message,
      details: err.details,
      headers: err.headers,
    };
  }
  return { ok: false, code: 'INTERNAL', message: 'Internal error', details: {}, headers: {} };
}

/** The error a failed answer stands for, thrown to the caller as if the command ran here. */
export function errorOf(answer: Extract<CommandAnswer, { ok: false }>): DomainError {
  // A code this version does not know (a newer writer during a rolling upgrade) is a 500.
  const code = (answer.code in ERROR_CODES ? answer.code : 'INTERNAL') as ErrorCode;
  if (code === 'WRITER_UNAVAILABLE') {
    const world = typeof answer.details.world === 'string' ? answer.details.world : '';
    return new WriterUnavailableError(world, '', answer.message);
  }
  return new DomainError(code, answer.message, answer.details, answer.headers);
}

/** The millisecond time in a stream entry id (`<ms>-<seq>`): when Redis added it. */
export function entryTime(id: string): number {
  return Number(id.slice(0, id.indexOf('-')));
}

/**
 * The absolute deadline of a forwarded command's entry on Redis's clock (ms): the one its
 * forwarder computed from when its caller began waiting (`dl`), and never later than the entry's
 * arrival plus its time to live (`ttl`; the only one in entries of older versions).
 */
export function entryDeadline(id: string, fields: Record<string, string>): number {
  const byArrival = entryTime(id) + Number(fields.ttl);
  const dl = Number(fields.dl);
  return fields.dl !== undefined && Number.isFinite(dl) ? Math.min(dl, byArrival) : byArrival;
}

/** A stream entry's fields as a record (Redis returns them as a flat list). */
export function fieldsOf(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]] = flat[i + 1];
  return out;
}

/**
 * Waits until a connection is ready, at most `ms`: a blocking reader's fresh duplicate (or one
 * reconnecting) refuses commands until then (no offline queue), which is no failure to report.
 * True when ready.
 */
export async function readyWithin(conn: Redis, ms: number): Promise<boolean> {
  if (conn.status === 'ready') return true;
  let timer: NodeJS.Timeout | undefined;
  let onReady: (() => void) | undefined;
  await new Promise<void>((resolve) => {
    onReady = resolve;
    timer = setTimeout(resolve, ms);
    conn.once('ready', onReady);
  });
  clearTimeout(timer);
  conn.off('ready', onReady!);
  return (conn.status as string) === 'ready';
}
