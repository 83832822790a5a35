/**
 * The order book of one market, in YES terms: 99 price levels per side (cents 1..99), each a FIFO
 * queue of resting {@link BookOrder}s, plus the aggregate resting quantity per level and the best
 * prices. The engine owns the orders (their fills, owners and ids); a book only orders them in
 * time and price. Every implementation passes `order-book.contract.ts` (as exchange-core runs
 * OrderBookBaseTest against each of its books).
 */
import type { BookOrder } from './order.js';
import type { BookSide, DepthLevel } from './types.js';

/** No bid: bestBid is 0. No ask: bestAsk is 100. Both sentinels never cross a 1..99 limit. */
export const NO_BID = 0;
export const NO_ASK = 100;

export interface OrderBook {
  /** Highest price with a resting bid, or {@link NO_BID}. */
  readonly bestBid: number;
  /** Lowest price with a resting ask, or {@link NO_ASK}. */
  readonly bestAsk: number;
  /** Rests the order at the back of its level (`bookSide`, `bookPrice`) with its `remaining`. */
  append(order: BookOrder): void;
  /** Rests the order among its level's orders by `sequence` (restore). */
  insertBySequence(order: BookOrder): void;
  /** Takes the order (its whole current `remaining`) off the book. */
  unlink(order: BookOrder): void;
  /**
   * The resting order's remaining quantity is about to fall by `qty` (a fill, or an amend down):
   * it keeps its place; only the level total changes.
   */
  shrink(order: BookOrder, qty: number): void;
  /** Oldest order of a level, or null when the level is empty. */
  head(side: BookSide, price: number): BookOrder | null;
  /** The order after `order` in its level, or null (also once `order` has left the book). */
  next(order: BookOrder): BookOrder | null;
  /** Resting quantity of a level (0 when empty). */
  levelQuantity(side: BookSide, price: number): number;
  /** Resting orders of a level. */
  levelCount(side: BookSide, price: number): number;
  /** Would a taker on `takerSide` with YES limit `limit` trade now? */
  crosses(takerSide: BookSide, limit: number): boolean;
  /** Quantity a taker could fill up to `limit`, capped at `wanted` (stops early). */
  fillable(takerSide: BookSide, limit: number, wanted: number): number;
  /** Aggregated non-empty levels, best first. */
  depth(side: BookSide, maxLevels: number): DepthLevel[];
  /** Every resting order, bids best first then asks best first, FIFO within a level. */
  orders(): Iterable<BookOrder>;
  /** Number of resting orders. */
  size(): number;
  /** Is this very order resting in this book (its handle or links point back to it)? */
  has(order: BookOrder): boolean;
}

/** Quantity a taker could fill up to `limit`, from per-level quantities (shared by the books). */
export function fillableFrom(
  book: OrderBook,
  takerSide: BookSide,
  limit: number,
  wanted: number,
): number {
  let total = 0;
  if (takerSide === 'BID') {
    for (let p = book.bestAsk; p <= limit && p < 100 && total < wanted; p++) {
      total += book.levelQuantity('ASK', p);
    }
  } else {
    for (let p = book.bestBid; p >= limit && p > 0 && total < wanted; p--) {
      total += book.levelQuantity('BID', p);
    }
  }
  return total < wanted ? total : wanted;
}

/** Aggregated non-empty levels of one side, best first (shared by the books). */
export function depthFrom(book: OrderBook, side: BookSide, maxLevels: number): DepthLevel[] {
  const out: DepthLevel[] = [];
  if (side === 'BID') {
    for (let p = book.bestBid; p > 0 && out.length < maxLevels; p--) {
      const q = book.levelQuantity('BID', p);
      if (q > 0) out.push({ price: p, quantity: q });
    }
  } else {
    for (let p = book.bestAsk; p < 100 && out.length < maxLevels; p++) {
      const q = book.levelQuantity('ASK', p);
      if (q > 0) out.push({ price: p, quantity: q });
    }
  }
  return out;
}
