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

  it('reads every RFC 3339 date-time: lower-case t and z, offsets, long fractions, leap seconds', () => {
    expect(instant('2026-11-22t10:00:00z', 'from')).toBe('2026-11-22T10:00:00.000Z');
    expect(instant('2026-11-22T10:00:00-00:00', 'from')).toBe('2026-11-22T10:00:00.000Z');
    expect(instant('2026-11-22T00:30:00+23:59', 'from')).toBe('2026-11-21T00:31:00.000Z');
    expect(instant('2026-11-22T10:00:00.120000000000Z', 'from')).toBe('2026-11-22T10:00:00.120Z');
    expect(instant('2016-12-31T23:59:60Z', 'from')).toBe('2016-12-31T23:59:59.999Z');
    expect(instant('0001-01-01T00:00:00Z', 'from')).toBe('0001-01-01T00:00:00.000Z');
    expect(instant('2028-02-29', 'from')).toBe('2028-02-29T00:00:00.000Z');
  });

  it('refuses a zone-less time, a non-date and a time that does not exist, naming the field', () => {
    for (const bad of [
      '2026-11-22T10:00:00',
      '2026-11-22 10:00Z',
      'yesterday',
      '2026-02-29T00:00:00Z',
      '2026-04-31',
      '2026-11-22T24:00:00Z',
      '2026-11-22T10:60:00Z',
      '2026-11-22T10:00:61Z',
      '2026-11-22T10:00:00+24:00',
      '2026-13-01',
    ]) {
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
