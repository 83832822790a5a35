import { describe, expect, it } from '@jest/globals';
import { formatUsd, parseUsd, POSITIVE_USD_PATTERN, USD_PATTERN } from './usd.js';

describe('USD strings', () => {
  it.each([
    [9_500_000, '95000.00'],
    [1, '0.01'],
    [10, '0.10'],
    [12_345, '123.45'],
    [0, '0.00'],
  ])('formats %d cents as %s', (cents, text) => {
    expect(formatUsd(cents)).toBe(text);
    expect(parseUsd(text)).toBe(cents);
  });

  it('reads 1 or 2 decimals and whole dollars', () => {
    expect(parseUsd('123.4')).toBe(12_340);
    expect(parseUsd('7')).toBe(700);
  });

  it.each(['', '-1.00', '1.234', '1e3', ' 1', '01.00', '1.', '.5', 'abc', '12345678901.00'])(
    'refuses %j',
    (text) => expect(parseUsd(text)).toBeNull(),
  );
});

describe('POSITIVE_USD_PATTERN (a price that must be positive)', () => {
  it.each(['0.01', '0.1', '0.10', '0.99', '1', '1.5', '9999999999.99', '160000.00'])(
    'takes %j, which parseUsd reads as at least 1 cent',
    (text) => {
      expect(POSITIVE_USD_PATTERN.test(text)).toBe(true);
      expect(parseUsd(text)).toBeGreaterThanOrEqual(1);
    },
  );

  it.each(['0', '0.0', '0.00', '00.01', '0.001', '-0.01', '10000000000.00', '1.', ''])(
    'refuses %j',
    (text) => expect(POSITIVE_USD_PATTERN.test(text)).toBe(false),
  );

  it('is USD_PATTERN without the zero amounts (every string of 1..4 characters over 0-9 and .)', () => {
    const chars = ['0', '1', '9', '.'];
    let words = [''];
    for (let n = 0; n < 4; n++) words = words.flatMap((w) => chars.map((c) => w + c));
    for (const w of words) {
      const positive = USD_PATTERN.test(w) && parseUsd(w)! > 0;
      expect({ w, taken: POSITIVE_USD_PATTERN.test(w) }).toEqual({ w, taken: positive });
    }
  });
});
