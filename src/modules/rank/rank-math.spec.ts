import { describe, expect, it } from '@jest/globals';
import { latestBoundary, retentionCutoff } from '../../common/sampling/boundaries.js';
import { standings } from './rank-math.js';

const pnl = (accountId: string, realizedPnl: number, positions = 1) => ({
  accountId,
  realizedPnl,
  positions,
});

describe('standings', () => {
  it('ranks by realized P&L, best first, ties sharing a rank and the next one skipping', () => {
    const s = standings(
      [pnl('usr_d', -10), pnl('usr_b', 50), pnl('usr_a', 50), pnl('usr_c', 0), pnl('usr_e', 0)],
      'house',
    );
    expect(s.map((x) => [x.accountId, x.realizedPnl, x.rank])).toEqual([
      ['usr_a', 50, 1],
      ['usr_b', 50, 1],
      ['usr_c', 0, 3],
      ['usr_e', 0, 3],
      ['usr_d', -10, 5],
    ]);
    expect(s.every((x) => x.participants === 5)).toBe(true);
  });

  it('rank is 1 + the number of participants with a strictly greater score', () => {
    const totals = [7, 7, 7, -3, 12, 0, 12, -3].map((v, i) => pnl(`usr_${i}`, v));
    for (const x of standings(totals, 'house')) {
      expect(x.rank).toBe(1 + totals.filter((t) => t.realizedPnl > x.realizedPnl).length);
    }
  });

  it('never ranks the house, nor counts it, nor an account without positions', () => {
    const s = standings(
      [pnl('house', 1_000_000), pnl('usr_a', -5), pnl('usr_idle', 0, 0), pnl('usr_b', -5)],
      'house',
    );
    expect(s).toEqual([
      { accountId: 'usr_a', realizedPnl: -5, rank: 1, participants: 2 },
      { accountId: 'usr_b', realizedPnl: -5, rank: 1, participants: 2 },
    ]);
    expect(standings([pnl('house', 3)], 'house')).toEqual([]);
  });
});

describe('boundaries', () => {
  const DAY = 86_400_000;
  it('the latest multiple of the interval at or before now (daily: 00:00 UTC)', () => {
    const noon = Date.parse('2026-11-22T12:00:00.000Z');
    expect(new Date(latestBoundary(noon, DAY)).toISOString()).toBe('2026-11-22T00:00:00.000Z');
    const midnight = Date.parse('2026-11-23T00:00:00.000Z');
    expect(latestBoundary(midnight, DAY)).toBe(midnight);
    expect(latestBoundary(midnight - 1, DAY)).toBe(midnight - DAY);
    expect(latestBoundary(midnight + 3_600_000 + 5, 3_600_000)).toBe(midnight + 3_600_000);
  });

  it('keeps historyDays days before the boundary', () => {
    expect(retentionCutoff(10 * DAY, 3)).toBe(7 * DAY);
  });
});
