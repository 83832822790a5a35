import { describe, expect, it } from '@jest/globals';
import {
  deprecationHeaders,
  isSunset,
  STABLE,
  successorPath,
  utcMidnight,
  type Lifecycle,
} from './lifecycle.js';

const FULL: Lifecycle = {
  state: 'DEPRECATED',
  deprecatedOn: '2026-05-08',
  sunsetOn: '2026-08-08',
  successor: '/api/v1/openapi.json',
};

describe('route lifecycle', () => {
  describe('deprecationHeaders', () => {
    it('emits nothing for STABLE and BETA, whatever dates they carry', () => {
      expect(deprecationHeaders(STABLE)).toEqual({});
      expect(deprecationHeaders({ state: 'BETA' })).toEqual({});
      expect(deprecationHeaders({ ...FULL, state: 'STABLE' })).toEqual({});
      expect(deprecationHeaders({ ...FULL, state: 'BETA' })).toEqual({});
    });

    it('emits Deprecation (@unix seconds), Sunset (HTTP-date) and Link for a scheduled deprecation', () => {
      expect(deprecationHeaders(FULL)).toEqual({
        Deprecation: '@1778198400',
        Sunset: 'Sat, 08 Aug 2026 00:00:00 GMT',
        Link: '</api/v1/openapi.json>; rel="successor-version"',
      });
    });

    it('omits Sunset when no sunset is scheduled', () => {
      const headers = deprecationHeaders({
        state: 'DEPRECATED',
        deprecatedOn: '2026-05-08',
        successor: '/api/v1/positions/cursor',
      });
      expect(headers).toEqual({
        Deprecation: '@1778198400',
        Link: '</api/v1/positions/cursor>; rel="successor-version"',
      });
      expect(headers).not.toHaveProperty('Sunset');
    });

    it('omits Link without a successor and Deprecation without a date', () => {
      expect(deprecationHeaders({ state: 'DEPRECATED', deprecatedOn: '2026-05-08' })).toEqual({
        Deprecation: '@1778198400',
      });
      expect(deprecationHeaders({ state: 'DEPRECATED' })).toEqual({});
    });

    it("fills a successor template's path parameters, percent-encoded", () => {
      const lc: Lifecycle = {
        state: 'DEPRECATED',
        deprecatedOn: '2026-05-08',
        successor: '/api/v1/indices/{slug}/history',
      };
      expect(deprecationHeaders(lc, { slug: 'sports' }).Link).toBe(
        '</api/v1/indices/sports/history>; rel="successor-version"',
      );
      expect(deprecationHeaders(lc, { slug: 'a b>\r\n' }).Link).toBe(
        '</api/v1/indices/a%20b%3E%0D%0A/history>; rel="successor-version"',
      );
      // No such parameter: the template stays as documented.
      expect(deprecationHeaders(lc).Link).toBe(
        '</api/v1/indices/{slug}/history>; rel="successor-version"',
      );
    });

    it('formats the dates as UTC midnight', () => {
      const h = deprecationHeaders({
        state: 'DEPRECATED',
        deprecatedOn: '1970-01-02',
        sunsetOn: '2027-02-28',
      });
      expect(h.Deprecation).toBe('@86400');
      expect(h.Sunset).toBe('Sun, 28 Feb 2027 00:00:00 GMT');
    });
  });

  describe('isSunset', () => {
    const sunsetMs = Date.parse('2026-08-08T00:00:00.000Z');

    it('is false before the sunset instant and true from it on', () => {
      expect(isSunset(FULL, sunsetMs - 1)).toBe(false);
      expect(isSunset(FULL, sunsetMs)).toBe(true);
      expect(isSunset(FULL, sunsetMs + 86_400_000 * 365)).toBe(true);
    });

    it('is never true without a scheduled sunset or for a non-deprecated route', () => {
      const far = sunsetMs * 2;
      expect(isSunset({ state: 'DEPRECATED', deprecatedOn: '2026-05-08' }, far)).toBe(false);
      expect(isSunset({ ...FULL, state: 'STABLE' }, far)).toBe(false);
      expect(isSunset({ ...FULL, state: 'BETA' }, far)).toBe(false);
      expect(isSunset(STABLE, far)).toBe(false);
    });
  });

  describe('utcMidnight', () => {
    it('parses YYYY-MM-DD as UTC midnight and refuses anything else', () => {
      expect(utcMidnight('2026-08-08')).toBe(Date.UTC(2026, 7, 8));
      expect(() => utcMidnight('08/08/2026')).toThrow(RangeError);
      expect(() => utcMidnight('not a date')).toThrow(RangeError);
    });
  });

  it('the successor of this very resource, for the Link and for the 410 SUNSET details alike', () => {
    const lc: Lifecycle = {
      state: 'DEPRECATED',
      deprecatedOn: '2026-05-08',
      successor: '/api/v1/indices/{slug}/history',
    };
    expect(successorPath(lc, { slug: 'a b>;' })).toBe('/api/v1/indices/a%20b%3E%3B/history');
    expect(successorPath(lc)).toBe('/api/v1/indices/{slug}/history');
    expect(successorPath(STABLE)).toBeUndefined();
  });
});
