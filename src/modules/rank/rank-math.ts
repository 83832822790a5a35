/** One account's realized P&L summed over its stored positions (see RankRepository.totals). */
export interface AccountPnl {
  accountId: string;
  /** Integer cents. */
  realizedPnl: number;
  /** How many positions (markets) it holds a record of, flat ones included. */
  positions: number;
}

/** One participant's place on a leaderboard. */
export interface Standing {
  accountId: string;
  /** Realized P&L summed over the participant's positions, integer cents: the score. */
  realizedPnl: number;
  /** 1 + the number of participants with a strictly greater score (competition ranking). */
  rank: number;
  /** How many participants the leaderboard has. */
  participants: number;
}

/**
 * The leaderboard of one engine: every account holding a position state except `excluded` (the
 * house), scored by realized P&L; ties share a rank and the next rank skips (1, 1, 3). Best
 * first, ties by account id.
 */
export function standings(totals: readonly AccountPnl[], excluded: string): Standing[] {
  const entries = totals.filter((t) => t.accountId !== excluded && t.positions > 0);
  entries.sort(
    (a, b) =>
      b.realizedPnl - a.realizedPnl ||
      (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0),
  );
  const participants = entries.length;
  const out: Standing[] = [];
  for (const [i, e] of entries.entries()) {
    // Sorted best first: the participants above this one with a greater score are all before it.
    const rank = i > 0 && entries[i - 1].realizedPnl === e.realizedPnl ? out[i - 1].rank : i + 1;
    out.push({ accountId: e.accountId, realizedPnl: e.realizedPnl, rank, participants });
  }
  return out;
}
