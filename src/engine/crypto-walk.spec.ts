import { describe, expect, it } from '@jest/globals';
import { CryptoWalk, MAX_INDEX_CENTS } from './crypto-walk.js';

const SYMBOLS = [
  { symbol: 'BTC-USD', startCents: 9_500_000, sigma: 0.001 },
  { symbol: 'ETH-USD', startCents: 320_000, sigma: 0.0015 },
  { symbol: 'SOL-USD', startCents: 18_000, sigma: 0.002 },
];

function path(seed: number, steps: number): number[][] {
  const walk = new CryptoWalk({ seed, symbols: SYMBOLS });
  const out: number[][] = [];
  for (let i = 0; i < steps; i++) out.push([...walk.step().values()]);
  return out;
}

describe('CryptoWalk', () => {
  it('gives the same path for the same seed, another for another seed', () => {
    expect(path(7, 500)).toEqual(path(7, 500));
    expect(path(7, 500)).not.toEqual(path(8, 500));
  });

  it('moves in integer cents, geometrically (steps scale with the price)', () => {
    const p = path(3, 2000);
    expect(p.flat().every((c) => Number.isSafeInteger(c) && c >= 1)).toBe(true);
    expect(new Set(p.map((r) => r[0])).size).toBeGreaterThan(100);
    // BTC moves by tens of dollars a step at sigma 0.001; never by a factor of two.
    expect(p.slice(1).every((r, i) => r[0] / p[i][0] < 1.01)).toBe(true);
  });

  it('never goes below 1 cent nor above the cap', () => {
    const walk = new CryptoWalk({
      seed: 1,
      symbols: [
        { symbol: 'LOW', startCents: 2, sigma: 0.9 },
        { symbol: 'HIGH', startCents: MAX_INDEX_CENTS, sigma: 0.9 },
      ],
    });
    let low = Infinity;
    let high = 0;
    for (let i = 0; i < 5000; i++) {
      const s = walk.step();
      low = Math.min(low, s.get('LOW')!);
      high = Math.max(high, s.get('HIGH')!);
    }
    expect(low).toBe(1);
    expect(high).toBe(MAX_INDEX_CENTS);
  });

  it('a symbol moved by hand does not change the path of the others', () => {
    const a = new CryptoWalk({ seed: 5, symbols: SYMBOLS });
    const b = new CryptoWalk({ seed: 5, symbols: SYMBOLS });
    b.set('BTC-USD', 12_000_000);
    for (let i = 0; i < 50; i++) {
      const x = a.step();
      const y = b.step();
      expect(y.get('ETH-USD')).toBe(x.get('ETH-USD'));
    }
    expect(b.price('BTC-USD')).not.toBe(a.price('BTC-USD'));
  });

  it('refuses a price outside 1 cent..cap and an unknown symbol', () => {
    const w = new CryptoWalk({ seed: 5, symbols: SYMBOLS });
    expect(w.set('BTC-USD', 0)).toBe(false);
    expect(w.set('BTC-USD', 1.5)).toBe(false);
    expect(w.set('BTC-USD', MAX_INDEX_CENTS + 1)).toBe(false);
    expect(w.set('DOGE-USD', 100)).toBe(false);
    expect(w.price('BTC-USD')).toBe(9_500_000);
  });

  it('restored from (price, steps) continues the path an uninterrupted walk takes', () => {
    const a = new CryptoWalk({ seed: 11, symbols: SYMBOLS });
    for (let i = 0; i < 300; i++) a.step();
    const restored = new Map(SYMBOLS.map((s) => [s.symbol, a.state(s.symbol)!]));
    const b = new CryptoWalk({ seed: 11, symbols: SYMBOLS, restored });
    for (let i = 0; i < 300; i++) expect([...b.step().values()]).toEqual([...a.step().values()]);
  });
});
