import { describe, expect, it } from '@jest/globals';
import { IdGenerator } from './id-generator.js';
import { COMMENT_ID, ORDER_ID, WATCHLIST_ID } from './id-patterns.js';

describe('IdGenerator', () => {
  it('prefixes, never repeats, and sorts by creation even within one millisecond', () => {
    let now = 1_795_000_000_000;
    const gen = new IdGenerator(() => now);
    const ids: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      if (i % 5000 === 0) now += 1;
      ids.push(gen.next('ord'));
    }
    expect(ids.every((id) => /^ord_[0-9a-z]{22}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('keeps order when the clock steps back', () => {
    let now = 2_000_000_000_000;
    const gen = new IdGenerator(() => now);
    const a = gen.next('evt');
    now -= 5_000;
    const b = gen.next('evt');
    expect(b > a).toBe(true);
  });

  it('writes ids the shapes of id-patterns accept (orders, comments, watchlists)', () => {
    const gen = new IdGenerator(() => 1_795_000_000_000);
    const shapes: [string, RegExp][] = [
      ['ord', ORDER_ID],
      ['cmt', COMMENT_ID],
      ['wl', WATCHLIST_ID],
    ];
    for (const [prefix, shape] of shapes) expect(gen.next(prefix)).toMatch(shape);
    expect('wl_01').not.toMatch(COMMENT_ID);
    expect('cmt_01').not.toMatch(WATCHLIST_ID);
  });
});
