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

/** Wall-clock time plus an offset that only moves forward (the sandbox clock control). */
export class AdjustableClock extends Clock {
  private offsetMs = 0;

  constructor(private readonly base: () => number = Date.now) {
    super();
  }

  now(): number {
    return this.base() + this.offsetMs;
  }

  advance(ms: number): void {
    if (!Number.isSafeInteger(ms) || ms < 0)
      throw new RangeError('advance takes a non-negative ms');
    this.offsetMs += ms;
  }
}

/** A clock pinned to a given instant that moves only when told (tests). */
export class ManualClock extends AdjustableClock {
  constructor(start: number | string | Date) {
    const t = new Date(start).getTime();
    super(() => t);
  }
}
