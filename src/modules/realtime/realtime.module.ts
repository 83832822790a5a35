import { Module } from '@nestjs/common';
import { RfqModule } from '../rfq/rfq.module.js';
import { AsyncApiController } from './asyncapi.controller.js';
import { CancelOnDisconnectController } from './cancel-on-disconnect.controller.js';
import { CancelOnDisconnectService, COD_COUNTER } from './cancel-on-disconnect.service.js';
import { ClusterSignals } from '../redis/cluster-signals.js';
import { RedisConnection } from '../redis/redis-connection.js';
import { LocalCodCounter, type CodCounter } from './cod-counter.js';
import { RedisCodCounter } from './redis-cod-counter.js';
import { RealtimeGateway } from './realtime.gateway.js';
import { RealtimeHub } from './realtime-hub.service.js';

@Module({
  imports: [RfqModule],
  controllers: [CancelOnDisconnectController, AsyncApiController],
  providers: [
    RealtimeGateway,
    RealtimeHub,
    CancelOnDisconnectService,
    {
      // Cancel-on-disconnect counts every instance's connections of a key with REDIS_URL.
      provide: COD_COUNTER,
      useFactory: (redis: RedisConnection, signals: ClusterSignals): CodCounter =>
        redis.client === null
          ? new LocalCodCounter()
          : new RedisCodCounter(redis.client, signals.instanceId),
      inject: [RedisConnection, ClusterSignals],
    },
  ],
  exports: [RealtimeHub],
})
export class RealtimeModule {}
