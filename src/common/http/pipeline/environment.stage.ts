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
