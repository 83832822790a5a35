/**
 * The contract every {@link OrderBook} implementation passes (as exchange-core runs
 * OrderBookBaseTest against both its books): a list of cases, each run on a fresh book, plus
 * {@link bookViolations}, the structural invariants checked after every mutating step and after
 * every case. Framework-free so it ships no test runner import; order-book.contract.spec.ts runs
 * it against each implementation.
 */
import { strict as assert } from 'node:assert';
import { mulberry32 } from './price-feed.js';
import { AccountState, PositionState } from './ledger.js';
import { BookOrder } from './order.js';
import { NO_ASK, NO_BID, type OrderBook } from './order-book.js';
import type { BookSide } from './types.js';

/** Structural invariants of a book; returns one message per violation (empty when sound). */
export function bookViolations(book: OrderBook): string[] {
  const errors: string[] = [];
  const seen = new Set<BookOrder>();
  let maxBid = NO_BID;
  let minAsk = NO_ASK;
  let total = 0;
  for (const side of ['BID', 'ASK'] as const) {
    for (let p = 1; p <= 99; p++) {
      const where = `${side} ${p}`;
      let qty = 0;
      let n = 0;
      let lastSeq = -Infinity;
      for (let o = book.head(side, p); o !== null; o = book.next(o)) {
        if (seen.has(o)) {
          errors.push(`${where}: order ${o.id} listed twice`);
          break;
        }
        seen.add(o);
        n++;
        qty += o.quantity - o.filledQuantity;
        if (o.bookSide !== side || o.bookPrice !== p) errors.push(`${where}: holds ${o.id}`);
        if (o.sequence <= lastSeq) errors.push(`${where}: FIFO broken at ${o.id}`);
        lastSeq = o.sequence;
        if (!book.has(o)) errors.push(`${where}: ${o.id} listed but its handle does not map back`);
      }
      if (n !== book.levelCount(side, p))
        errors.push(`${where}: count ${book.levelCount(side, p)} != ${n}`);
      if (qty !== book.levelQuantity(side, p)) {
        errors.push(`${where}: size ${book.levelQuantity(side, p)} != sum of remainders ${qty}`);
      }
      if (n > 0 && qty <= 0) errors.push(`${where}: resting orders with nothing remaining`);
      if (n > 0 && side === 'BID' && p > maxBid) maxBid = p;
      if (n > 0 && side === 'ASK' && p < minAsk) minAsk = p;
      total += n;
    }
  }
  if (book.bestBid !== maxBid) errors.push(`bestBid ${book.bestBid} != ${maxBid}`);
  if (book.bestAsk !== minAsk) errors.push(`bestAsk ${book.bestAsk} != ${minAsk}`);
  if (book.size() !== total) errors.push(`size ${book.size()} != ${total}`);
  // orders(): bids best first, then asks best first, FIFO within a level, each order once.
  const listed = [...book.orders()];
  if (listed.length !== total) errors.push(`orders() lists ${listed.length} of ${total}`);
  for (let i = 1; i < listed.length; i++) {
    const a = listed[i - 1];
    const b = listed[i];
    const ordered =
      a.bookSide === b.bookSide
        ? a.bookPrice === b.bookPrice
          ? a.sequence < b.sequence
          : a.bookSide === 'BID'
            ? a.bookPrice > b.bookPrice
            : a.bookPrice < b.bookPrice
        : a.bookSide === 'BID';
    if (!ordered) errors.push(`orders() out of order at ${b.id}`);
  }
  // depth(): every non-empty level once, best first, none empty.
  for (const side of ['BID', 'ASK'] as const) {
    const d = book.depth(side, 99);
    for (let i = 0; i < d.length; i++) {
      if (d[i].quantity <= 0) errors.push(`depth ${side} lists empty level ${d[i].price}`);
      if (d[i].quantity !== book.levelQuantity(side, d[i].price)) {
        errors.push(`depth ${side} ${d[i].price} quantity mismatch`);
      }
      if (i > 0 && (side === 'BID' ? d[i].price >= d[i - 1].price : d[i].price <= d[i - 1].price)) {
        errors.push(`depth ${side} not sorted best first`);
      }
    }
    let nonEmpty = 0;
    for (let p = 1; p <= 99; p++) if (book.levelCount(side, p) > 0) nonEmpty++;
    if (d.length !== nonEmpty) errors.push(`depth ${side} lists ${d.length} of ${nonEmpty} levels`);
  }
  return errors;
}

/** Builds resting orders for the cases; every call takes a higher sequence. */
export class BookFixture {
  private sequence = 0;
  private readonly owner = new PositionState(new AccountState('acc'), 'm');
  constructor(readonly book: OrderBook) {}

  order(side: BookSide, price: number, quantity: number, sequence = ++this.sequence): BookOrder {
    const action = side === 'BID' ? 'BUY' : 'SELL';
    return new BookOrder().init(
      `o${sequence}`,
      this.owner,
      null,
      null,
      action,
      'YES',
      'LIMIT',
      price,
      side,
      price,
      quantity,
      'GTC',
      false,
      0,
      sequence,
    );
  }

  /** A new order appended at the back of its level (invariants checked). */
  rest(side: BookSide, price: number, quantity: number): BookOrder {
    const o = this.order(side, price, quantity);
    this.book.append(o);
    this.check();
    return o;
  }

  /** Fills `qty` of a resting order as the engine does (shrink, then book the fill). */
  fill(o: BookOrder, qty: number): void {
    this.book.shrink(o, qty);
    o.filledQuantity += qty;
    if (o.filledQuantity === o.quantity) this.book.unlink(o);
    this.check();
  }

  unlink(o: BookOrder): void {
    this.book.unlink(o);
    this.check();
  }

  level(side: BookSide, price: number): string[] {
    const ids: string[] = [];
    for (let o = this.book.head(side, price); o !== null; o = this.book.next(o)) ids.push(o.id);
    return ids;
  }

  check(): void {
    assert.deepEqual(bookViolations(this.book), []);
  }
}

export interface BookCase {
  readonly name: string;
  run(f: BookFixture, makeBook: () => OrderBook): void;
}

/** The cases; each gets a fresh book, and the runner checks {@link bookViolations} after it. */
export const ORDER_BOOK_CONTRACT: readonly BookCase[] = [
  {
    name: 'an empty book has the sentinels as best prices, no depth and nothing to fill',
    run(f) {
      const b = f.book;
      assert.equal(b.bestBid, NO_BID);
      assert.equal(b.bestAsk, NO_ASK);
      assert.equal(b.size(), 0);
      assert.deepEqual(b.depth('BID', 99), []);
      assert.equal(b.crosses('BID', 99), false);
      assert.equal(b.crosses('ASK', 1), false);
      assert.equal(b.fillable('BID', 99, 10), 0);
      assert.equal(b.head('ASK', 50), null);
    },
  },
  {
    name: 'orders at one level queue first in, first out',
    run(f) {
      const a = f.rest('BID', 40, 5);
      const b = f.rest('BID', 40, 7);
      const c = f.rest('BID', 40, 1);
      assert.deepEqual(f.level('BID', 40), [a.id, b.id, c.id]);
      assert.equal(f.book.levelQuantity('BID', 40), 13);
      assert.equal(f.book.levelCount('BID', 40), 3);
    },
  },
  {
    name: 'levels list best first: bids high to low, asks low to high',
    run(f) {
      f.rest('BID', 30, 1);
      f.rest('BID', 45, 2);
      f.rest('BID', 38, 3);
      f.rest('ASK', 70, 4);
      f.rest('ASK', 55, 5);
      f.rest('ASK', 61, 6);
      assert.deepEqual(
        f.book.depth('BID', 99).map((l) => l.price),
        [45, 38, 30],
      );
      assert.deepEqual(
        f.book.depth('ASK', 2).map((l) => [l.price, l.quantity]),
        [
          [55, 5],
          [61, 6],
        ],
      );
      assert.deepEqual(
        [...f.book.orders()].map((o) => o.bookPrice),
        [45, 38, 30, 55, 61, 70],
      );
    },
  },
  {
    name: 'best prices follow appends and move to the next level when the best one empties',
    run(f) {
      const b1 = f.rest('BID', 40, 1);
      const b2 = f.rest('BID', 44, 1);
      const a1 = f.rest('ASK', 60, 1);
      const a2 = f.rest('ASK', 52, 1);
      assert.equal(f.book.bestBid, 44);
      assert.equal(f.book.bestAsk, 52);
      f.unlink(b2);
      f.unlink(a2);
      assert.equal(f.book.bestBid, 40);
      assert.equal(f.book.bestAsk, 60);
      f.unlink(b1);
      f.unlink(a1);
      assert.equal(f.book.bestBid, NO_BID);
      assert.equal(f.book.bestAsk, NO_ASK);
    },
  },
  {
    name: 'unlinking the head, a middle or the tail order keeps the rest of the queue in order',
    run(f) {
      const o = [1, 2, 3, 4, 5].map((q) => f.rest('ASK', 60, q));
      f.unlink(o[2]);
      assert.deepEqual(f.level('ASK', 60), [o[0].id, o[1].id, o[3].id, o[4].id]);
      f.unlink(o[0]);
      f.unlink(o[4]);
      assert.deepEqual(f.level('ASK', 60), [o[1].id, o[3].id]);
      assert.equal(f.book.levelQuantity('ASK', 60), 6);
      assert.equal(f.book.has(o[0]), false);
      assert.equal(f.book.next(o[0]), null);
      assert.equal(f.book.has(o[1]), true);
      const again = f.rest('ASK', 60, 9);
      assert.deepEqual(f.level('ASK', 60), [o[1].id, o[3].id, again.id]);
    },
  },
  {
    name: 'a partial fill or a size reduction keeps the order in place and lowers the level',
    run(f) {
      const a = f.rest('BID', 50, 10);
      const b = f.rest('BID', 50, 10);
      f.fill(a, 4);
      assert.deepEqual(f.level('BID', 50), [a.id, b.id]);
      assert.equal(f.book.levelQuantity('BID', 50), 16);
      f.book.shrink(b, 3);
      b.quantity -= 3;
      f.check();
      assert.equal(f.book.levelQuantity('BID', 50), 13);
      f.fill(a, 6);
      assert.deepEqual(f.level('BID', 50), [b.id]);
      assert.equal(f.book.levelQuantity('BID', 50), 7);
    },
  },
  {
    name: 'insertBySequence restores orders into sequence order whatever order they arrive in',
    run(f) {
      const seqs = [5, 2, 9, 1, 7];
      const orders = seqs.map((s) => f.order('BID', 33, s, s));
      for (const o of orders) {
        f.book.insertBySequence(o);
        f.check();
      }
      assert.deepEqual(f.level('BID', 33), ['o1', 'o2', 'o5', 'o7', 'o9']);
      assert.equal(f.book.levelQuantity('BID', 33), 24);
    },
  },
  {
    name: 'crosses and fillable look only at levels within the limit and stop at what is wanted',
    run(f) {
      f.rest('ASK', 60, 5);
      f.rest('ASK', 62, 7);
      f.rest('ASK', 70, 100);
      f.rest('BID', 40, 3);
      assert.equal(f.book.crosses('BID', 59), false);
      assert.equal(f.book.crosses('BID', 60), true);
      assert.equal(f.book.crosses('ASK', 41), false);
      assert.equal(f.book.crosses('ASK', 40), true);
      assert.equal(f.book.fillable('BID', 61, 100), 5);
      assert.equal(f.book.fillable('BID', 62, 100), 12);
      assert.equal(f.book.fillable('BID', 99, 20), 20);
      assert.equal(f.book.fillable('ASK', 1, 10), 3);
    },
  },
  {
    name: 'an order resting in one book is not in another, and a removed order is in none',
    run(f, makeBook) {
      const other = new BookFixture(makeBook());
      const here = f.rest('BID', 20, 1);
      const there = other.rest('BID', 20, 1);
      assert.equal(f.book.has(here), true);
      assert.equal(f.book.has(there), false);
      assert.equal(other.book.has(here), false);
      f.unlink(here);
      assert.equal(f.book.has(here), false);
    },
  },
  {
    name: 'thousands of random appends, fills and removals match a plain model of the book',
    run(f) {
      const rnd = mulberry32(7);
      const live: BookOrder[] = [];
      const model = new Map<string, string[]>();
      const key = (o: BookOrder): string => `${o.bookSide}:${o.bookPrice}`;
      for (let i = 0; i < 1_200; i++) {
        const r = rnd();
        if (r < 0.55 || live.length === 0) {
          const side: BookSide = rnd() < 0.5 ? 'BID' : 'ASK';
          const o = f.rest(side, 1 + Math.floor(rnd() * 99), 1 + Math.floor(rnd() * 20));
          live.push(o);
          const q = model.get(key(o)) ?? [];
          q.push(o.id);
          model.set(key(o), q);
          continue;
        }
        const k = Math.floor(rnd() * live.length);
        const o = live[k];
        const gone =
          r < 0.8 ? (f.unlink(o), true) : (f.fill(o, 1), o.filledQuantity === o.quantity);
        if (gone) {
          live[k] = live[live.length - 1];
          live.pop();
          const q = model.get(key(o))!;
          q.splice(q.indexOf(o.id), 1);
        }
      }
      for (const [k, ids] of model) {
        const [side, price] = k.split(':');
        assert.deepEqual(f.level(side as BookSide, Number(price)), ids, k);
      }
      assert.equal(f.book.size(), live.length);
    },
  },
];
