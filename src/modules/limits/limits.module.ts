import { DynamicModule, Global, Module } from '@nestjs/common';
import { RedisConnection } from '../redis/redis-connection.js';
import { LIMIT_STORE, MemoryLimitStore, type LimitStore } from './limit-store.js';
import { LimitsService } from './limits.service.js';
import { RedisLimitStore } from './redis-limit-store.js';
import { UsageController } from './usage.controller.js';

@Global()
@Module({})
export class LimitsModule {
  /** `store` replaces the default: Redis with REDIS_URL, else in-process. */
  static forRoot(store?: LimitStore): DynamicModule {
    return {
      module: LimitsModule,
      controllers: [UsageController],
      providers: [
        {
          provide: LIMIT_STORE,
          useFactory: (redis: RedisConnection): LimitStore =>
            store ??
            (redis.client === null ? new MemoryLimitStore() : new RedisLimitStore(redis.client)),
          inject: [RedisConnection],
        },
        LimitsService,
      ],
      exports: [LimitsService],
    };
  }
}
