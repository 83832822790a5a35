import { describe, expect, it } from '@jest/globals';
import { mulberry32, PriceFeed } from './price-feed.js';

function run(seed: number, ticks: number, markets = ['a', 'b', 'c']): number[][] {
  const feed = new PriceFeed({ seed });
  markets.forEach((m, i) => feed.addMarket(m, 30 + 20 * i));
  const out: number[][] = [];
  for (let t = 0; t < ticks; t++) out.push([...feed.tick().values()]);
  return out;
}

describe('PriceFeed', () => {
  it('gives the same sequence for the same seed and inputs', () => {
    expect(run(42, 300)).toEqual(run(42, 300));
    expect(run(42, 300)).not.toEqual(run(43, 300));
  });

  it('moves: the walk is not stuck', () => {
    const path = run(1, 500).map((p) => p[0]);
    expect(new Set(path).size).toBeGreaterThan(5);
  });

  it('stays an integer within 1..99 and can reach both bounds', () => {
    const feed = new PriceFeed({ seed: 9, volatility: 1.5 });
    feed.addMarket('m', 50);
    const seen = new Set<number>();
    for (let t = 0; t < 5_000; t++) {
      const p = feed.tick().get('m')!;
      expect(Number.isInteger(p) && p >= 1 && p <= 99).toBe(true);
      seen.add(p);
    }
    expect(seen.has(1) && seen.has(99)).toBe(true);
  });

  it("keeps each market's path independent of the other markets", () => {
    const alone = run(5, 100, ['x']).map((p) => p[0]);
    const together = run(5, 100, ['x', 'y']).map((p) => p[0]);
    expect(together).toEqual(alone);
  });

  it('jumps on setReference and continues from there', () => {
    const feed = new PriceFeed({ seed: 3 });
    feed.addMarket('m', 50);
    expect(feed.setReference('m', 80)).toBe(true);
    expect(feed.reference('m')).toBe(80);
    expect(Math.abs(feed.tick().get('m')! - 80)).toBeLessThan(10);
    expect(feed.setReference('m', 0)).toBe(false);
    expect(feed.setReference('m', 12.5)).toBe(false);
    expect(feed.setReference('nope', 50)).toBe(false);
    expect(feed.addMarket('m', 50)).toBe(false);
    expect(feed.removeMarket('m')).toBe(true);
    expect(feed.tick().size).toBe(0);
  });

  it('mulberry32 is deterministic and in [0, 1)', () => {
    const a = mulberry32(7);
    const b = mulberry32(7);
    for (let i = 0; i < 1_000; i++) {
      const x = a();
      expect(x).toBe(b());
      expect(x >= 0 && x < 1).toBe(true);
    }
  });
});
