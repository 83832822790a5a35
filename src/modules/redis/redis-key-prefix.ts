import type { Redis } from 'ioredis';

/**
 * REDIS_KEY_PREFIX rides on the client (ioredis `keyPrefix`): ioredis puts it before every key a
 * command names (Lua scripts' KEYS, XREAD's streams included), so the stores keep their short key
 * names. It does not touch pub/sub channels, nor the stream names XREAD and XREADGROUP answer with:
 * those two, and XGROUP's key, go through the helpers here.
 */
export function keyPrefixOf(redis: Redis): string {
  return redis.options.keyPrefix ?? '';
}

/** A pub/sub channel of this deployment: channels are not keys, ioredis leaves them as they are. */
export function prefixedChannel(redis: Redis, channel: string): string {
  return `${keyPrefixOf(redis)}${channel}`;
}

/** A key as Redis stores it, for the commands ioredis does not prefix (XGROUP). */
export function prefixedKey(redis: Redis, key: string): string {
  return `${keyPrefixOf(redis)}${key}`;
}

/** A key as a reply names it (with the prefix) back to the name the caller used; null if foreign. */
export function unprefixedKey(redis: Redis, key: string): string | null {
  const prefix = keyPrefixOf(redis);
  return key.startsWith(prefix) ? key.slice(prefix.length) : null;
}
