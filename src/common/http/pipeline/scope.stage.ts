import type { RouteMeta } from '../../api/route-meta.js';
import { DomainError } from '../../errors/domain-error.js';
import type { Credential } from '../request-context.js';

/**
 * Scope, last: 403 EMAIL_NOT_VERIFIED when verifying the email would grant all that is missing
 * (a non-admin's session never gains admin scopes; an ADMIN_EMAILS user's does, once verified),
 * else 403 INSUFFICIENT_SCOPE naming the missing scopes.
 */
export function checkScopes(credential: Credential, meta: RouteMeta): void {
  if (meta.scopes.length === 0) return;
  const missing = meta.scopes.filter((s) => !credential.scopes.includes(s));
  if (missing.length === 0) return;
  const ifVerified = credential.scopesIfVerified;
  if (ifVerified !== undefined && missing.every((s) => ifVerified.includes(s))) {
    throw new DomainError(
      'EMAIL_NOT_VERIFIED',
      'Write operations need a verified email: send the token from the verification mail to POST /api/v1/auth/verify-email, then retry',
      { required_scopes: meta.scopes, missing_scopes: missing },
    );
  }
  throw new DomainError(
    'INSUFFICIENT_SCOPE',
    `This operation needs the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`,
    { required_scopes: meta.scopes, missing_scopes: missing },
  );
}
