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
 * Per-connection coalescing of the engine-event fan-out: the frames a connection gets leave in at
 * most one socket write per `windowMs`. A write costs the same system call whatever it carries,
 * and at 1,000 subscribers it is most of the fan-out's CPU, so under a steady stream of updates
 * fewer, fuller writes keep the server ahead of the stream.
 *
 * Leading edge: when nothing was written in the last `windowMs`, a batch leaves as soon as the
 * fan-out that opened it ends, so a quiet feed gets no delay at all. Within the window, the frames
 * are held in the one open batch and leave together when it ends: a message waits at most
 * `windowMs` (plus however late the timer fires). `windowMs` 0 writes every fan-out at its end.
 * The window is transport timing on the wall clock (performance.now), not a business time rule:
 * the injected service clock, which tests move at will, does not apply.
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
    const now = this.timers.now();
    const wait = this.lastFlush + this.windowMs - now;
    if (wait <= 0) {
      this.flush(now);
      return;
    }
    // Whole ms, rounded down: Node fires a timer no earlier than asked and often a little late,
    // so the wait stays within the window it promises.
    this.timer = this.timers.schedule(Math.floor(wait), () => {
      this.timer = null;
      this.flush(this.timers.now());
    });
    this.timer.unref?.();
  }

  /** Writes what is held now (shutdown, tests). */
  flushNow(): void {
    this.flush(this.timers.now());
  }

  private flush(now: number): void {
    const open = this.open;
    this.open = null;
    if (open === null) return;
    this.lastFlush = now;
    flushBatch(open);
  }
}
