import { Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { LocalCodCounter } from './cod-counter.js';

/** How long an instance counts without refreshing its liveness (then its counts are swept). */
export const COD_LIVENESS_TTL_MS = 5_000;
/** How often an instance refreshes its liveness and looks for dead ones. */
export const COD_REFRESH_MS = 1_000;
/** At most one warning per outage window. */
const WARN_EVERY_MS = 30_000;

/** Every instance's liveness: member = instance id, score = until when (Redis TIME, ms). */
const INSTANCES = 'cod:instances';
/** Every key that held a connection: the hashes a sweep of a dead instance visits. */
const KEYS_SET = 'cod:keys';
const hashOf = (keyId: string) => `cod:{${keyId}}`;
const claimOf = (keyId: string) => `cod:{${keyId}}:boot`;

/**
 * One connection fewer for this instance (never below 0, the field goes at 0), and the total of
 * every instance. {total, arm}: arm is 1 for the one call that took the total to 0 (this
 * instance's field went from 1 to 0), or when the field was already gone (swept, or never
 * written during an outage) and this instance's own count just reached 0 (ARGV[2] = 1).
 * KEYS: the key's hash. ARGV: instance id, local-count-reached-zero.
 */
const DECR = `
local n = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if n > 1 then redis.call('HSET', KEYS[1], ARGV[1], n - 1)
elseif n == 1 then redis.call('HDEL', KEYS[1], ARGV[1]) end
local total = 0
for _, v in ipairs(redis.call('HVALS', KEYS[1])) do total = total + tonumber(v) end
if total == 0 and (n == 1 or (n == 0 and ARGV[2] == '1')) then return {0, 1} end
return {total, 0}
`;

/**
 * Removes the fields of dead instances from a key's hash: {total, removed, exists}. The sweep that
 * removed connections and left 0 arms the key (one script per key: one sweep wins).
 * KEYS: the key's hash. ARGV: dead instance ids.
 */
const SWEEP = `
local removed = 0
for i = 1, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v then
    removed = removed + tonumber(v)
    redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
local total = 0
for _, v in ipairs(redis.call('HVALS', KEYS[1])) do total = total + tonumber(v) end
return {total, removed, redis.call('EXISTS', KEYS[1])}
`;

/**
 * At boot: the instance arms the key when no instance counts a connection and no other instance
 * starting meanwhile claimed it (SET NX for the grace and a margin). 1 or 0.
 * KEYS: the key's hash, its boot claim. ARGV: instance id, claim ttl (ms).
 */
const BOOT = `
for _, v in ipairs(redis.call('HVALS', KEYS[1])) do
  if tonumber(v) > 0 then return 0 end
end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
`;

/**
 * Liveness: this instance is alive until now + ttl (Redis's clock, one for every instance).
 * {wasAlive, dead ids...}: wasAlive 0 when this instance was unknown or had expired (its counts
 * may have been swept: it writes them again); the dead are instances past their time.
 * KEYS: the instances set. ARGV: instance id, ttl (ms).
 */
const REFRESH = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local prev = redis.call('ZSCORE', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
local out = {0}
if prev and tonumber(prev) > now then out[1] = 1 end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do out[#out + 1] = id end
return out
`;

type Script<R> = (...keysAndArgs: (string | number)[]) => Promise<R>;

/**
 * Cancel-on-disconnect counts over every instance on one Redis (REDIS_URL): per key a hash
 * `cod:{<keyId>}` of instance id -> connections, changed by Lua scripts that answer the new
 * total, so exactly one instance sees a key's total reach 0 and arms it. Each instance refreshes
 * its liveness every COD_REFRESH_MS; one that stops for COD_LIVENESS_TTL_MS (killed, cut off) is
 * dead: any instance removes its counts, and the removal that leaves a key at 0 arms it here.
 * Fail-open: while Redis does not answer, this instance's own count decides (it arms when its own
 * connections reach 0), and when Redis is back its counts are written again.
 */
export class RedisCodCounter extends LocalCodCounter implements OnModuleInit, OnModuleDestroy {
  private readonly log = new Logger('CancelOnDisconnect');
  private readonly decr: Script<[number, number]>;
  private readonly sweepScript: Script<[number, number, number]>;
  private readonly boot: Script<number>;
  private readonly refreshScript: Script<[number, ...string[]]>;
  private readonly orphaned: ((keyId: string) => void)[] = [];
  private timer: NodeJS.Timeout | null = null;
  private warnedAt = -Infinity;
  private refreshing = false;
  /** Stopping: closes are no longer counted down (see halt). */
  private halted = false;
  /** Keys whose count changed here while Redis did not answer: written again when it does. */
  private readonly stale = new Set<string>();

  constructor(
    private readonly redis: Redis,
    readonly instanceId: string,
    private readonly ttlMs = COD_LIVENESS_TTL_MS,
    private readonly refreshMs = COD_REFRESH_MS,
  ) {
    super();
    redis.defineCommand('svcCodDecr', { numberOfKeys: 1, lua: DECR });
    redis.defineCommand('svcCodSweep', { numberOfKeys: 1, lua: SWEEP });
    redis.defineCommand('svcCodBoot', { numberOfKeys: 2, lua: BOOT });
    redis.defineCommand('svcCodRefresh', { numberOfKeys: 1, lua: REFRESH });
    const c = redis as unknown as Record<string, Script<never>>;
    this.decr = (...a) => c.svcCodDecr.call(redis, ...a);
    this.sweepScript = (...a) => c.svcCodSweep.call(redis, ...a);
    this.boot = (...a) => c.svcCodBoot.call(redis, ...a);
    this.refreshScript = (...a) => c.svcCodRefresh.call(redis, ...a);
  }

  onModuleInit(): void {
    this.timer = setInterval(() => void this.refresh(), this.refreshMs);
    this.timer.unref();
    void this.refresh();
  }

  onModuleDestroy(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  override async halt(): Promise<void> {
    this.halted = true;
    this.onModuleDestroy();
    // Dead from now on: the next refresh of any other instance sweeps this one's counts.
    await this.shared(
      null,
      async () => {
        await this.redis.zadd(INSTANCES, 0, this.instanceId);
      },
      undefined,
    );
  }

  override async connected(keyId: string): Promise<void> {
    this.up(keyId);
    if (this.halted) return;
    await this.shared(
      keyId,
      async () => {
        await this.redis
          .multi()
          .hincrby(hashOf(keyId), this.instanceId, 1)
          .sadd(KEYS_SET, keyId)
          .exec();
      },
      undefined,
    );
  }

  override async disconnected(keyId: string): Promise<{ total: number; arm: boolean }> {
    const own = this.down(keyId);
    // Left for the sweep of another instance, which arms the key if nothing else holds it.
    if (this.halted) return { total: own, arm: false };
    const fallback = { total: own, arm: own === 0 };
    return this.shared(
      keyId,
      async () => {
        const [total, arm] = await this.decr(hashOf(keyId), this.instanceId, own === 0 ? 1 : 0);
        return { total, arm: arm === 1 };
      },
      fallback,
    );
  }

  override async total(keyId: string): Promise<number> {
    return this.shared(
      null,
      async () => {
        const values = await this.redis.hvals(hashOf(keyId));
        return values.reduce((n, v) => n + Number(v), 0);
      },
      this.local(keyId),
    );
  }

  override async claimAtBoot(keyId: string, graceMs: number): Promise<boolean> {
    return this.shared(
      null,
      async () =>
        (await this.boot(hashOf(keyId), claimOf(keyId), this.instanceId, graceMs + this.ttlMs)) ===
        1,
      true,
    );
  }

  override onOrphaned(listener: (keyId: string) => void): void {
    this.orphaned.push(listener);
  }

  /**
   * Liveness, then the sweep of dead instances. Public for tests, which drive it instead of
   * waiting for the timer.
   */
  async refresh(): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      await this.shared(
        null,
        async () => {
          const [wasAlive, ...dead] = await this.refreshScript(
            INSTANCES,
            this.instanceId,
            this.ttlMs,
          );
          if (wasAlive !== 1 || this.stale.size > 0) await this.rewrite(wasAlive !== 1);
          if (dead.length > 0) await this.sweepDead(dead);
        },
        undefined,
      );
    } finally {
      this.refreshing = false;
    }
  }

  /**
   * This instance's counts, written again: those that changed while Redis was away, or all of
   * them (`all`: this instance had expired, or Redis came back empty).
   */
  private async rewrite(all: boolean): Promise<void> {
    const keys = new Set(this.stale);
    this.stale.clear();
    if (all) for (const k of this.live.keys()) keys.add(k);
    if (keys.size === 0) return;
    const m = this.redis.multi();
    for (const keyId of keys) {
      const n = this.local(keyId);
      if (n > 0) m.hset(hashOf(keyId), this.instanceId, n).sadd(KEYS_SET, keyId);
      else m.hdel(hashOf(keyId), this.instanceId);
    }
    try {
      await m.exec();
    } catch (err) {
      for (const k of keys) this.stale.add(k);
      throw err;
    }
  }

  private async sweepDead(dead: string[]): Promise<void> {
    for (const keyId of await this.redis.smembers(KEYS_SET)) {
      const [total, removed, exists] = await this.sweepScript(hashOf(keyId), ...dead);
      if (removed > 0 && total === 0) {
        for (const l of this.orphaned) l(keyId);
      }
      if (exists === 0) {
        // No connection anywhere: the key leaves the set, unless one arrived meanwhile (its
        // SADD may have come before this SREM).
        await this.redis.srem(KEYS_SET, keyId);
        if ((await this.redis.exists(hashOf(keyId))) === 1) await this.redis.sadd(KEYS_SET, keyId);
      }
    }
    await this.redis.zrem(INSTANCES, ...dead);
  }

  /**
   * Runs `shared` against Redis; while Redis is away (or on an error) `fallback` answers, and a
   * count change of `keyId` that did not reach Redis is written again later.
   */
  private async shared<T>(keyId: string | null, shared: () => Promise<T>, fallback: T): Promise<T> {
    let why: string;
    if (this.redis.status === 'ready') {
      try {
        return await shared();
      } catch (err) {
        why = err instanceof Error ? err.message : String(err);
      }
    } else why = `connection ${this.redis.status}`;
    if (keyId !== null) this.stale.add(keyId);
    this.warn(why);
    return fallback;
  }

  private warn(why: string): void {
    const now = Date.now();
    if (now - this.warnedAt < WARN_EVERY_MS) return;
    this.warnedAt = now;
    this.log.warn(
      `cancel-on-disconnect counts this instance's connections only (Redis: ${why}); they are shared again when Redis answers`,
    );
  }
}
