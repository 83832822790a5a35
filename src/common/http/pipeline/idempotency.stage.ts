import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IdempotencyService } from '../../../modules/access/idempotency.service.js';

/**
 * preHandler, the body validated: an Idempotency-Key's replay or conflict is answered now, before
 * the controller (true: answered here). A request without the header has nothing to begin and
 * is told so at once, not through a promise (the order hot path).
 */
export function beginIdempotent(
  req: FastifyRequest,
  reply: FastifyReply,
  idempotency: IdempotencyService | null,
): boolean | Promise<boolean> {
  if (idempotency === null || req.headers['idempotency-key'] === undefined) return false;
  return idempotency.begin(req, reply);
}

/** onSend: the answer of a request run under an Idempotency-Key is stored. */
export async function finishIdempotent(
  req: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  idempotency: IdempotencyService | null,
): Promise<void> {
  if (req.idempotency !== undefined && idempotency !== null) {
    await idempotency.finish(req, reply, payload);
  }
}
