import { describe, expect, it } from '@jest/globals';
import { useLockSessions } from '../../../test/support/lock-sessions.js';
import type { LockSession } from './lock-session.js';

/**
 * The lock session's statement timeout on a real PostgreSQL 15: a statement PostgreSQL does not
 * answer in time ends the session (its locks with it), but a main thread held past the timeout
 * (a long synchronous commit under load) does not, when the answer came in time.
 */
const lockSessions = useLockSessions();

function session(queryTimeoutMs: number): { s: LockSession; lost: unknown[] } {
  const s = lockSessions.open('lock-session-spec', queryTimeoutMs);
  const lost: unknown[] = [];
  s.onLost((err) => lost.push(err));
  return { s, lost };
}

/** Holds the main thread, as a synchronous statement of the SQL port does. */
function block(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('LockSession statement timeout', () => {
  it('keeps the session when the main thread was held past the timeout but the answer came in time', async () => {
    const { s, lost } = session(300);
    await s.ensure();
    const generation = s.generation;
    expect(await s.tryLock([7, 1])).toBe(true);
    // A statement PostgreSQL answers after 100 ms, sent (one turn of the event loop), then the
    // main thread held for 800 ms: the answer waits in the socket while the 300 ms timer is due.
    const answer = s.query<{ v: number }>('SELECT 1 AS v FROM pg_sleep(0.1)');
    await new Promise((r) => setImmediate(r));
    block(800);
    expect((await answer)[0].v).toBe(1);
    expect(lost).toEqual([]);
    expect(s.connected).toBe(true);
    expect(s.generation).toBe(generation);
    // The lock is still held by this very session: a second session is refused it.
    const other = session(5_000).s;
    expect(await other.tryLock([7, 1])).toBe(false);
  });

  it('ends the session when PostgreSQL does not answer within the timeout', async () => {
    const { s, lost } = session(300);
    expect(await s.tryLock([7, 2])).toBe(true);
    await expect(s.query('SELECT pg_sleep(2)')).rejects.toThrow('Query read timeout');
    expect(lost).toHaveLength(1);
    expect(s.connected).toBe(false);
    // Its lock went with it once the backend ends (the statement still sleeping first).
    const other = session(5_000).s;
    const deadline = Date.now() + 10_000;
    let taken = false;
    while (!taken && Date.now() < deadline) {
      taken = await other.tryLock([7, 2]);
      if (!taken) await new Promise((r) => setTimeout(r, 100));
    }
    expect(taken).toBe(true);
  });

  it('times each statement from when it is sent, not from when it was queued', async () => {
    const { s, lost } = session(1_000);
    // Five statements of 400 ms queued at once: each is answered within the timeout once sent,
    // though the last waits about 1.6 s behind the others.
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => s.query<{ v: number }>('SELECT 1 AS v FROM pg_sleep(0.4)')),
    );
    expect(answers.map((rows) => rows[0].v)).toEqual([1, 1, 1, 1, 1]);
    expect(lost).toEqual([]);
  });
});
