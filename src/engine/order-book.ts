/**
 * One market's book in YES terms: 99 array-indexed price levels per side, each a FIFO queue of
 * {@link BookOrder} nodes. Best prices are cached and only rescanned when a best level empties.
 */
import type { BookOrder } from './order.js';
import type { BookSide, DepthLevel } from './types.js';

/** One price level: FIFO queue plus the aggregate resting quantity. */
export class PriceLevel {
  head: BookOrder | null = null;
  tail: BookOrder | null = null;
  quantity = 0;
  count = 0;
  constructor(readonly price: number) {}
}

function makeLevels(): PriceLevel[] {
  const levels: PriceLevel[] = [];
  for (let p = 0; p <= 100; p++) levels.push(new PriceLevel(p));
  return levels;
}

/** No bid: bestBid is 0. No ask: bestAsk is 100. Both sentinels never cross a 1..99 limit. */
export const NO_BID = 0;
export const NO_ASK = 100;

export class OrderBook {
  readonly bids: PriceLevel[] = makeLevels();
  readonly asks: PriceLevel[] = makeLevels();
  bestBid = NO_BID;
  bestAsk = NO_ASK;

  levels(side: BookSide): PriceLevel[] {
    return side === 'BID' ? this.bids : this.asks;
  }

  /** Appends at the back of its level (new order or re-queue). */
  append(order: BookOrder): PriceLevel {
    const level = this.levels(order.bookSide)[order.bookPrice];
    order.next = null;
    order.prev = level.tail;
    if (level.tail === null) level.head = order;
    else level.tail.next = order;
    level.tail = order;
    level.quantity += order.remaining;
    level.count++;
    this.touch(order.bookSide, order.bookPrice);
    return level;
  }

  /** Inserts by sequence (restore). O(1) when restored in sequence order. */
  insertBySequence(order: BookOrder): PriceLevel {
    const level = this.levels(order.bookSide)[order.bookPrice];
    let after = level.tail;
    while (after !== null && after.sequence > order.sequence) after = after.prev;
    const before = after === null ? level.head : after.next;
    order.prev = after;
    order.next = before;
    if (after === null) level.head = order;
    else after.next = order;
    if (before === null) level.tail = order;
    else before.prev = order;
    level.quantity += order.remaining;
    level.count++;
    this.touch(order.bookSide, order.bookPrice);
    return level;
  }

  /** Removes the order (its whole remaining quantity) from its level. */
  unlink(order: BookOrder): PriceLevel {
    const level = this.levels(order.bookSide)[order.bookPrice];
    if (order.prev === null) level.head = order.next;
    else order.prev.next = order.next;
    if (order.next === null) level.tail = order.prev;
    else order.next.prev = order.prev;
    order.prev = null;
    order.next = null;
    level.quantity -= order.remaining;
    level.count--;
    if (level.count === 0) this.emptied(order.bookSide, order.bookPrice);
    return level;
  }

  /** Call after a level of `side` at `price` became empty. */
  emptied(side: BookSide, price: number): void {
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

  private touch(side: BookSide, price: number): void {
    if (side === 'BID') {
      if (price > this.bestBid) this.bestBid = price;
    } else if (price < this.bestAsk) this.bestAsk = price;
  }

  /** Would a taker on `takerSide` with YES limit `limit` trade now? */
  crosses(takerSide: BookSide, limit: number): boolean {
    return takerSide === 'BID' ? this.bestAsk <= limit : this.bestBid >= limit;
  }

  /** Quantity a taker could fill up to `limit`, capped at `wanted` (stops early). */
  fillable(takerSide: BookSide, limit: number, wanted: number): number {
    let total = 0;
    if (takerSide === 'BID') {
      for (let p = this.bestAsk; p <= limit && p < 100 && total < wanted; p++) {
        total += this.asks[p].quantity;
      }
    } else {
      for (let p = this.bestBid; p >= limit && p > 0 && total < wanted; p--) {
        total += this.bids[p].quantity;
      }
    }
    return total < wanted ? total : wanted;
  }

  /** Aggregated levels, best first. */
  depth(side: BookSide, maxLevels: number): DepthLevel[] {
    const out: DepthLevel[] = [];
    if (side === 'BID') {
      for (let p = this.bestBid; p > 0 && out.length < maxLevels; p--) {
        const q = this.bids[p].quantity;
        if (q > 0) out.push({ price: p, quantity: q });
      }
    } else {
      for (let p = this.bestAsk; p < 100 && out.length < maxLevels; p++) {
        const q = this.asks[p].quantity;
        if (q > 0) out.push({ price: p, quantity: q });
      }
    }
    return out;
  }

  /** Every resting order, bids best first then asks best first, FIFO within a level. */
  *orders(): Generator<BookOrder> {
    for (let p = 99; p > 0; p--) {
      for (let o = this.bids[p].head; o !== null; o = o.next) yield o;
    }
    for (let p = 1; p < 100; p++) {
      for (let o = this.asks[p].head; o !== null; o = o.next) yield o;
    }
  }
}
