import { retentionCutoff } from '../../common/sampling/boundaries.js';
import {
  boundaryToRecord,
  computeIndices,
  type IndexValue,
  type MarketMark,
} from './index-math.js';
import type { IndexPointStore } from './index-points.repository.js';

export interface SamplerOptions {
  /** The service clock, epoch ms. */
  now: () => number;
  intervalMs: number;
  historyDays: number;
  store: IndexPointStore;
  /** The markets of the engine, marked at its current prices. */
  markets: () => MarketMark[];
  /** False once the engine failed to match its database (until a restart): no sample then. */
  ready?: () => boolean;
}

/**
 * Records the indices of one engine at every multiple of `intervalMs` on the service clock. It
 * runs when told ({@link catchUp}): from a timer about once a second and at the start of every
 * indices read. A catch-up records the latest boundary passed, once (boundaries passed in between,
 * while the service was down or the clock jumped, are not back-filled), with the values read at
 * that moment, and deletes the points older than `historyDays` before it.
 */
export class IndexSampler {
  private lastRecorded: number | null;

  constructor(private readonly opts: SamplerOptions) {
    const latest = opts.store.latestTime();
    this.lastRecorded = latest === null ? null : Date.parse(latest);
  }

  /** The indices as they stand now. */
  current(): IndexValue[] {
    return computeIndices(this.opts.markets());
  }

  /** Records the latest boundary passed if it is not recorded yet; the boundary written, or null. */
  catchUp(): number | null {
    const boundary = boundaryToRecord(this.opts.now(), this.opts.intervalMs, this.lastRecorded);
    if (boundary === null) return null;
    if (this.opts.ready !== undefined && !this.opts.ready()) return null;
    const cutoff = retentionCutoff(boundary, this.opts.historyDays);
    this.opts.store.record(
      new Date(boundary).toISOString(),
      this.current(),
      new Date(cutoff).toISOString(),
    );
    this.lastRecorded = boundary;
    return boundary;
  }
}
