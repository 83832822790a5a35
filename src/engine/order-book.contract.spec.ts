import { describe, expect, it } from '@jest/globals';
import { HandleOrderBook } from './handle-order-book.js';
import { ObjectOrderBook } from './object-order-book.js';
import { BookFixture, bookViolations, ORDER_BOOK_CONTRACT } from './order-book.contract.js';
import type { OrderBook } from './order-book.js';

const implementations: [string, () => OrderBook][] = [
  ['HandleOrderBook', () => new HandleOrderBook()],
  ['ObjectOrderBook', () => new ObjectOrderBook()],
];

describe.each(implementations)('%s passes the order book contract', (_name, makeBook) => {
  it.each(ORDER_BOOK_CONTRACT.map((c) => [c.name, c] as const))('%s', (_case, c) => {
    const f = new BookFixture(makeBook());
    c.run(f, makeBook);
    expect(bookViolations(f.book)).toEqual([]);
  });

  it('the invariant check catches a level total that disagrees with its orders', () => {
    const f = new BookFixture(makeBook());
    const o = f.rest('BID', 40, 5);
    f.book.shrink(o, 2);
    expect(bookViolations(f.book)).toEqual(['BID 40: size 3 != sum of remainders 5']);
  });
});
