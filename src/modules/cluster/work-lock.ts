import { lockKey, WORK_NAMESPACE } from './lock-key.js';
import type { LockSession } from './lock-session.js';

/** Gives a work lock up; safe to call twice, never throws. */
export type WorkRelease = () => Promise<void>;

/**
 * Takes the work lock of `name` (an ephemeral world's create or delete) on the instance's lock
 * session if no other session holds it: a session advisory lock, so a peer's recovery can tell a
 * create or delete under way on a live instance (the lock is held) from one a dead instance left
 * (PostgreSQL released it with the backend). Returns the release, or null when another session
 * holds it. Session locks are re-entrant: the instance itself must keep its own work apart (the
 * caller's in-process set, WorldWork). Throws when the database cannot be reached.
 */
export async function tryWorkLock(session: LockSession, name: string): Promise<WorkRelease | null> {
  const key = lockKey(WORK_NAMESPACE, name);
  if (!(await session.tryLock(key))) return null;
  // The session the lock was taken in: if it is lost meanwhile, the lock went with it.
  const generation = session.generation;
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    if (!session.connected || session.generation !== generation) return;
    await session.unlock(key).catch(() => undefined);
  };
}
