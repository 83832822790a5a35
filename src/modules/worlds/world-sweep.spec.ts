import { describe, expect, it } from '@jest/globals';
import { ManualClock } from '../../common/clock/clock.js';
import { EphemeralWorldsService } from './ephemeral-worlds.service.js';

/**
 * The world sweeper reads the expired worlds (a blocking round trip on PostgreSQL) only when one
 * can have expired: not again at the instant where the last round found none.
 */
describe('EphemeralWorldsService.sweep', () => {
  it('looks for expired worlds again only once the service clock has moved', async () => {
    const clock = new ManualClock('2026-11-22T12:00:00.000Z');
    const looks: string[] = [];
    const catalog = {
      expired: (now: string) => (looks.push(now), []),
    };
    const databases = { setOpenable: () => {}, idleSince: () => [], unload: () => {} };
    const config = { values: { worldIdleUnloadSeconds: 600 } };
    const Ctor = EphemeralWorldsService as unknown as new (
      ...args: unknown[]
    ) => EphemeralWorldsService;
    const worlds = new Ctor(catalog, databases, {}, {}, {}, {}, config, clock, {}, {}, {});
    await worlds.sweep();
    await worlds.sweep();
    expect(looks).toEqual(['2026-11-22T12:00:00.000Z']);
    clock.advance(1000);
    await worlds.sweep();
    expect(looks).toEqual(['2026-11-22T12:00:00.000Z', '2026-11-22T12:00:01.000Z']);
  });
});
