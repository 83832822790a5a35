import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteMeta } from '../../api/route-meta.js';
import type { LegCharge, LimitsService } from '../../../modules/limits/limits.service.js';

/**
 * preValidation, after the credential and before any validation: the key's tier ceiling, the
 * route's own limit and the quotas, charged together (with a batch's per-IP legs), so an
 * over-limit caller learns that rather than what is wrong with its body.
 */
export async function routeLimits(
  req: FastifyRequest,
  reply: FastifyReply,
  meta: RouteMeta,
  operation: string,
  limits: LimitsService | null,
  legs: LegCharge | null,
): Promise<void> {
  const credential = req.svc.credential;
  if (credential === null || limits === null) return;
  await limits.checkCredential(credential, meta, meta.routeLimitGroup ?? operation, reply, legs);
}
