import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { ManualClock } from '../../common/clock/clock.js';
import { EphemeralWorldsService } from './ephemeral-worlds.service.js';
import { WorldWork } from './world-work.js';

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
    const worlds = new Ctor(
      catalog,
      databases,
      {},
      {},
      {},
      {},
      config,
      clock,
      {},
      {},
      {},
      new WorldWork(),
    );
    await worlds.sweep();
    await worlds.sweep();
    expect(looks).toEqual(['2026-11-22T12:00:00.000Z']);
    clock.advance(1000);
    await worlds.sweep();
    expect(looks).toEqual(['2026-11-22T12:00:00.000Z', '2026-11-22T12:00:01.000Z']);
  });

  describe('worlds a dead instance left CREATING or DELETING', () => {
    afterEach(() => {
      jest.restoreAllMocks();
    });
    const Ctor = EphemeralWorldsService as unknown as new (
      ...args: unknown[]
    ) => EphemeralWorldsService;
    const build = (work: WorldWork) => {
      const looks: number[] = [];
      const catalog = {
        expired: () => [],
        unfinished: () => (looks.push(Date.now()), []),
      };
      const databases = { setOpenable: () => {}, idleSince: () => [], unload: () => {} };
      const config = { values: { worldIdleUnloadSeconds: 600 } };
      const clock = new ManualClock('2026-11-22T12:00:00.000Z');
      const worlds = new Ctor(catalog, databases, {}, {}, {}, {}, config, clock, {}, {}, {}, work);
      return { worlds, looks };
    };

    it('cluster mode: looked for every 30 s of the sweep, or at once when asked', async () => {
      let now = 1_000_000;
      jest.spyOn(Date, 'now').mockImplementation(() => now);
      const work = new WorldWork();
      work.locker = () => Promise.resolve(async () => {});
      const { worlds, looks } = build(work);
      await worlds.sweep();
      await worlds.sweep();
      expect(looks).toEqual([1_000_000]);
      now += 29_999;
      await worlds.sweep();
      expect(looks).toEqual([1_000_000]);
      now += 1;
      await worlds.sweep();
      expect(looks).toEqual([1_000_000, 1_030_000]);
      await worlds.sweep(true);
      expect(looks).toEqual([1_000_000, 1_030_000, 1_030_000]);
    });

    it('one instance: never (a stop is the only way to leave one; boot recovery removes it)', async () => {
      const { worlds, looks } = build(new WorldWork());
      await worlds.sweep();
      await worlds.sweep(true);
      expect(looks).toEqual([]);
    });
  });
});
