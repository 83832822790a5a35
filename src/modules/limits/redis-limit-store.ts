import type { Redis } from 'ioredis';
import type { Charge, LimitStore, TakeResult } from './limit-store.js';

/**
 * All or nothing, as MemoryLimitStore.take: every counter is read first; the first that cannot
 * take its units refuses the lot ({0, index, count}); otherwise each is incremented, a new one
 * expiring at its window's end ({1, counts...}). One script, so no other instance's charge
 * interleaves.
 * KEYS: the counters. ARGV: units, limit, ttl (ms) per counter.
 */
const TAKE = `
for i = 1, #KEYS do
  local used = tonumber(redis.call('GET', KEYS[i]) or '0')
  if used + tonumber(ARGV[3 * i - 2]) > tonumber(ARGV[3 * i - 1]) then
    return {0, i - 1, used}
  end
end
local out = {1}
for i = 1, #KEYS do
  local units = tonumber(ARGV[3 * i - 2])
  local count = redis.call('INCRBY', KEYS[i], units)
  if count == units then redis.call('PEXPIRE', KEYS[i], ARGV[3 * i]) end
  out[i + 1] = count
end
return out
`;

type TakeCommand = (numKeys: number, ...keysAndArgs: (string | number)[]) => Promise<number[]>;

/**
 * Limit windows and quotas in Redis (REDIS_URL), shared by every instance: the same buckets and
 * windows as the in-process store, a batch charged all or nothing by one Lua script. Counters
 * live at `lim:{<tag>}:<bucket>`: the tag (the user, or the IP) keeps one owner's counters on one
 * Redis Cluster slot. A counter expires when its window ends (its time to live is counted from
 * the service clock's now). Errors propagate: LimitsService fails open on them.
 */
export class RedisLimitStore implements LimitStore {
  private readonly takeScript: TakeCommand;

  constructor(private readonly redis: Redis) {
    redis.defineCommand('svcLimitTake', { lua: TAKE });
    const commands = redis as unknown as { svcLimitTake: TakeCommand };
    this.takeScript = commands.svcLimitTake.bind(redis);
  }

  async take(charges: readonly Charge[], now: number): Promise<TakeResult> {
    const keys = charges.map(redisKey);
    const args: number[] = [];
    for (const c of charges) args.push(c.units, c.limit, Math.max(1, c.windowEnd - now));
    const reply = await this.takeScript(keys.length, ...keys, ...args);
    if (reply[0] === 0) return { ok: false, index: reply[1], count: reply[2] };
    return { ok: true, counts: reply.slice(1) };
  }

  async count(bucket: string, _now: number, tag?: string): Promise<number> {
    const v = await this.redis.get(redisKey({ bucket, tag }));
    return v === null ? 0 : Number(v);
  }
}

function redisKey(c: Pick<Charge, 'bucket' | 'tag'>): string {
  return `lim:{${c.tag ?? c.bucket}}:${c.bucket}`;
}
