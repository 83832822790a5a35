import { flushBatch, startBatch, type Batch } from './connection.js';

/** Wall-clock time and a one-shot timer: real ones in the service, scripted ones in unit tests. */
export interface CoalescerTimers {
  now(): number;
  schedule(ms: number, run: () => void): { unref?(): void };
}

const REAL_TIMERS: CoalescerTimers = {
  now: () => performance.now(),
  schedule: (ms, run) => setTimeout(run, ms),
};

/**
 * Per-connection coalescing of the engine-event fan-out: the frames a connection gets leave in one
 * socket write per batch. A write costs the same system call whatever it carries, and at 1,000
 * subscribers those calls are most of the fan-out's CPU, so under a steady stream of updates
 * fewer, fuller writes keep the server ahead of the stream.
 *
 * Leading edge: when nothing was written in the last `windowMs`, a batch leaves as soon as the
 * fan-out that opened it ends, so a quiet feed gets no delay at all. Otherwise the batch is held
 * open from its first message for `windowMs` and leaves when that ends, with every message that
 * joined it meanwhile: a message waits at most `windowMs` (plus however late the timer fires),
 * and under a steady stream each write carries everything of a full window (at 300 updates/s and
 * 5 ms, two updates a write rather than 1.5 with a window counted from the last write).
 * `windowMs` 0 writes every fan-out at its end. The window is transport timing on the wall clock
 * (performance.now), not a business time rule: the injected service clock, which tests move at
 * will, does not apply.
 */
export class Coalescer {
  private open: Batch | null = null;
  private timer: { unref?(): void } | null = null;
  private lastFlush = Number.NEGATIVE_INFINITY;

  constructor(
    readonly windowMs: number,
    private readonly timers: CoalescerTimers = REAL_TIMERS,
  ) {}

  /** The batch the current fan-out adds its frames to (see Connection.sendEvent). */
  batch(): Batch {
    return (this.open ??= startBatch());
  }

  /**
   * The fan-out that took {@link batch} is done: write now if the window allows, else make sure
   * the batch is written when the window ends.
   */
  release(): void {
    const open = this.open;
    if (open === null || this.timer !== null) return;
    if (open.connections.length === 0) {
      // Nothing held: the batch costs nothing and opens no window.
      this.open = null;
      return;
    }
    if (this.timers.now() - this.lastFlush >= this.windowMs) {
      this.flush();
      return;
    }
    // Held for a window from now, its first message's arrival (windowMs is whole ms; Node fires
    // a timer no earlier than asked, on its loop clock, and at most about a ms late).
    this.timer = this.timers.schedule(this.windowMs, () => {
      this.timer = null;
      this.flush();
    });
    this.timer.unref?.();
  }

  /** Writes what is held now (shutdown, tests). */
  flushNow(): void {
    this.flush();
  }

  private flush(): void {
    const open = this.open;
    this.open = null;
    if (open === null) return;
    flushBatch(open);
    // The window counts from the end of the write: writing to 1,000 sockets takes milliseconds
    // on a busy machine, and a fan-out right behind it is held rather than written alone.
    this.lastFlush = this.timers.now();
  }
}
