/**
 * Sampled histories (market indices, rank): points fall on multiples of an interval on the
 * service clock since the Unix epoch, and are kept a number of days.
 */

/** The latest multiple of `intervalMs` (since the Unix epoch) at or before `nowMs`. */
export function latestBoundary(nowMs: number, intervalMs: number): number {
  return Math.floor(nowMs / intervalMs) * intervalMs;
}

/** Points older than this (exclusive) are deleted when `boundaryMs` is sampled. */
export function retentionCutoff(boundaryMs: number, historyDays: number): number {
  return boundaryMs - historyDays * 86_400_000;
}
