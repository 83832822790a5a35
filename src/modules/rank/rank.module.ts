import { Module } from '@nestjs/common';
import { RankController } from './rank.controller.js';
import { RankSamplerService } from './rank-sampler.service.js';
import { LeaderboardService } from './leaderboard.service.js';
import { RankService } from './rank.service.js';

/**
 * Rank: the history sampler, GET /rank/history/cursor (and its deprecated GET /rank/history) and
 * the public GET /rank/leaderboard.
 */
@Module({
  controllers: [RankController],
  providers: [RankSamplerService, RankService, LeaderboardService],
  exports: [RankSamplerService],
})
export class RankModule {}
