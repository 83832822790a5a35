import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ScenarioGate } from '../../../modules/scenarios/scenario-gate.js';

/**
 * preHandler, after the idempotency stage (a replay spends no scenario firing): a sandbox
 * scenario the request matches shapes it (see ScenarioGate). Undefined when none fired: the
 * request goes on at once.
 */
export function scenario(
  req: FastifyRequest,
  reply: FastifyReply,
  scenarios: ScenarioGate | null,
  operation: string,
): Promise<void> | undefined {
  return scenarios?.apply(req, reply, operation);
}
