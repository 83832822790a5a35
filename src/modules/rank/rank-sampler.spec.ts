import { describe, expect, it } from '@jest/globals';
import type { AccountPnl } from './rank-math.js';
import type { Standing } from './rank-math.js';
import { RankSampler, type RankStore } from './rank-sampler.js';

const DAY = 86_400_000;
const T0 = Date.parse('2026-11-22T12:00:00.000Z');
const MIDNIGHT = Date.parse('2026-11-22T00:00:00.000Z');

/** The store's contract in memory: a boundary is recorded once; older points are deleted. */
class MemoryStore implements RankStore {
  samples = new Map<number, number>();
  points: { time: number; s: Standing }[] = [];
  latestSampleMs(): number | null {
    return this.samples.size === 0 ? null : Math.max(...this.samples.keys());
  }
  record(timeMs: number, points: readonly Standing[], cutoffMs: number): boolean {
    if (this.samples.has(timeMs)) return false;
    this.samples.set(timeMs, points.length);
    for (const s of points) this.points.push({ time: timeMs, s });
    this.points = this.points.filter((p) => p.time >= cutoffMs);
    for (const t of [...this.samples.keys()]) if (t < cutoffMs) this.samples.delete(t);
    return true;
  }
}

function rig(historyDays = 365) {
  const store = new MemoryStore();
  const sampler = new RankSampler(store, { intervalMs: DAY, historyDays, excluded: 'house' });
  let totals: AccountPnl[] = [];
  let reads = 0;
  const read = () => {
    reads++;
    return totals;
  };
  return {
    store,
    catchUp: (now: number) => sampler.catchUp(now, read),
    set: (t: AccountPnl[]) => (totals = t),
    reads: () => reads,
    sampler,
  };
}

const a = (realizedPnl: number): AccountPnl => ({ accountId: 'usr_a', realizedPnl, positions: 1 });

describe('RankSampler', () => {
  it('samples the latest boundary passed once, then nothing until the next one', () => {
    const r = rig();
    r.set([a(5), { accountId: 'house', realizedPnl: 9, positions: 3 }]);
    expect(r.catchUp(T0)).toBe(MIDNIGHT);
    expect(r.store.points).toEqual([
      { time: MIDNIGHT, s: { accountId: 'usr_a', realizedPnl: 5, rank: 1, participants: 1 } },
    ]);
    // Same day, later: nothing due, and the engine is not even read.
    const reads = r.reads();
    expect(r.catchUp(T0 + 11 * 3_600_000)).toBeNull();
    expect(r.catchUp(MIDNIGHT + DAY - 1)).toBeNull();
    expect(r.reads()).toBe(reads);
    // Exactly at the next boundary: due.
    r.set([a(7)]);
    expect(r.catchUp(MIDNIGHT + DAY)).toBe(MIDNIGHT + DAY);
    expect(r.store.points.map((p) => [p.time, p.s.realizedPnl])).toEqual([
      [MIDNIGHT, 5],
      [MIDNIGHT + DAY, 7],
    ]);
  });

  it('records a boundary with no participants too, so later trades are not dated back to it', () => {
    const r = rig();
    expect(r.catchUp(T0)).toBe(MIDNIGHT);
    expect(r.store.samples.get(MIDNIGHT)).toBe(0);
    r.set([a(5)]);
    expect(r.catchUp(T0 + 1000)).toBeNull();
    expect(r.store.points).toEqual([]);
  });

  it('does not back-fill missed boundaries: only the latest one passed', () => {
    const r = rig();
    r.catchUp(T0);
    r.set([a(1)]);
    expect(r.catchUp(T0 + 5 * DAY)).toBe(MIDNIGHT + 5 * DAY);
    expect([...r.store.samples.keys()]).toEqual([MIDNIGHT, MIDNIGHT + 5 * DAY]);
  });

  it('a second sampler over the same store (another catch-up) adds nothing', () => {
    const r = rig();
    r.set([a(3)]);
    r.catchUp(T0);
    const other = new RankSampler(r.store, { intervalMs: DAY, historyDays: 365, excluded: 'h' });
    let read = false;
    expect(
      other.catchUp(T0, () => {
        read = true;
        return [a(99)];
      }),
    ).toBeNull();
    expect(read).toBe(false);
    expect(r.store.points).toHaveLength(1);
  });

  it('takes no sample while the engine is unavailable, and takes it once it is back', () => {
    const r = rig();
    expect(r.sampler.catchUp(T0, () => null)).toBeNull();
    expect(r.store.samples.size).toBe(0);
    r.set([a(2)]);
    expect(r.catchUp(T0 + 1)).toBe(MIDNIGHT);
  });

  it('deletes points older than historyDays when it samples', () => {
    const r = rig(2);
    r.set([a(1)]);
    for (let d = 0; d < 5; d++) r.catchUp(T0 + d * DAY);
    expect([...new Set(r.store.points.map((p) => (p.time - MIDNIGHT) / DAY))]).toEqual([2, 3, 4]);
  });
});
