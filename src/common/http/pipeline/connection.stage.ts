import type { FastifyReply, FastifyRequest } from 'fastify';
import { arrived, behindClose, closesConnection, isLatest } from '../connection-order.js';
import { malformedRequest } from '../raw-http.js';
import { shuttingDown, type Lifecycle } from './pipeline-state.js';

/**
 * Behind an answer that closes the connection a pipelined request is never answered, so it is
 * not run (see connection-order.ts): checked as it arrives and before each step that acts.
 * True when the request was dropped.
 */
export function skipBehindClose(req: FastifyRequest, reply: FastifyReply): boolean {
  if (!behindClose(req.raw)) return false;
  reply.hijack();
  return true;
}

/** onRequest, first: the request takes its place on its connection. */
export function arrive(req: FastifyRequest, reply: FastifyReply): boolean {
  arrived(req.raw);
  return skipBehindClose(req, reply);
}

/** onError: an error answer that closes its connection drops what is queued behind it. */
export function noteClosingError(req: FastifyRequest, reply: FastifyReply): void {
  if (String(reply.getHeader('connection') ?? '').toLowerCase() === 'close') {
    closesConnection(req.raw);
  }
}

/**
 * While shutting down, a new request is 503 and its connection closes; a request whose HTTP is
 * malformed (see raw-http.ts) is refused and its connection closed.
 */
export function refuseClosingOrMalformed(
  req: FastifyRequest,
  reply: FastifyReply,
  state: Lifecycle,
): void {
  if (state.closing) {
    reply.header('Connection', 'close');
    closesConnection(req.raw);
    throw shuttingDown();
  }
  const malformed = malformedRequest(req.raw);
  if (malformed !== null) {
    reply.header('Connection', 'close');
    closesConnection(req.raw);
    throw malformed;
  }
}

/**
 * onSend: while shutting down, an answer with nothing queued behind it on its connection ends
 * that connection, so the exit need not wait SHUTDOWN_DRAIN_MS to drop it (a request already
 * queued behind keeps it open and gets its 503).
 */
export function closeAfterLastAnswer(
  req: FastifyRequest,
  reply: FastifyReply,
  state: Lifecycle,
): void {
  if (state.closing && isLatest(req.raw)) reply.header('Connection', 'close');
}
