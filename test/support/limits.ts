import type { ManualClock } from '../../src/common/clock/clock.js';

/**
 * Moves the clock to the start of the next whole minute (never zero: a clock already on a
 * boundary moves a full minute). Every per-minute limit counter (per IP, key, user and route) is
 * keyed by the start of its minute, so a test that starts there sees none of the counts the tests
 * before it left in an app booted once per file.
 */
export function toNextMinute(clock: ManualClock): void {
  clock.advance(60_000 - (clock.now() % 60_000));
}
