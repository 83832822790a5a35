import { createRequire } from 'node:module';
import type pg from 'pg';

let driver: typeof pg | null = null;

/**
 * The pg driver, loaded on first use: only PostgreSQL deployments connect with it, and loading it
 * (with what it probes at load) cost a SQLite boot about a tenth of a second of CPU.
 */
export function pgDriver(): typeof pg {
  driver ??= createRequire(import.meta.url)('pg') as typeof pg;
  return driver;
}
