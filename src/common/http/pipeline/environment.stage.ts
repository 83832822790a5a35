import type { FastifyRequest } from 'fastify';
import type { RouteMeta } from '../../api/route-meta.js';
import { DomainError } from '../../errors/domain-error.js';
import type { Credential } from '../request-context.js';

/**
 * Environment routing: paper credentials and the sandbox flag, then the route's rule
 * (sandbox-only routes take test keys only; real-money routes refuse them).
 */
export function routeEnvironment(c: Credential, meta: RouteMeta, sandboxOn: boolean): void {
  if (c.environment === 'test' && !sandboxOn) {
    throw new DomainError(
      'SANDBOX_DISABLED',
      'The developer sandbox is disabled: test keys are not accepted',
    );
  }
  if (meta.environment === 'sandbox-only') {
    if (!sandboxOn) throw new DomainError('SANDBOX_DISABLED', 'The developer sandbox is disabled');
    if (c.environment !== 'test') {
      throw new DomainError(
        'LIVE_KEY_SANDBOX_ENDPOINT',
        'This sandbox control accepts test keys only',
      );
    }
  }
  if (meta.environment === 'real-money' && c.environment === 'test') {
    throw new DomainError(
      'TEST_KEY_LIVE_ENDPOINT',
      'Test keys (and env:paper keys) cannot call real-money endpoints',
    );
  }
}

/**
 * The groups an ephemeral world does not serve yet: their records live in the paper world's
 * stores or follow paper-world timers. A world key calling them is refused, never served from
 * the shared paper world. {@link WORLD_REFUSED} names them for the OpenAPI document.
 */
export const WORLD_REFUSED =
  'RFQ (/rfq), data exports (/data, /exports) and crypto (/crypto, /sandbox/crypto)';
// The sandbox crypto control sets the shared paper index, so it is refused with the crypto reads.
const OUTSIDE_WORLDS = /^\/api\/v1\/(rfq|data|exports|crypto|sandbox\/crypto)(\/|$)/;

/** A world key's request to an operation its world does not serve: 4xx WORLD_OPERATION_UNSUPPORTED. */
export function refuseOutsideWorlds(req: FastifyRequest): void {
  const template = req.routeOptions.url ?? '';
  if (OUTSIDE_WORLDS.test(template)) {
    throw new DomainError(
      'WORLD_OPERATION_UNSUPPORTED',
      'This operation is not available inside an ephemeral world; call it with a test key of the shared paper world',
      { operation: `${req.method} ${template.replace(/^\/api\/v1/, '')}` },
    );
  }
}
