import { describe, expect, it } from '@jest/globals';
import { DomainError } from '../errors/domain-error.js';
import { instant, LAST_INSTANT } from './instant.js';

describe('instant', () => {
  it('reads dates and zoned date-times as UTC milliseconds; absent stays absent', () => {
    expect(instant(undefined, 'from')).toBeUndefined();
    expect(instant('2026-11-22', 'from')).toBe('2026-11-22T00:00:00.000Z');
    expect(instant('2026-11-22T10:00:00+01:00', 'from')).toBe('2026-11-22T09:00:00.000Z');
    // Finer than a millisecond rounds up.
    expect(instant('2026-11-22T10:00:00.3371Z', 'from')).toBe('2026-11-22T10:00:00.338Z');
  });

  it('refuses a zone-less time and a non-date, naming the field', () => {
    for (const bad of ['2026-11-22T10:00:00', '2026-11-22 10:00Z', 'yesterday']) {
      let caught: unknown;
      try {
        instant(bad, 'to');
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(DomainError);
      expect((caught as DomainError).code).toBe('VALIDATION_FAILED');
    }
  });

  it('clamps past the end of year 9999, which would otherwise sort before every stored time', () => {
    expect(instant('9999-12-31T23:59:59.9999Z', 'to')).toBe(LAST_INSTANT);
    expect(instant(LAST_INSTANT, 'to')).toBe(LAST_INSTANT);
  });
});
