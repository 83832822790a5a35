import { describe, expect, it } from '@jest/globals';
import { periodStart, periodTotals } from './leaderboard-math.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe('leaderboard periods', () => {
  it('start at 00:00 UTC today, on Monday and on the 1st; ALL has no start', () => {
    // 2026-11-22 is a Sunday.
    const sunday = at('2026-11-22T12:34:56.789Z');
    expect(iso(periodStart('DAY', sunday))).toBe('2026-11-22T00:00:00.000Z');
    expect(iso(periodStart('WEEK', sunday))).toBe('2026-11-16T00:00:00.000Z');
    expect(iso(periodStart('MONTH', sunday))).toBe('2026-11-01T00:00:00.000Z');
    expect(periodStart('ALL', sunday)).toBeNull();
    // A boundary is its own period's start.
    const monday = at('2026-11-23T00:00:00.000Z');
    expect(iso(periodStart('WEEK', monday))).toBe('2026-11-23T00:00:00.000Z');
    expect(iso(periodStart('DAY', monday - 1))).toBe('2026-11-22T00:00:00.000Z');
    // Across a month and a year end.
    const newYear = at('2027-01-01T05:00:00.000Z');
    expect(iso(periodStart('MONTH', newYear))).toBe('2027-01-01T00:00:00.000Z');
    expect(iso(periodStart('WEEK', newYear))).toBe('2026-12-28T00:00:00.000Z');
    expect(iso(periodStart('MONTH', at('2028-02-29T23:59:59.999Z')))).toBe(
      '2028-02-01T00:00:00.000Z',
    );
  });

  it('subtract the baseline total; an account missing from it started at 0', () => {
    const totals = [
      { accountId: 'usr_a', realizedPnl: 120, positions: 2 },
      { accountId: 'usr_b', realizedPnl: -30, positions: 1 },
    ];
    expect(periodTotals(totals, new Map([['usr_a', 100]]))).toEqual([
      { accountId: 'usr_a', realizedPnl: 20, positions: 2 },
      { accountId: 'usr_b', realizedPnl: -30, positions: 1 },
    ]);
    expect(periodTotals(totals, null)).toEqual(totals);
  });
});
