import { Global, Module } from '@nestjs/common';
import { RedisConnection } from './redis-connection.js';

/** The Redis client (REDIS_URL), for every module that keeps shared state there. */
@Global()
@Module({ providers: [RedisConnection], exports: [RedisConnection] })
export class RedisModule {}
