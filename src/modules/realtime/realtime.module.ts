import { Module } from '@nestjs/common';
import { RfqModule } from '../rfq/rfq.module.js';
import { AsyncApiController } from './asyncapi.controller.js';
import { CancelOnDisconnectController } from './cancel-on-disconnect.controller.js';
import { CancelOnDisconnectService } from './cancel-on-disconnect.service.js';
import { RealtimeGateway } from './realtime.gateway.js';
import { RealtimeHub } from './realtime-hub.service.js';

@Module({
  imports: [RfqModule],
  controllers: [CancelOnDisconnectController, AsyncApiController],
  providers: [RealtimeGateway, RealtimeHub, CancelOnDisconnectService],
  exports: [RealtimeHub],
})
export class RealtimeModule {}
