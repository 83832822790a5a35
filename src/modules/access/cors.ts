import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../common/errors/domain-error.js';

export const EXPOSED_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-Quota-Daily-Limit',
  'X-Quota-Daily-Remaining',
  'X-Quota-Monthly-Limit',
  'X-Quota-Monthly-Remaining',
  'Retry-After',
  'X-Request-Id',
  'Svc-API-Version',
  'Deprecation',
  'Sunset',
  'Link',
  'Idempotent-Replayed',
  // Which sandbox scenario shaped the answer (the demo app and the Explorer show it).
  'Svc-Scenario',
].join(', ');

const ALLOWED_HEADERS = [
  'Content-Type',
  'X-API-Key',
  'Authorization',
  'Idempotency-Key',
  'X-Svc-Timestamp',
  'X-Svc-Signature',
  'X-Request-Id',
  'If-None-Match',
].join(', ');

const ALLOWED_METHODS = 'GET, POST, PATCH, PUT, DELETE, OPTIONS';

function carriesCredential(req: FastifyRequest): boolean {
  const h = req.headers;
  return h['x-api-key'] !== undefined || h.authorization !== undefined || h.cookie !== undefined;
}

/**
 * A request whose Origin is the origin it was sent to (its scheme and Host) is not cross-origin
 * (CONTRACT.md "Browser pages"): the service's own pages (/explorer, /app) post with their
 * credentials. Host comes from the request itself, so this grants nothing a page on another
 * origin could use: a browser sends that page's origin, which differs from the API's Host.
 */
export function isSameOrigin(req: FastifyRequest, origin: string): boolean {
  const host = req.headers.host;
  if (host === undefined || host === '') return false;
  return origin.toLowerCase() === `${req.protocol}://${host}`.toLowerCase();
}

/**
 * CORS as CONTRACT.md fixes it. The request's own origin and first-party origins get credentials
 * allowed, their origin echoed
 * and the limit headers exposed. Any other origin may make uncredentialed requests only: a
 * credentialed one is refused with 403 CORS_ORIGIN_REJECTED, and its preflights get no allow
 * headers. Returns true when the request was answered here (a preflight).
 */
export function applyCors(
  req: FastifyRequest,
  reply: FastifyReply,
  firstParty: ReadonlySet<string>,
): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  reply.header('Vary', 'Origin');
  const trusted = firstParty.has(origin) || isSameOrigin(req, origin);
  const preflight =
    req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
  if (preflight) {
    if (trusted) {
      reply
        .header('Access-Control-Allow-Origin', origin)
        .header('Access-Control-Allow-Credentials', 'true')
        .header('Access-Control-Allow-Methods', ALLOWED_METHODS)
        .header('Access-Control-Allow-Headers', ALLOWED_HEADERS)
        .header('Access-Control-Max-Age', '600');
    }
    void reply.code(204).send();
    return true;
  }
  if (trusted) {
    reply
      .header('Access-Control-Allow-Origin', origin)
      .header('Access-Control-Allow-Credentials', 'true')
      .header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    return false;
  }
  if (carriesCredential(req)) {
    throw new DomainError(
      'CORS_ORIGIN_REJECTED',
      `Origin ${origin} may not send credentialed requests; call the API from your backend, which holds the key`,
      { origin },
    );
  }
  // Uncredentialed cross-origin reads (public markets, the contract) stay open to any origin.
  reply.header('Access-Control-Allow-Origin', '*');
  return false;
}
