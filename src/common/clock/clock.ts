/**
 * The service clock. Every time rule (MFA, signature skew, key expiry, limit windows, quotas,
 * webhook windows, sunsets) reads it, so tests move time instead of waiting.
 */
export abstract class Clock {
  /** Epoch milliseconds. */
  abstract now(): number;

  nowDate(): Date {
    return new Date(this.now());
  }

  nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }
}

/**
 * How far the sandbox clock control may move the clock ahead in all: ten years, far from where
 * time-ordered ids or ISO dates would break.
 */
export const MAX_CLOCK_OFFSET_MS = 10 * 366 * 24 * 3600 * 1000;

/**
 * Wall-clock time plus an offset that only moves forward (the sandbox clock control). `saved`,
 * when given, keeps the offset across restarts: ids sort by creation time, so a clock that went
 * back after a restart would list new ledger rows and orders before older ones.
 */
export class AdjustableClock extends Clock {
  private offsetMs: number;

  constructor(
    private readonly base: () => number = Date.now,
    private readonly saved: ClockOffsetStore | null = null,
  ) {
    super();
    this.offsetMs = saved?.load() ?? 0;
  }

  now(): number {
    return this.base() + this.offsetMs;
  }

  /** How far ahead of the base clock this clock runs, in milliseconds. */
  get offset(): number {
    return this.offsetMs;
  }

  advance(ms: number): void {
    if (!Number.isSafeInteger(ms) || ms < 0)
      throw new RangeError('advance takes a non-negative ms');
    const next = this.offsetMs + ms;
    if (next > MAX_CLOCK_OFFSET_MS) {
      throw new RangeError('the clock may run at most ten years ahead of the wall clock');
    }
    // Stored first: a clock that moved but could not say so would go back at the next start.
    this.saved?.save(next);
    this.offsetMs = next;
  }

  /**
   * Runs `offsetMs` ahead, if that is further than now (another instance's clock moved): the
   * offset only grows, so offsets applied late or twice change nothing. False when ignored.
   * `store: false` when the offset is already where this clock's store keeps it (a store shared
   * with the instance that moved: an ephemeral world's registry row).
   */
  follow(offsetMs: number, store = true): boolean {
    if (!Number.isSafeInteger(offsetMs) || offsetMs <= this.offsetMs) return false;
    const next = Math.min(offsetMs, MAX_CLOCK_OFFSET_MS);
    if (store) this.advance(next - this.offsetMs);
    else this.offsetMs = next;
    return true;
  }
}

/** Where an {@link AdjustableClock} keeps its offset between runs. */
export interface ClockOffsetStore {
  load(): number;
  save(offsetMs: number): void;
}

/** A clock pinned to a given instant that moves only when told (tests). */
export class ManualClock extends AdjustableClock {
  constructor(start: number | string | Date) {
    const t = new Date(start).getTime();
    super(() => t);
  }
}
