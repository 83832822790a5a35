import { describe, expect, it } from '@jest/globals';
import type { IndexValue, MarketMark } from './index-math.js';
import type { IndexPointStore } from './index-points.repository.js';
import { IndexSampler } from './index-sampler.js';

const NOON = Date.parse('2026-11-22T12:00:00.000Z');
const MIN = 60_000;
const DAY = 86_400_000;

/** An in-memory store keyed like the table: (slug, time) unique, the first write kept. */
class MemoryStore implements IndexPointStore {
  readonly points = new Map<string, { value: number | null; count: number }>();
  readonly cutoffs: string[] = [];
  latestTime(): string | null {
    const times = [...this.points.keys()].map((k) => k.split(' ')[1]).sort();
    return times.length === 0 ? null : times[times.length - 1];
  }
  record(time: string, values: readonly IndexValue[], cutoff: string): void {
    for (const v of values) {
      const key = `${v.slug} ${time}`;
      if (!this.points.has(key)) this.points.set(key, { value: v.value, count: v.market_count });
    }
    for (const key of [...this.points.keys()]) {
      if (key.split(' ')[1] < cutoff) this.points.delete(key);
    }
    this.cutoffs.push(cutoff);
  }
  times(slug: string): string[] {
    return [...this.points.keys()]
      .filter((k) => k.startsWith(`${slug} `))
      .map((k) => k.split(' ')[1])
      .sort();
  }
}

function rig(start = NOON, store = new MemoryStore()) {
  let now = start;
  let markets: MarketMark[] = [{ category: 'SPORTS', status: 'OPEN', mark: 40 }];
  const sampler = new IndexSampler({
    now: () => now,
    intervalMs: MIN,
    historyDays: 2,
    store,
    markets: () => markets,
  });
  return {
    sampler,
    store,
    at: (ms: number) => (now = ms),
    setMarkets: (m: MarketMark[]) => (markets = m),
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('IndexSampler', () => {
  it('records every index once per boundary, with the values read when it samples', () => {
    const r = rig(NOON + 1_000);
    expect(r.sampler.catchUp()).toBe(NOON);
    expect(r.sampler.catchUp()).toBeNull();
    r.at(NOON + 59_999);
    r.setMarkets([{ category: 'SPORTS', status: 'OPEN', mark: 60 }]);
    expect(r.sampler.catchUp()).toBeNull();
    r.at(NOON + MIN);
    expect(r.sampler.catchUp()).toBe(NOON + MIN);
    expect(r.store.times('sports')).toEqual([iso(NOON), iso(NOON + MIN)]);
    expect(r.store.times('all')).toEqual([iso(NOON), iso(NOON + MIN)]);
    expect(r.store.points.get(`sports ${iso(NOON)}`)).toEqual({ value: 40, count: 1 });
    expect(r.store.points.get(`sports ${iso(NOON + MIN)}`)).toEqual({ value: 60, count: 1 });
  });

  it('does not back-fill missed boundaries: only the latest passed is recorded', () => {
    const r = rig();
    r.sampler.catchUp();
    r.at(NOON + 10 * MIN + 5);
    expect(r.sampler.catchUp()).toBe(NOON + 10 * MIN);
    expect(r.store.times('all')).toEqual([iso(NOON), iso(NOON + 10 * MIN)]);
  });

  it('picks up after the newest stored point (a restart records no boundary twice)', () => {
    const store = new MemoryStore();
    rig(NOON, store).sampler.catchUp();
    const again = rig(NOON + 30_000, store);
    expect(again.sampler.catchUp()).toBeNull();
    again.at(NOON + MIN);
    expect(again.sampler.catchUp()).toBe(NOON + MIN);
  });

  it('deletes points older than the history window when it samples', () => {
    const r = rig();
    r.sampler.catchUp();
    r.at(NOON + 2 * DAY);
    r.sampler.catchUp();
    expect(r.store.cutoffs.at(-1)).toBe(iso(NOON));
    expect(r.store.times('all')).toEqual([iso(NOON), iso(NOON + 2 * DAY)]);
    r.at(NOON + 2 * DAY + MIN);
    r.sampler.catchUp();
    expect(r.store.times('all')).toEqual([iso(NOON + 2 * DAY), iso(NOON + 2 * DAY + MIN)]);
  });
});
