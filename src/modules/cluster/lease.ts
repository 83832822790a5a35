import type { LockKey } from './lock-key.js';
import type { LockSession } from './lock-session.js';

/**
 * A lease for a run-once timer not tied to a world (the ephemeral worlds' expiry sweep, the
 * export sweep): a session advisory lock on the lease's name, on the instance's lock session.
 * Whoever holds it runs the timer's step; the others skip it. It lasts as long as the session:
 * when the holder dies, PostgreSQL releases it and the next instance to try takes it over.
 */
export class Lease {
  /** The session generation the lock was taken in; -1: not held. */
  private heldIn = -1;
  private trying: Promise<boolean> | null = null;

  constructor(
    private readonly session: LockSession,
    readonly key: LockKey,
  ) {}

  /** Held now: taken in the session that is still connected. */
  get held(): boolean {
    return this.session.connected && this.heldIn === this.session.generation;
  }

  /** True when this instance holds the lease, taking it first if it is free. */
  tryHold(): Promise<boolean> {
    if (this.held) return Promise.resolve(true);
    this.trying ??= this.take().finally(() => (this.trying = null));
    return this.trying;
  }

  private async take(): Promise<boolean> {
    try {
      await this.session.ensure();
      const generation = this.session.generation;
      if (!(await this.session.tryLock(this.key))) return false;
      this.heldIn = generation;
      return this.held;
    } catch {
      // No database: nobody can be shown to hold it, and running a sweep twice is what the
      // lease exists to prevent: skip this round.
      return false;
    }
  }

  /**
   * Runs `step` if this instance holds the lease (taking it if free); returns whether it ran.
   * For a timer: `setInterval(() => void lease.run(() => this.sweep()), ms)`.
   */
  async run(step: () => unknown): Promise<boolean> {
    if (!(await this.tryHold())) return false;
    await step();
    return true;
  }

  /** Gives the lease up (a stopping instance), so another takes it at its next round. */
  async release(): Promise<void> {
    if (!this.held) return;
    this.heldIn = -1;
    await this.session.unlock(this.key);
  }
}
