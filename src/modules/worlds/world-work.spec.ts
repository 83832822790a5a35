import { describe, expect, it } from '@jest/globals';
import { WorldWork } from './world-work.js';

/** A world's create or delete runs once at a time: here, and on the instances holding its lock. */
describe('WorldWork.exclusive', () => {
  it('refuses a second run of the same world while the first is under way, here', async () => {
    const work = new WorldWork();
    let finish!: () => void;
    const first = work.exclusive(
      'wld_a',
      () => new Promise<string>((r) => (finish = () => r('made'))),
    );
    await Promise.resolve();
    let ran = false;
    expect(await work.exclusive('wld_a', async () => (ran = true))).toBeNull();
    expect(ran).toBe(false);
    // Another world is not held up.
    expect(await work.exclusive('wld_b', () => Promise.resolve(2))).toEqual({ value: 2 });
    finish();
    expect(await first).toEqual({ value: 'made' });
    expect(await work.exclusive('wld_a', () => Promise.resolve(3))).toEqual({ value: 3 });
  });

  it('cluster mode: runs holding the world lock, released after the step, even when it throws', async () => {
    const work = new WorldWork();
    const events: string[] = [];
    work.locker = (world) => {
      events.push(`lock ${world}`);
      return Promise.resolve(async () => void events.push(`unlock ${world}`));
    };
    await work.exclusive('wld_a', async () => void events.push('step'));
    await expect(
      work.exclusive('wld_b', () => Promise.reject(new Error('copy failed'))),
    ).rejects.toThrow('copy failed');
    expect(events).toEqual(['lock wld_a', 'step', 'unlock wld_a', 'lock wld_b', 'unlock wld_b']);
    // Released here too: the world can be worked on again.
    expect(await work.exclusive('wld_b', () => Promise.resolve(1))).toEqual({ value: 1 });
  });

  it('cluster mode: does not run while a live peer holds the world lock', async () => {
    const work = new WorldWork();
    work.locker = () => Promise.resolve(null);
    let ran = false;
    expect(await work.exclusive('wld_a', async () => (ran = true))).toBeNull();
    expect(ran).toBe(false);
    // Not left marked busy here: once the peer lets go, it runs.
    work.locker = () => Promise.resolve(async () => {});
    expect(await work.exclusive('wld_a', () => Promise.resolve('removed'))).toEqual({
      value: 'removed',
    });
  });
});
