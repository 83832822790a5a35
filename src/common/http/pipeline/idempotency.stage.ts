import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IdempotencyService } from '../../../modules/access/idempotency.service.js';

/**
 * preHandler, the body validated: an Idempotency-Key's replay or conflict is answered now, before
 * the controller (true: answered here).
 */
export async function beginIdempotent(
  req: FastifyRequest,
  reply: FastifyReply,
  idempotency: IdempotencyService | null,
): Promise<boolean> {
  if (idempotency === null) return false;
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
