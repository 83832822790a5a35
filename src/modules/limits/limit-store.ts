/**
 * One charge against one counter: `units` more in the window that ends at `windowEnd` (epoch ms).
 * The bucket name includes the window start, so each window is its own counter.
 */
export interface Charge {
  bucket: string;
  units: number;
  limit: number;
  windowEnd: number;
  /**
   * Whose counter it is (a user id, `ip:<address>`): a shared store keeps one owner's counters
   * together (a Redis Cluster hash tag), so one request's charges are one atomic step on one node.
   * A bucket has the same tag wherever it is charged or read. Absent: the bucket itself.
   */
  tag?: string;
}

export type TakeResult =
  | { ok: true; /** counts after charging, one per charge */ counts: number[] }
  | { ok: false; /** the first charge that did not fit */ index: number; count: number };

/**
 * The only stateful part of the limits: atomic check-and-charge of several counters, all or
 * nothing. The in-process store is the embedded default; a shared store (Redis, with a Lua
 * script for the same all-or-nothing rule) can replace it without touching callers.
 */
export interface LimitStore {
  take(charges: readonly Charge[], now: number): TakeResult | Promise<TakeResult>;
  /** The counter's value now (0 when absent or expired); `tag` as in {@link Charge.tag}. */
  count(bucket: string, now: number, tag?: string): number | Promise<number>;
}

export const LIMIT_STORE = Symbol('LIMIT_STORE');

interface Counter {
  count: number;
  expiresAt: number;
}

/** In-process store: a Map of counters that expire at their window's end. */
export class MemoryLimitStore implements LimitStore {
  private readonly counters = new Map<string, Counter>();
  private nextSweep = 0;

  take(charges: readonly Charge[], now: number): TakeResult {
    this.sweep(now);
    for (let i = 0; i < charges.length; i++) {
      const c = charges[i];
      const used = this.live(c.bucket, now)?.count ?? 0;
      if (used + c.units > c.limit) return { ok: false, index: i, count: used };
    }
    const counts: number[] = new Array<number>(charges.length);
    for (let i = 0; i < charges.length; i++) {
      const c = charges[i];
      let counter = this.live(c.bucket, now);
      if (counter === undefined) {
        counter = { count: 0, expiresAt: c.windowEnd };
        this.counters.set(c.bucket, counter);
      }
      counter.count += c.units;
      counts[i] = counter.count;
    }
    return { ok: true, counts };
  }

  count(bucket: string, now: number): number {
    return this.live(bucket, now)?.count ?? 0;
  }

  private live(bucket: string, now: number): Counter | undefined {
    const c = this.counters.get(bucket);
    if (c !== undefined && c.expiresAt <= now) {
      this.counters.delete(bucket);
      return undefined;
    }
    return c;
  }

  /** Drops expired counters at most once a minute, so memory follows the active callers. */
  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    this.nextSweep = now + 60_000;
    for (const [k, c] of this.counters) if (c.expiresAt <= now) this.counters.delete(k);
  }
}
