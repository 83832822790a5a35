import { Logger } from '@nestjs/common';
import { ConfigError } from '../../config/app-config.js';
import { LockSession } from './lock-session.js';
import { lockKey } from './lock-key.js';

/** 'INST': the one service instance a database serves today. */
const INSTANCE_NAMESPACE = 0x494e5354;
const KEY = lockKey(INSTANCE_NAMESPACE, 'service');

/** The lock a running service holds on its PostgreSQL database, released when it closes. */
export interface DatabaseLock {
  release(): Promise<void>;
}

/**
 * DATABASE_URL's counterpart of the DATA_DIR lock: two processes on one database would each keep
 * their own engine in memory over the same rows, so each would reserve the same money. Without
 * REDIS_URL (no cluster mode: no writer election, no forwarding) one instance serves a database:
 * it holds a session advisory lock on a dedicated connection, which PostgreSQL drops with the
 * session (a kill -9 leaves nothing behind). A second instance is refused at start as a
 * configuration error (exit 78). A holder that has just closed may still be ending its session, so
 * the lock is tried for `waitMs` before refusing.
 */
export async function lockDatabase(databaseUrl: string, waitMs = 3_000): Promise<DatabaseLock> {
  const log = new Logger('DatabaseLock');
  const session = new LockSession({
    databaseUrl,
    applicationName: 'svc-instance',
    queryTimeoutMs: 10_000,
    log,
  });
  const deadline = Date.now() + waitMs;
  try {
    for (;;) {
      if (await session.tryLock(KEY)) break;
      if (Date.now() >= deadline) {
        throw new ConfigError(
          'DATABASE_URL',
          'is in use by another running instance of the service: stop it first, give this one its own database, or set REDIS_URL on every instance to run several on one database (cluster mode)',
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await session.close();
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(
      'DATABASE_URL',
      `cannot be used: the instance lock could not be taken (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  let released = false;
  session.onLost((err) => {
    if (released) return;
    log.error(
      `the database instance lock's session ended (${err instanceof Error ? err.message : String(err)}): another instance could now start on this database`,
    );
  });
  return {
    release: async () => {
      released = true;
      await session.close();
    },
  };
}
