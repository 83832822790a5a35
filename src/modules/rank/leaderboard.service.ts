import { Injectable } from '@nestjs/common';
import type { WorldName } from '../../common/environment.js';
import { paginate } from '../../common/pagination/paginate.js';
import { AuthorDirectory } from '../users/author-directory.service.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { HOUSE_ACCOUNT } from '../trading/engine-runtime.js';
import type { LeaderboardPageDto, LeaderboardQueryDto } from './dto/leaderboard.dto.js';
import { periodStart, periodTotals } from './leaderboard-math.js';
import { standings, type Standing } from './rank-math.js';
import { RankSamplerService } from './rank-sampler.service.js';

/**
 * The public leaderboard of a world: its accounts with a position record and a PUBLIC profile,
 * scored by realized P&L over the period (see {@link periodTotals}), ranked among themselves.
 * The board is computed whole on each read (one grouped query over the positions, the period's
 * baseline sample and the accounts reset since it, the PUBLIC ids among the board's accounts), so
 * a page's ranks are those of the whole board; authors are read for the page's rows only.
 */
@Injectable()
export class LeaderboardService {
  constructor(
    private readonly sampler: RankSamplerService,
    private readonly authors: AuthorDirectory,
    private readonly engines: EngineRegistry,
  ) {}

  board(world: WorldName, q: LeaderboardQueryDto): LeaderboardPageDto {
    const period = q.period ?? 'ALL';
    const nowMs = this.engines.clockOf(world).now();
    // The period's baseline may be the sample of a boundary just passed: record it first.
    this.sampler.catchUp(world);
    const start = periodStart(period, nowMs);
    const baseline = start === null ? null : this.sampler.repo(world).baselineAt(start);
    const totals = periodTotals(this.sampler.totals(world), baseline);
    // Which accounts are listed is one query over the whole board; the author rows are read for
    // the page shown only. All synchronous, so both see the same profiles.
    const listed = this.authors.publicIds(totals.map((t) => t.accountId));
    const ranked = standings(
      totals.filter((t) => listed.has(t.accountId)),
      HOUSE_ACCOUNT,
    );
    const page = paginate({
      list: `leaderboard:${world}:${period}`,
      keys: ['int', 'id'],
      query: q,
      fetch: (after, take) => rowsAfter(ranked, after, take),
      keyOf: (s) => [String(s.realizedPnl), s.accountId],
      mapPage: (rows) => {
        const people = this.authors.authors(
          rows.map((s) => s.accountId),
          { publicOnly: true },
        );
        return rows.map((s) => ({
          rank: s.rank,
          user: people.get(s.accountId)!,
          realized_pnl_cents: s.realizedPnl,
        }));
      },
    });
    return { period, as_of: new Date(nowMs).toISOString(), ...page };
  }
}

/**
 * The rows of a board sorted best first, ties by account id, after the cursor's (score, id), so
 * a board that changes between pages neither repeats nor skips a row that kept its place.
 */
function rowsAfter(
  board: readonly Standing[],
  after: string[] | undefined,
  take: number,
): Standing[] {
  let from = 0;
  if (after !== undefined) {
    const [score, id] = [Number(after[0]), after[1]];
    from = board.findIndex(
      (s) => s.realizedPnl < score || (s.realizedPnl === score && s.accountId > id),
    );
    if (from < 0) from = board.length;
  }
  return board.slice(from, from + take);
}
