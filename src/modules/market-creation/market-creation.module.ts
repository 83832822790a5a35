import { Module } from '@nestjs/common';
import { MarketsModule } from '../markets/markets.module.js';
import { SandboxModule } from '../sandbox/sandbox.module.js';
import { MarketCreationController } from './market-creation.controller.js';
import { MarketCreationService } from './market-creation.service.js';

/** Markets users create, edit and resolve (POST /markets, PATCH /markets/{id}, resolve). */
@Module({
  imports: [MarketsModule, SandboxModule],
  controllers: [MarketCreationController],
  providers: [MarketCreationService],
})
export class MarketCreationModule {}
