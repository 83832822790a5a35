import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{8,64}$/;

/**
 * Request ids: a caller's well-formed X-Request-Id is kept (so it can trace through), anything
 * else is replaced with a fresh `req_` id.
 */
export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && ACCEPTABLE.test(given)) return given;
  return `req_${randomBytes(12).toString('base64url')}`;
}
