import { describe, expect, it } from '@jest/globals';
import { AccountState, PositionState } from './ledger.js';
import { PositionIndex } from './position-index.js';
import { mulberry32 } from './price-feed.js';

const state = (a: number, m: number): PositionState =>
  new PositionState(new AccountState(`acc_${a}`, a), `mkt_${m}`);

describe('PositionIndex', () => {
  it('answers like a Map keyed by the (account, market) pair through growth, deletes and re-adds', () => {
    const index = new PositionIndex();
    const model = new Map<string, PositionState>();
    const rand = mulberry32(7);
    let mismatches = 0;
    for (let step = 0; step < 60_000; step++) {
      const a = Math.floor(rand() * 3_000);
      const m = Math.floor(rand() * 40);
      const key = `${a}|${m}`;
      const known = model.get(key);
      if (index.get(a, m) !== known) mismatches++;
      if (known === undefined) {
        const ps = state(a, m);
        index.add(a, m, ps);
        model.set(key, ps);
      } else if (rand() < 0.3) {
        index.delete(a, m);
        model.delete(key);
      }
    }
    for (const [key, ps] of model) {
      const [a, m] = key.split('|').map(Number);
      if (index.get(a, m) !== ps) mismatches++;
    }
    expect(model.size).toBeGreaterThan(10_000);
    expect(mismatches).toBe(0);
  });

  it('keeps (1, 2) and (2, 1) apart and finds nothing for an unknown pair', () => {
    const index = new PositionIndex();
    const x = state(1, 2);
    const y = state(2, 1);
    index.add(1, 2, x);
    index.add(2, 1, y);
    expect(index.get(1, 2)).toBe(x);
    expect(index.get(2, 1)).toBe(y);
    expect(index.get(1, 1)).toBeUndefined();
    index.delete(1, 2);
    expect(index.get(1, 2)).toBeUndefined();
    expect(index.get(2, 1)).toBe(y);
  });
});
