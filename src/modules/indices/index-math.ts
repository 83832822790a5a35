/**
 * The market indices, computed from one engine's markets: one index per market category present
 * among the markets (slug: the category in lower case) plus `all`. No Nest or database imports.
 */
import { latestBoundary } from '../../common/sampling/boundaries.js';

/** The index over every market, whatever its category. */
export const ALL_INDEX = 'all';

/** What an index needs of one market: its category, status and mark price (YES cents). */
export interface MarketMark {
  category: string;
  status: string;
  /** Mid of the best bid and ask when both exist, else the last trade price, else null. */
  mark: number | null;
}

export interface IndexValue {
  slug: string;
  name: string;
  /** Mean mark of the included markets, YES cents rounded to 2 decimals; null when none. */
  value: number | null;
  /** Markets included: OPEN or HALTED, with a mark. */
  market_count: number;
}

/** Statuses whose markets an index includes. */
const LIVE_STATUSES = new Set(['OPEN', 'HALTED']);

export function indexSlug(category: string): string {
  return category.toLowerCase();
}

/** "Sports markets", "All markets". */
export function indexName(slug: string): string {
  return `${slug.charAt(0).toUpperCase()}${slug.slice(1)} markets`;
}

/**
 * Mean of the marks in hundredths of a cent, rounded half up, as an integer: marks are multiples
 * of 0.5, so the sum of twice each is an integer and the rounding is done on an exact ratio.
 */
export function meanHundredths(marks: number[]): number | null {
  if (marks.length === 0) return null;
  const twice = marks.reduce((s, m) => s + Math.round(m * 2), 0);
  // mean x 100 = (twice / 2) x 100 / n = twice x 50 / n; Math.round is half up (toward +inf),
  // and marks are positive.
  return Math.round((twice * 50) / marks.length);
}

/** Every index (slug order), from the markets of one engine. */
export function computeIndices(markets: readonly MarketMark[]): IndexValue[] {
  const marks = new Map<string, number[]>([[ALL_INDEX, []]]);
  for (const m of markets) {
    const slug = indexSlug(m.category);
    if (!marks.has(slug)) marks.set(slug, []);
    if (!LIVE_STATUSES.has(m.status) || m.mark === null) continue;
    marks.get(slug)!.push(m.mark);
    marks.get(ALL_INDEX)!.push(m.mark);
  }
  return [...marks.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([slug, ms]) => {
      const h = meanHundredths(ms);
      return {
        slug,
        name: indexName(slug),
        value: h === null ? null : h / 100,
        market_count: ms.length,
      };
    });
}

/**
 * The sampling boundary a catch-up at `now` records, or null when there is none to record: the
 * latest multiple of `intervalMs` at or before `now`, if it is later than `lastRecorded` (the
 * boundary recorded last, null when none). Boundaries passed in between are not back-filled.
 */
export function boundaryToRecord(
  now: number,
  intervalMs: number,
  lastRecorded: number | null,
): number | null {
  const boundary = latestBoundary(now, intervalMs);
  return lastRecorded !== null && boundary <= lastRecorded ? null : boundary;
}
