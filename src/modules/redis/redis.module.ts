import { Global, Module } from '@nestjs/common';
import { ClusterSignals, LocalClusterSignals } from './cluster-signals.js';
import { RedisClusterSignals } from './redis-cluster-signals.js';
import { RedisConnection } from './redis-connection.js';

/** The Redis client (REDIS_URL), for every module that keeps shared state there. */
@Global()
@Module({
  providers: [
    RedisConnection,
    {
      // Cache invalidation and socket closing on every instance: pub/sub with REDIS_URL, else
      // in-process.
      provide: ClusterSignals,
      useFactory: (redis: RedisConnection): ClusterSignals =>
        redis.client === null ? new LocalClusterSignals() : new RedisClusterSignals(redis.client),
      inject: [RedisConnection],
    },
  ],
  exports: [RedisConnection, ClusterSignals],
})
export class RedisModule {}
