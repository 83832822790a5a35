import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import type { Lifecycle } from '../../common/api/lifecycle.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import type { WorldName } from '../../common/environment.js';
import { World } from '../worlds/world.decorator.js';
import { LeaderboardPageDto, LeaderboardQueryDto } from './dto/leaderboard.dto.js';
import { RankHistoryPageDto, RankHistoryQueryDto } from './dto/rank.dto.js';
import { LeaderboardService } from './leaderboard.service.js';
import { RankService } from './rank.service.js';

/** SPEC.md, Deprecated operations: no sunset scheduled; the successor is the cursor variant. */
export const RANK_HISTORY_LIFECYCLE: Lifecycle = {
  state: 'DEPRECATED',
  deprecatedOn: '2026-05-08',
  successor: '/api/v1/rank/history/cursor',
};

const RANK_TEXT =
  'Your points on the leaderboard of the engine of your credential (test key: paper; live key or session: live), oldest first. Participants are the accounts of that engine with at least one position on record (they traded in some market; a closed position counts; never the house); the score is realized P&L in cents summed over their stored positions; rank = 1 + the number of participants with a strictly greater score (ties share a rank: 1, 1, 3). A point is recorded for every participant at each multiple of RANK_SAMPLE_INTERVAL_MS on the service clock (default a day: 00:00 UTC), with the standings as they are when the sample is taken (within about a second of the boundary, or at the first start or read after it); boundaries passed while the service was stopped are not back-filled (only the latest one is recorded). Points are kept RANK_HISTORY_DAYS days (default 365). A sandbox reset leaves past points as they are (the reset account leaves the leaderboard until it trades again). No points: an empty list. from (inclusive) and to (exclusive) narrow it by time. Scope wallet:read (the history reveals your realized P&L, as positions do).';

const LEADERBOARD_TEXT =
  "Readable without a key (the live world's board); a key needs markets:read and reads its own world's board (test key: paper; live key or session: live). Lists the accounts of that world with at least one position on record (never the house) whose profile is PUBLIC, best first. The score is realized P&L in cents: for ALL, the total over the account's stored positions; for DAY, WEEK and MONTH, that total minus the total recorded for the account in the rank history at the latest sample at or before the period's start (00:00 UTC today; Monday 00:00 UTC; the 1st of the month 00:00 UTC, on the service clock), 0 when no sample is that old, the account was not in it, or its paper account was reset since (it counts from 0 again). With the default RANK_SAMPLE_INTERVAL_MS the sample of the period's start is the one taken at that 00:00 UTC; RANK_HISTORY_DAYS shorter than the period drops the baseline, and the period then counts everything. Ranks are computed among the listed (PUBLIC) accounts only, so the list has no gaps: competition ranking, 1 + the number of listed accounts with a strictly greater score (1, 2, 2, 4); ties are listed by user id. A PRIVATE profile takes no place. Pages follow a keyset cursor on (score, user id); each page's ranks are those of the whole board when it is read. period defaults to ALL.";

@ApiTags('Rank')
@Controller()
export class RankController {
  constructor(
    private readonly rank: RankService,
    private readonly leaderboard: LeaderboardService,
  ) {}

  @Get('rank/leaderboard')
  @Endpoint({
    summary: 'The public leaderboard by realized P&L over a period',
    description: LEADERBOARD_TEXT,
    auth: 'optional',
    scopes: ['markets:read'],
    type: LeaderboardPageDto,
    errors: [400],
  })
  board(@World() world: WorldName, @Query() q: LeaderboardQueryDto): LeaderboardPageDto {
    return this.leaderboard.board(world, q);
  }

  @Get('rank/history/cursor')
  @Endpoint({
    summary: 'Your rank history, oldest first (keyset cursor on time)',
    description: RANK_TEXT,
    auth: 'key',
    scopes: ['wallet:read'],
    type: RankHistoryPageDto,
    errors: [400],
  })
  history(@Cred() c: Credential, @Query() q: RankHistoryQueryDto): RankHistoryPageDto {
    return this.rank.history(c, q);
  }

  @Get('rank/history')
  @Endpoint({
    summary: 'Your rank history (deprecated: use GET /api/v1/rank/history/cursor)',
    description: `Deprecated on 2026-05-08, no sunset scheduled. Answers exactly what GET /api/v1/rank/history/cursor answers, with Deprecation and Link (successor-version) headers. ${RANK_TEXT}`,
    auth: 'key',
    scopes: ['wallet:read'],
    lifecycle: RANK_HISTORY_LIFECYCLE,
    type: RankHistoryPageDto,
    errors: [400],
  })
  legacyHistory(@Cred() c: Credential, @Query() q: RankHistoryQueryDto): RankHistoryPageDto {
    return this.rank.history(c, q);
  }
}
