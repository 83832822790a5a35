import { describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { useLockSessions } from '../../../test/support/lock-sessions.js';
import type { LockSession } from './lock-session.js';
import { tryWorkLock } from './work-lock.js';

/**
 * A world's work lock on a real PostgreSQL 15: held by the instance making or deleting the world,
 * refused to every other session while that instance lives, free once its session ends.
 */
const lockSessions = useLockSessions();
const session = (name: string): LockSession => lockSessions.open(name);

describe('tryWorkLock', () => {
  it('refuses a world another live session works on; free after its release or its death', async () => {
    const maker = session('maker');
    const peer = session('peer');
    const release = await tryWorkLock(maker, 'wld_making');
    expect(release).not.toBeNull();
    expect(await tryWorkLock(peer, 'wld_making')).toBeNull();
    // Another world is not held up.
    const other = await tryWorkLock(peer, 'wld_other');
    expect(other).not.toBeNull();
    await release!();
    await release!(); // twice: no error, nothing more released
    const taken = await tryWorkLock(peer, 'wld_making');
    expect(taken).not.toBeNull();
    await taken!();

    // The maker dies in the middle of its work: PostgreSQL releases the lock with the session.
    const again = await tryWorkLock(maker, 'wld_making');
    expect(again).not.toBeNull();
    expect(await tryWorkLock(peer, 'wld_making')).toBeNull();
    await maker.close();
    expect(await tryWorkLock(peer, 'wld_making')).not.toBeNull();
    // A release after the session is gone does nothing (and does not throw).
    await again!();
  });

  it('sends the statements of many works at once one at a time on the session', async () => {
    const s = session('busy');
    const client = await s.ensure();
    let inFlight = 0;
    let most = 0;
    const query = client.query.bind(client) as (...a: unknown[]) => Promise<pg.QueryResult>;
    (client as unknown as { query: (...a: unknown[]) => Promise<pg.QueryResult> }).query = (
      ...a: unknown[]
    ) => {
      most = Math.max(most, ++inFlight);
      return query(...a).finally(() => inFlight--);
    };
    const releases = await Promise.all(
      Array.from({ length: 20 }, (_, i) => tryWorkLock(s, `wld_${i}`)),
    );
    expect(releases.every((r) => r !== null)).toBe(true);
    expect(most).toBe(1);
    await Promise.all(releases.map((r) => r!()));
  });
});
