import { Global, Module } from '@nestjs/common';
import { Clock } from '../../common/clock/clock.js';
import { EVENT_STREAM_MAXLEN, RedisStreamsEventBus } from '../redis/redis-event-bus.js';
import { RedisConnection } from '../redis/redis-connection.js';
import { EngineRegistry } from './engine-registry.js';
import { EventBus, InProcessEventBus } from './event-bus.js';

/**
 * The engines (live, paper) and the bus their committed events leave on: in-process, or shared
 * by every instance through Redis Streams when REDIS_URL is set.
 */
@Global()
@Module({
  providers: [
    EngineRegistry,
    {
      provide: EventBus,
      useFactory: (redis: RedisConnection, clock: Clock): EventBus =>
        redis.client === null
          ? new InProcessEventBus()
          : new RedisStreamsEventBus(redis.client, {
              maxLen: EVENT_STREAM_MAXLEN,
              now: () => clock.now(),
            }),
      inject: [RedisConnection, Clock],
    },
  ],
  exports: [EngineRegistry, EventBus],
})
export class TradingModule {}
