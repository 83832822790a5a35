import { describe, expect, it } from '@jest/globals';
import { DomainError } from '../errors/domain-error.js';
import { decodeCursor, encodeCursor, type CursorKey } from './cursor.js';

const forged = (parts: unknown[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');

function refusal(cursor: string, list: string, kinds: CursorKey[]): string {
  try {
    decodeCursor(cursor, list, kinds);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return (err as DomainError).message;
  }
  throw new Error('accepted');
}

describe('cursors', () => {
  it('give back the keys of the list that issued them', () => {
    const c = encodeCursor('markets', ['2026-11-22T12:00:00.000Z', 'mkt_abc']);
    expect(decodeCursor(c, 'markets', ['time', 'id'])).toEqual([
      '2026-11-22T12:00:00.000Z',
      'mkt_abc',
    ]);
  });

  it('refuse another list, another shape and times the API never wrote', () => {
    const c = encodeCursor('orders:test', ['ord_1']);
    expect(refusal(c, 'orders:live', ['id'])).toMatch(/a cursor of another list/);
    // Whatever its keys: a markets cursor (two keys) on a one-key list, and the other way.
    const markets = encodeCursor('markets', ['2026-11-22T12:00:00.000Z', 'mkt_abc']);
    expect(refusal(markets, 'orders:test', ['id'])).toMatch(/a cursor of another list/);
    expect(refusal(c, 'markets', ['time', 'id'])).toMatch(/a cursor of another list/);
    expect(refusal(forged(['markets', 'mkt_a']), 'markets', ['time', 'id'])).toMatch(
      /cursor must be a cursor this API issued/,
    );
    for (const time of ['2026-02-30T00:00:00.000Z', '2026-11-22T24:00:00.000Z']) {
      expect(refusal(forged(['markets', time, 'mkt_a']), 'markets', ['time', 'id'])).toMatch(
        /cursor must be a cursor this API issued/,
      );
    }
    expect(refusal('not base64 json', 'markets', ['time', 'id'])).toMatch(
      /a cursor this API issued/,
    );
  });

  it("accept a cursor of a list's former name only where that name is given", () => {
    const old = encodeCursor('notifications', ['ntf_1']);
    expect(decodeCursor(old, 'notifications:live', ['id'], ['notifications'])).toEqual(['ntf_1']);
    expect(refusal(old, 'notifications:test', ['id'])).toMatch(/a cursor of another list/);
    expect(() => decodeCursor(old, 'notifications:live', ['time'], ['notifications'])).toThrow(
      DomainError,
    );
  });

  it('carry integer keys as decimal strings, safe integers only', () => {
    const c = encodeCursor('leaderboard:live:ALL', ['-120', 'usr_abc']);
    expect(decodeCursor(c, 'leaderboard:live:ALL', ['int', 'id'])).toEqual(['-120', 'usr_abc']);
    for (const score of [12, '1.5', '012', '-0', '1e3', '99999999999999999', ' 1']) {
      expect(
        refusal(forged(['leaderboard:live:ALL', score, 'usr_a']), 'leaderboard:live:ALL', [
          'int',
          'id',
        ]),
      ).toMatch(/cursor must be a cursor this API issued/);
    }
  });
});
