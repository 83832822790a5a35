import { Module } from '@nestjs/common';
import { RankController } from './rank.controller.js';
import { RankSamplerService } from './rank-sampler.service.js';
import { RankService } from './rank.service.js';

/** Rank history: the sampler, GET /rank/history/cursor and its deprecated GET /rank/history. */
@Module({
  controllers: [RankController],
  providers: [RankSamplerService, RankService],
  exports: [RankSamplerService],
})
export class RankModule {}
