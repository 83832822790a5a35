import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module.js';
import { TradingModule } from '../trading/trading.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { EphemeralWorldsController } from './ephemeral-worlds.controller.js';
import { EphemeralWorldsService } from './ephemeral-worlds.service.js';
import { WorldTemplate } from './world-template.service.js';

/** POST/GET/DELETE /sandbox/worlds: the ephemeral worlds' lifecycle (routing is WorldsModule's). */
@Module({
  imports: [AccessModule, TradingModule, WebhooksModule],
  controllers: [EphemeralWorldsController],
  providers: [EphemeralWorldsService, WorldTemplate],
  exports: [EphemeralWorldsService],
})
export class EphemeralWorldsModule {}
