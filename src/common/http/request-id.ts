import { randomFillSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{8,64}$/;

// One CSPRNG refill per 341 ids instead of a system call per request.
const POOL = Buffer.alloc(4092);
let poolAt = POOL.length;

function randomId(): string {
  if (poolAt + 12 > POOL.length) {
    randomFillSync(POOL);
    poolAt = 0;
  }
  const id = POOL.toString('base64url', poolAt, poolAt + 12);
  poolAt += 12;
  return `req_${id}`;
}

/**
 * Request ids: a caller's well-formed X-Request-Id is kept (so it can trace through), anything
 * else is replaced with a fresh `req_` id.
 */
export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && ACCEPTABLE.test(given)) return given;
  return randomId();
}
