import { describe, expect, it } from '@jest/globals';
import { ManualClock } from '../../common/clock/clock.js';
import { MemoryReplayCache } from './replay-cache.js';

describe('MemoryReplayCache', () => {
  it('answers false the first time and true for the same key and signature until it expires', () => {
    const clock = new ManualClock('2026-11-22T12:00:00Z');
    const cache = new MemoryReplayCache(clock);
    const until = clock.now() + 601_000;
    expect(cache.seen('key_a', 'v1=aa', until)).toBe(false);
    expect(cache.seen('key_a', 'v1=aa', until)).toBe(true);
    // Per key: another key's identical value is its own.
    expect(cache.seen('key_b', 'v1=aa', until)).toBe(false);
    clock.advance(600_999);
    expect(cache.seen('key_a', 'v1=aa', until)).toBe(true);
    clock.advance(1);
    expect(cache.seen('key_a', 'v1=aa', until + 601_000)).toBe(false);
  });

  it('drops expired signatures: memory follows the last window, not all time', () => {
    const clock = new ManualClock('2026-11-22T12:00:00Z');
    const cache = new MemoryReplayCache(clock);
    for (let minute = 0; minute < 60; minute++) {
      for (let i = 0; i < 500; i++) {
        cache.seen('key_a', `v1=${minute}-${i}`, clock.now() + 301_000);
      }
      expect(cache.size).toBeLessThanOrEqual(500 * 7); // 301 s of signatures plus one sweep step
      clock.advance(60_000);
    }
    clock.advance(302_000);
    cache.seen('key_a', 'v1=last', clock.now() + 301_000);
    expect(cache.size).toBe(1);
  });
});
