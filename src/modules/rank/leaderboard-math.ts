import type { AccountPnl } from './rank-math.js';

export const LEADERBOARD_PERIODS = ['DAY', 'WEEK', 'MONTH', 'ALL'] as const;
export type LeaderboardPeriod = (typeof LEADERBOARD_PERIODS)[number];

const DAY_MS = 86_400_000;

/**
 * Where a period starts on the UTC calendar, at or before `nowMs`: DAY 00:00 today, WEEK
 * Monday 00:00, MONTH the 1st 00:00; ALL has no start (null).
 */
export function periodStart(period: LeaderboardPeriod, nowMs: number): number | null {
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS;
  switch (period) {
    case 'DAY':
      return today;
    case 'WEEK':
      // getUTCDay: Sunday 0 .. Saturday 6; days since Monday: Monday 0 .. Sunday 6.
      return today - ((new Date(today).getUTCDay() + 6) % 7) * DAY_MS;
    case 'MONTH': {
      const d = new Date(today);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    }
    case 'ALL':
      return null;
  }
}

/**
 * Each account's realized P&L over a period: its total now minus the total recorded at the
 * period's baseline (0 for an account the baseline does not hold, and for every account when
 * there is no baseline: the period ALL). Accounts keep their position counts: only accounts
 * that hold a position record take part, as in rank history.
 */
export function periodTotals(
  totals: readonly AccountPnl[],
  baseline: ReadonlyMap<string, number> | null,
): AccountPnl[] {
  return totals.map((t) => ({
    ...t,
    realizedPnl: t.realizedPnl - (baseline?.get(t.accountId) ?? 0),
  }));
}
