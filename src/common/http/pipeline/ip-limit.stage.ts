import type { FastifyRequest } from 'fastify';
import type { RouteMeta } from '../../api/route-meta.js';
import type { LegCharge, LimitsService } from '../../../modules/limits/limits.service.js';

/**
 * onRequest: every request counts against the per-IP ceiling of its path category (after CORS, so
 * a preflight is not charged), an operation past its sunset included. A per-leg route
 * (POST /orders/batch) is charged once its body is parsed: see {@link gateBatchLegs}.
 */
export async function ipLimit(
  req: FastifyRequest,
  meta: RouteMeta | undefined,
  limits: LimitsService | null,
): Promise<void> {
  await limits?.checkIp(req, meta);
}

/**
 * preValidation, before authentication as per-IP ceilings are: a batch's legs meet the per-IP
 * ceiling, all or nothing; they are charged with the key's limits (see route-limits.stage.ts).
 * A batch refused before that charge (a bad credential) counts once, like any request
 * ({@link settleBatchLegs}, after the answer).
 */
export async function gateBatchLegs(
  req: FastifyRequest,
  limits: LimitsService | null,
): Promise<LegCharge | null> {
  const legs = limits?.legCharge(req) ?? null;
  if (legs !== null) await limits!.gateLegs(legs);
  return legs;
}

/** onResponse: a batch that never reached its leg charge still counts once per IP. */
export async function settleBatchLegs(
  req: FastifyRequest,
  meta: RouteMeta | undefined,
  limits: LimitsService | null,
): Promise<void> {
  await limits?.settleLegs(req, meta);
}
