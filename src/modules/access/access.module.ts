import { Global, Module } from '@nestjs/common';
import { AdminTierRequestsController } from '../api-keys/admin-tier-requests.controller.js';
import { ApiKeyRepository } from '../api-keys/api-key.repository.js';
import { ApiKeysController } from '../api-keys/api-keys.controller.js';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { AuthController } from '../auth/auth.controller.js';
import { AuthService } from '../auth/auth.service.js';
import { TermsService } from '../auth/terms.service.js';
import { MfaService } from '../security/mfa.service.js';
import { SecurityController } from '../security/security.controller.js';
import { Clock } from '../../common/clock/clock.js';
import { RedisConnection } from '../redis/redis-connection.js';
import { AccessPipeline } from './access.pipeline.js';
import { IdempotencyService } from './idempotency.service.js';
import { RedisReplayCache } from './redis-replay-cache.js';
import { MemoryReplayCache, REPLAY_CACHE, type ReplayCache } from './replay-cache.js';
import { SessionTokensService } from './session-tokens.service.js';

/** Accounts, sessions, API keys, MFA, terms, and the request pipeline that enforces them. */
@Global()
@Module({
  controllers: [AuthController, ApiKeysController, AdminTierRequestsController, SecurityController],
  providers: [
    {
      provide: REPLAY_CACHE,
      // Shared by every instance on one Redis (REDIS_URL); in-process when running alone.
      useFactory: (redis: RedisConnection, clock: Clock): ReplayCache =>
        redis.client === null
          ? new MemoryReplayCache(clock)
          : new RedisReplayCache(redis.client, new MemoryReplayCache(clock), clock),
      inject: [RedisConnection, Clock],
    },
    AccessPipeline,
    IdempotencyService,
    SessionTokensService,
    ApiKeyRepository,
    ApiKeysService,
    AuthService,
    TermsService,
    MfaService,
  ],
  exports: [AccessPipeline, IdempotencyService, ApiKeyRepository, MfaService, SessionTokensService],
})
export class AccessModule {}
