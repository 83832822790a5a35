import { Module } from '@nestjs/common';
import { MarketsController } from './markets.controller.js';
import { MarketsService } from './markets.service.js';

@Module({
  controllers: [MarketsController],
  providers: [MarketsService],
  exports: [MarketsService],
})
export class MarketsModule {}
