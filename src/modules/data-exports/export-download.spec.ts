import { describe, expect, it } from '@jest/globals';
import { acceptsGzip, byteRange } from './export-download.js';

describe('byteRange', () => {
  it('reads one range of bytes= as inclusive offsets, clamped to the file', () => {
    expect(byteRange(undefined, 100)).toBeNull();
    expect(byteRange('bytes=0-9', 100)).toEqual([0, 9]);
    expect(byteRange('bytes=90-', 100)).toEqual([90, 99]);
    expect(byteRange('bytes=90-500', 100)).toEqual([90, 99]);
    expect(byteRange('bytes=-10', 100)).toEqual([90, 99]);
    expect(byteRange('bytes=-500', 100)).toEqual([0, 99]);
  });

  it('is unsatisfiable past the end or for an empty suffix; ignores what it cannot read', () => {
    expect(byteRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(byteRange('bytes=-0', 100)).toBe('unsatisfiable');
    expect(byteRange('bytes=0-', 0)).toBe('unsatisfiable');
    expect(byteRange('bytes=5-2', 100)).toBeNull();
    expect(byteRange('bytes=0-1,5-6', 100)).toBeNull();
    expect(byteRange('items=0-1', 100)).toBeNull();
    expect(byteRange('bytes=-', 100)).toBeNull();
  });
});

describe('acceptsGzip', () => {
  it('takes gzip or * unless q=0', () => {
    expect(acceptsGzip(undefined)).toBe(false);
    expect(acceptsGzip('gzip')).toBe(true);
    expect(acceptsGzip('br, gzip;q=0.5')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('deflate, br')).toBe(false);
  });
});
