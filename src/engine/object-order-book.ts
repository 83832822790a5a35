/**
 * The first book: array-indexed {@link PriceLevel} objects per side, each a FIFO queue linked
 * through the orders' own `prev`/`next` fields. Best prices are cached and only rescanned when a
 * best level empties. Kept as the contract suite's second implementation (the reference the
 * handle book is checked against).
 */
import type { BookOrder } from './order.js';
import { depthFrom, fillableFrom, NO_ASK, NO_BID, type OrderBook } from './order-book.js';
import type { BookSide, DepthLevel } from './types.js';

/** One price level: FIFO queue plus the aggregate resting quantity. */
class PriceLevel {
  head: BookOrder | null = null;
  tail: BookOrder | null = null;
  quantity = 0;
  count = 0;
}

function makeLevels(): PriceLevel[] {
  const levels: PriceLevel[] = [];
  for (let p = 0; p <= 100; p++) levels.push(new PriceLevel());
  return levels;
}

export class ObjectOrderBook implements OrderBook {
  private readonly bids: PriceLevel[] = makeLevels();
  private readonly asks: PriceLevel[] = makeLevels();
  private count = 0;
  bestBid = NO_BID;
  bestAsk = NO_ASK;

  private level(side: BookSide, price: number): PriceLevel {
    return (side === 'BID' ? this.bids : this.asks)[price];
  }

  append(order: BookOrder): void {
    const level = this.level(order.bookSide, order.bookPrice);
    order.next = null;
    order.prev = level.tail;
    if (level.tail === null) level.head = order;
    else level.tail.next = order;
    level.tail = order;
    this.added(level, order);
  }

  /** O(1) when restored in sequence order. */
  insertBySequence(order: BookOrder): void {
    const level = this.level(order.bookSide, order.bookPrice);
    let after = level.tail;
    while (after !== null && after.sequence > order.sequence) after = after.prev;
    const before = after === null ? level.head : after.next;
    order.prev = after;
    order.next = before;
    if (after === null) level.head = order;
    else after.next = order;
    if (before === null) level.tail = order;
    else before.prev = order;
    this.added(level, order);
  }

  private added(level: PriceLevel, order: BookOrder): void {
    level.quantity += order.remaining;
    level.count++;
    this.count++;
    if (order.bookSide === 'BID') {
      if (order.bookPrice > this.bestBid) this.bestBid = order.bookPrice;
    } else if (order.bookPrice < this.bestAsk) this.bestAsk = order.bookPrice;
  }

  unlink(order: BookOrder): void {
    const level = this.level(order.bookSide, order.bookPrice);
    if (order.prev === null) level.head = order.next;
    else order.prev.next = order.next;
    if (order.next === null) level.tail = order.prev;
    else order.next.prev = order.prev;
    order.prev = null;
    order.next = null;
    level.quantity -= order.remaining;
    level.count--;
    this.count--;
    if (level.count === 0) this.emptied(order.bookSide, order.bookPrice);
  }

  private emptied(side: BookSide, price: number): void {
    if (side === 'BID') {
      if (price === this.bestBid) {
        let p = price - 1;
        while (p > 0 && this.bids[p].count === 0) p--;
        this.bestBid = p;
      }
    } else if (price === this.bestAsk) {
      let p = price + 1;
      while (p < 100 && this.asks[p].count === 0) p++;
      this.bestAsk = p;
    }
  }

  shrink(order: BookOrder, qty: number): void {
    this.level(order.bookSide, order.bookPrice).quantity -= qty;
  }

  head(side: BookSide, price: number): BookOrder | null {
    return this.level(side, price).head;
  }

  next(order: BookOrder): BookOrder | null {
    return order.next;
  }

  levelQuantity(side: BookSide, price: number): number {
    return this.level(side, price).quantity;
  }

  levelCount(side: BookSide, price: number): number {
    return this.level(side, price).count;
  }

  crosses(takerSide: BookSide, limit: number): boolean {
    return takerSide === 'BID' ? this.bestAsk <= limit : this.bestBid >= limit;
  }

  fillable(takerSide: BookSide, limit: number, wanted: number): number {
    return fillableFrom(this, takerSide, limit, wanted);
  }

  depth(side: BookSide, maxLevels: number): DepthLevel[] {
    return depthFrom(this, side, maxLevels);
  }

  *orders(): Generator<BookOrder> {
    for (let p = 99; p > 0; p--) {
      for (let o = this.bids[p].head; o !== null; o = o.next) yield o;
    }
    for (let p = 1; p < 100; p++) {
      for (let o = this.asks[p].head; o !== null; o = o.next) yield o;
    }
  }

  size(): number {
    return this.count;
  }

  has(order: BookOrder): boolean {
    if (order.bookPrice < 1 || order.bookPrice > 99) return false;
    for (let o = this.level(order.bookSide, order.bookPrice).head; o !== null; o = o.next) {
      if (o === order) return true;
    }
    return false;
  }
}
