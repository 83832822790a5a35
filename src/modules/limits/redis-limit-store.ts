import type { Redis } from 'ioredis';
import type { Charge, LimitStore, TakeResult } from './limit-store.js';

/**
 * All or nothing, as MemoryLimitStore.take: every counter is read first; the first that cannot
 * take its units refuses the lot ({0, index, count}); otherwise each is charged ({1, counts...}).
 * A counter is a hash: its count `n` and its window's end `e` on the service clock; one whose end
 * is not after `now` counts 0 and starts again, as in the in-process store. One script, so no
 * other instance's charge interleaves.
 * KEYS: the counters. ARGV: now, then units, limit, window end, ttl (ms) per counter.
 */
const TAKE = `
local now = tonumber(ARGV[1])
local used = {}
for i = 1, #KEYS do
  local c = redis.call('HMGET', KEYS[i], 'n', 'e')
  used[i] = 0
  if c[2] and tonumber(c[2]) > now then used[i] = tonumber(c[1] or '0') end
  if used[i] + tonumber(ARGV[4 * i - 2]) > tonumber(ARGV[4 * i - 1]) then
    return {0, i - 1, used[i]}
  end
end
local out = {1}
for i = 1, #KEYS do
  local units = tonumber(ARGV[4 * i - 2])
  if used[i] == 0 then
    redis.call('HSET', KEYS[i], 'n', units, 'e', ARGV[4 * i])
    redis.call('PEXPIRE', KEYS[i], ARGV[4 * i + 1])
    out[i + 1] = units
  else
    out[i + 1] = redis.call('HINCRBY', KEYS[i], 'n', units)
  end
end
return out
`;

/**
 * How long past its window's end (on the service clock) a counter is kept. The window is the
 * service clock's, Redis expires by its own: an instance whose clock runs behind Redis's, or a
 * test's manual clock that stands still, must not see a counter vanish before its window ends.
 * A counter past its window is never read again (its bucket names the window's start), so this
 * only bounds the memory it holds.
 */
const EXPIRY_GRACE_MS = 60_000;

type TakeCommand = (numKeys: number, ...keysAndArgs: (string | number)[]) => Promise<number[]>;

/**
 * Limit windows and quotas in Redis (REDIS_URL), shared by every instance: the same buckets and
 * windows as the in-process store, a batch charged all or nothing by one Lua script. Counters
 * live at `lim:{<tag>}:<bucket>`: the tag (the user, or the IP) keeps one owner's counters on one
 * Redis Cluster slot. A counter ends with its window on the service clock (the end is stored with
 * it, as the in-process store keeps it), and Redis drops it a minute after. Errors propagate:
 * LimitsService fails open on them.
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
    const args: number[] = [now];
    for (const c of charges) {
      args.push(c.units, c.limit, c.windowEnd, Math.max(0, c.windowEnd - now) + EXPIRY_GRACE_MS);
    }
    const reply = await this.takeScript(keys.length, ...keys, ...args);
    if (reply[0] === 0) return { ok: false, index: reply[1], count: reply[2] };
    return { ok: true, counts: reply.slice(1) };
  }

  async count(bucket: string, now: number, tag?: string): Promise<number> {
    const [n, end] = await this.redis.hmget(redisKey({ bucket, tag }), 'n', 'e');
    return n === null || end === null || Number(end) <= now ? 0 : Number(n);
  }
}

function redisKey(c: Pick<Charge, 'bucket' | 'tag'>): string {
  return `lim:{${c.tag ?? c.bucket}}:${c.bucket}`;
}
