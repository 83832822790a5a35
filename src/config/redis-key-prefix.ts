import { createHash } from 'node:crypto';
import { resolve } from 'node:path';

/** What every Redis key and pub/sub channel of this deployment starts with (REDIS_KEY_PREFIX). */
export const REDIS_KEY_PREFIX_PATTERN = /^[!-~]{1,64}$/;

/**
 * The default REDIS_KEY_PREFIX: `svc:<12 hex>:` of the deployment's data. The instances of one
 * deployment share their database (one DATABASE_URL's host, port and database; or one DATA_DIR on
 * SQLite), so they derive the same prefix and share their limit windows, event streams and
 * signals; two deployments on one Redis store different data, so they get different prefixes and
 * never see each other's counters or events. User and password are left out: rotating the
 * database password must not move the keys.
 */
export function defaultRedisKeyPrefix(databaseUrl: string | null, dataDir: string): string {
  let identity: string;
  if (databaseUrl !== null) {
    const url = new URL(databaseUrl);
    identity = `postgres://${url.hostname}:${url.port || '5432'}${url.pathname}`;
  } else {
    identity = `sqlite:${resolve(dataDir)}`;
  }
  return `svc:${createHash('sha256').update(identity).digest('hex').slice(0, 12)}:`;
}
