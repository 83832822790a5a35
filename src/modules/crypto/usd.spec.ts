import { describe, expect, it } from '@jest/globals';
import { formatUsd, parseUsd } from './usd.js';

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
