import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { AmountDto, MAX_AMOUNT_CENTS } from './money.js';

const problems = (amount: unknown): string[] =>
  validateSync(plainToInstance(AmountDto, { amount_cents: amount })).map((e) => e.property);

describe('AmountDto', () => {
  it('accepts positive integer cents up to the documented maximum', () => {
    for (const ok of [1, 99, 50_000, MAX_AMOUNT_CENTS]) expect(problems(ok)).toEqual([]);
  });

  it('refuses 0, negative, fractional, too large and non-number amounts', () => {
    for (const bad of [
      0,
      -1,
      1.5,
      MAX_AMOUNT_CENTS + 1,
      Number.MAX_SAFE_INTEGER,
      '100',
      null,
      true,
      NaN,
      undefined,
    ]) {
      expect([bad, problems(bad)]).toEqual([bad, ['amount_cents']]);
    }
  });
});
