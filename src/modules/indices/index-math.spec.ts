import { describe, expect, it } from '@jest/globals';
import { boundaryToRecord, computeIndices, meanHundredths, type MarketMark } from './index-math.js';

const m = (category: string, mark: number | null, status = 'OPEN'): MarketMark => ({
  category,
  status,
  mark,
});

describe('computeIndices', () => {
  it('one index per category present (lower case) plus all, ordered by slug', () => {
    const out = computeIndices([m('SPORTS', 40), m('CRYPTO', 60), m('SPORTS', 50)]);
    expect(out).toEqual([
      { slug: 'all', name: 'All markets', value: 50, market_count: 3 },
      { slug: 'crypto', name: 'Crypto markets', value: 60, market_count: 1 },
      { slug: 'sports', name: 'Sports markets', value: 45, market_count: 2 },
    ]);
  });

  it('includes OPEN and HALTED markets with a mark only; a category left with none reads null', () => {
    const out = computeIndices([
      m('SPORTS', 40),
      m('SPORTS', 80, 'HALTED'),
      m('SPORTS', 10, 'CLOSED'),
      m('SPORTS', 90, 'RESOLVED'),
      m('SPORTS', null),
      m('POLITICS', 30, 'CLOSED'),
      m('POLITICS', null),
    ]);
    expect(out).toEqual([
      { slug: 'all', name: 'All markets', value: 60, market_count: 2 },
      { slug: 'politics', name: 'Politics markets', value: null, market_count: 0 },
      { slug: 'sports', name: 'Sports markets', value: 60, market_count: 2 },
    ]);
  });

  it('with no markets only all exists, null', () => {
    expect(computeIndices([])).toEqual([
      { slug: 'all', name: 'All markets', value: null, market_count: 0 },
    ]);
  });

  it('rounds the mean to 2 decimals, half up, exactly', () => {
    // 10 + 10 + 10.5 = 30.5 / 3 = 10.1666... -> 10.17
    expect(computeIndices([m('X', 10), m('X', 10), m('X', 10.5)])[0].value).toBe(10.17);
    // 8.5 / 8 = 1.0625 -> 1.06
    expect(meanHundredths([1, 1, 1, 1, 1, 1, 1, 1.5])).toBe(106);
    // 40.5 / 4 = 10.125: a half hundredth goes up -> 10.13
    expect(meanHundredths([10.5, 10, 10, 10])).toBe(1013);
    expect(computeIndices([m('X', 10.5), m('X', 10), m('X', 10), m('X', 10)])[0].value).toBe(10.13);
    expect(meanHundredths([])).toBeNull();
  });
});

describe('boundaryToRecord', () => {
  const MIN = 60_000;
  const noon = Date.parse('2026-11-22T12:00:00.000Z');

  it('is the latest multiple of the interval at or before now', () => {
    expect(boundaryToRecord(noon, MIN, null)).toBe(noon);
    expect(boundaryToRecord(noon + 59_999, MIN, null)).toBe(noon);
    expect(boundaryToRecord(noon + 60_000, MIN, null)).toBe(noon + MIN);
  });

  it('nothing to record until the next boundary passes; missed boundaries are skipped', () => {
    expect(boundaryToRecord(noon + 30_000, MIN, noon)).toBeNull();
    expect(boundaryToRecord(noon + 59_999, MIN, noon)).toBeNull();
    expect(boundaryToRecord(noon + MIN, MIN, noon)).toBe(noon + MIN);
    // Five boundaries passed at once: only the latest is recorded.
    expect(boundaryToRecord(noon + 5 * MIN + 10, MIN, noon)).toBe(noon + 5 * MIN);
    // A clock behind the last record never records an earlier boundary.
    expect(boundaryToRecord(noon - MIN, MIN, noon)).toBeNull();
  });
});
