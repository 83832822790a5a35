import { Injectable } from '@nestjs/common';

/** Takes a world's work lock on the cluster's lock session: its release, or null (held elsewhere). */
export type WorkLocker = (world: string) => Promise<(() => Promise<void>) | null>;

/**
 * Which ephemeral worlds have a create or delete under way, so that recovery and the sweep
 * remove only those a stop interrupted. Here: an in-process set. Cluster mode (see
 * docs/cluster.md) adds the world's work lock, a session advisory lock on the instance's lock
 * session (set by ClusterService), held for the whole create or delete: another instance's
 * recovery finds it held and leaves the world to its maker; if the maker dies, PostgreSQL
 * releases the lock and the next recovery or sweep removes the world.
 */
@Injectable()
export class WorldWork {
  private readonly busy = new Set<string>();
  /** Cluster mode: the work lock on this instance's lock session (null: one instance). */
  locker: WorkLocker | null = null;

  /**
   * Runs `step` as the only create or delete of `world`: marked busy here and, in cluster mode,
   * holding the world's work lock until it settles. Returns null without running it when the
   * world's work is under way already, here or on a live instance.
   */
  async exclusive<R>(world: string, step: () => Promise<R>): Promise<{ value: R } | null> {
    if (this.busy.has(world)) return null;
    this.busy.add(world);
    try {
      const release = this.locker === null ? null : await this.locker(world);
      if (this.locker !== null && release === null) return null;
      try {
        return { value: await step() };
      } finally {
        await release?.();
      }
    } finally {
      this.busy.delete(world);
    }
  }
}
