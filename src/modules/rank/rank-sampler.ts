import { latestBoundary, retentionCutoff } from '../../common/sampling/boundaries.js';
import { standings, type AccountPnl, type Standing } from './rank-math.js';

/** Where one environment's rank history is kept (its engine database). */
export interface RankStore {
  /** Epoch ms of the newest sampled boundary, or null when none was. */
  latestSampleMs(): number | null;
  /**
   * In one transaction: records boundary `timeMs` with one point per standing, unless that
   * boundary is recorded already (then nothing is written and it answers false), and deletes
   * samples and points older than `cutoffMs`.
   */
  record(timeMs: number, points: readonly Standing[], cutoffMs: number, nowMs: number): boolean;
}

export interface RankSamplerOptions {
  intervalMs: number;
  historyDays: number;
  /** The account never ranked (the house). */
  excluded: string;
}

/**
 * Samples one environment's leaderboard at every multiple of the interval on the service clock:
 * each call to {@link catchUp} records the latest boundary passed if it was not recorded yet
 * (missed boundaries are not back-filled: the standings of then are gone), with the standings as
 * they are when it runs. Synchronous from the store read to the commit, so two catch-ups cannot
 * interleave in this process; the store's unique (account, time) keys refuse a duplicate anyway.
 */
export class RankSampler {
  /** The newest boundary known to be recorded (a fast path that skips the store read). */
  private done = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: RankStore,
    private readonly opts: RankSamplerOptions,
  ) {}

  /**
   * Records the latest boundary at or before `nowMs` unless it is recorded already; `totals`
   * (null: the engine is unavailable, try again later) is read only when a sample is due.
   * Answers the boundary it recorded, or null.
   */
  catchUp(nowMs: number, totals: () => readonly AccountPnl[] | null): number | null {
    const boundary = latestBoundary(nowMs, this.opts.intervalMs);
    if (boundary <= this.done) return null;
    const latest = this.store.latestSampleMs();
    if (latest !== null && latest >= boundary) {
      this.done = latest;
      return null;
    }
    const t = totals();
    if (t === null) return null;
    const wrote = this.store.record(
      boundary,
      standings(t, this.opts.excluded),
      retentionCutoff(boundary, this.opts.historyDays),
      nowMs,
    );
    this.done = boundary;
    return wrote ? boundary : null;
  }
}
