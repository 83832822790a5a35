import { Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { Clock } from '../../common/clock/clock.js';
import type { MemoryReplayCache, ReplayCache } from './replay-cache.js';

/** How long a Redis answer may take before this instance's own cache answers instead. */
const REDIS_TIMEOUT_MS = 50;
const WARN_EVERY_MS = 10_000;

/**
 * The replay cache shared by every instance on one Redis: `SET sig:{key}:<signature> 1 NX PX ms`
 * records and checks in one atomic command, so a signature replayed against another instance is
 * refused too. While Redis does not answer, the instance's in-memory cache stands in: a replay
 * to the same instance is still refused, one to another instance is not (the outage is logged).
 */
export class RedisReplayCache implements ReplayCache {
  private readonly log = new Logger('ReplayCache');
  private lastWarn = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly redis: Redis,
    private readonly local: MemoryReplayCache,
    private readonly clock: Clock,
  ) {}

  async seen(keyId: string, signature: string, expiresAtMs: number): Promise<boolean> {
    // The local cache records every signature too, so it already knows the recent ones when
    // Redis goes away.
    const locally = this.local.seen(keyId, signature, expiresAtMs);
    const ttl = Math.max(1, expiresAtMs - this.clock.now());
    try {
      const set = await withTimeout(
        this.redis.set(`sig:{${keyId}}:${signature}`, '1', 'PX', ttl, 'NX'),
      );
      return set === null;
    } catch (err) {
      const now = Date.now();
      if (now - this.lastWarn >= WARN_EVERY_MS) {
        this.lastWarn = now;
        this.log.warn(
          `replay cache: Redis unavailable (${err instanceof Error ? err.message : String(err)}); this instance's own cache answers`,
        );
      }
      return locally;
    }
  }
}

function withTimeout<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer in ${REDIS_TIMEOUT_MS} ms`)),
      REDIS_TIMEOUT_MS,
    );
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
