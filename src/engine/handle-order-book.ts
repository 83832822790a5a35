/**
 * The engine's book: resting orders are integer handles into typed-array storage, and each price
 * level is an intrusive FIFO doubly linked list of handles, with head, tail, count and quantity
 * in arrays indexed by side and price. Nothing is allocated per order once the storage has grown
 * to the book's high-water mark (freed handles are reused), and nothing here hashes a string.
 * Best prices are cached and only rescanned when a best level empties.
 */
import type { BookOrder } from './order.js';
import { depthFrom, fillableFrom, NO_ASK, NO_BID, type OrderBook } from './order-book.js';
import type { BookSide, DepthLevel } from './types.js';

const NIL = -1;
/** Level index: bids at 0..100, asks at 101..201 (price 0 and 100 unused). */
const ASK_BASE = 101;
const INITIAL_CAPACITY = 16;

const levelIndex = (side: BookSide, price: number): number =>
  side === 'BID' ? price : ASK_BASE + price;

export class HandleOrderBook implements OrderBook {
  bestBid = NO_BID;
  bestAsk = NO_ASK;
  private readonly levelHead = new Int32Array(2 * ASK_BASE).fill(NIL);
  private readonly levelTail = new Int32Array(2 * ASK_BASE).fill(NIL);
  private readonly levelCnt = new Int32Array(2 * ASK_BASE);
  /** Float64: a level's total may pass 2^31 contracts. */
  private readonly levelQty = new Float64Array(2 * ASK_BASE);
  private nextOf = new Int32Array(INITIAL_CAPACITY).fill(NIL);
  private prevOf = new Int32Array(INITIAL_CAPACITY).fill(NIL);
  /** handle -> order (null when the handle is free). */
  private nodes: (BookOrder | null)[] = new Array<BookOrder | null>(INITIAL_CAPACITY).fill(null);
  /** Free handles, a stack. */
  private free = new Int32Array(INITIAL_CAPACITY);
  private freeCount = 0;
  /** Handles ever used (the storage's high-water mark). */
  private used = 0;
  private count = 0;

  private allocate(order: BookOrder): number {
    let h: number;
    if (this.freeCount > 0) h = this.free[--this.freeCount];
    else {
      if (this.used === this.nodes.length) this.grow();
      h = this.used++;
    }
    this.nodes[h] = order;
    order.handle = h;
    return h;
  }

  private grow(): void {
    const cap = this.nodes.length * 2;
    const next = new Int32Array(cap).fill(NIL);
    next.set(this.nextOf);
    const prev = new Int32Array(cap).fill(NIL);
    prev.set(this.prevOf);
    const free = new Int32Array(cap);
    free.set(this.free);
    this.nextOf = next;
    this.prevOf = prev;
    this.free = free;
    for (let i = this.nodes.length; i < cap; i++) this.nodes.push(null);
  }

  append(order: BookOrder): void {
    const h = this.allocate(order);
    const li = levelIndex(order.bookSide, order.bookPrice);
    const tail = this.levelTail[li];
    this.prevOf[h] = tail;
    this.nextOf[h] = NIL;
    if (tail === NIL) this.levelHead[li] = h;
    else this.nextOf[tail] = h;
    this.levelTail[li] = h;
    this.added(li, order);
  }

  /** O(1) when restored in sequence order. */
  insertBySequence(order: BookOrder): void {
    const h = this.allocate(order);
    const li = levelIndex(order.bookSide, order.bookPrice);
    let after = this.levelTail[li];
    while (after !== NIL && this.nodes[after]!.sequence > order.sequence)
      after = this.prevOf[after];
    const before = after === NIL ? this.levelHead[li] : this.nextOf[after];
    this.prevOf[h] = after;
    this.nextOf[h] = before;
    if (after === NIL) this.levelHead[li] = h;
    else this.nextOf[after] = h;
    if (before === NIL) this.levelTail[li] = h;
    else this.prevOf[before] = h;
    this.added(li, order);
  }

  private added(li: number, order: BookOrder): void {
    this.levelQty[li] += order.quantity - order.filledQuantity;
    this.levelCnt[li]++;
    this.count++;
    const p = order.bookPrice;
    if (order.bookSide === 'BID') {
      if (p > this.bestBid) this.bestBid = p;
    } else if (p < this.bestAsk) this.bestAsk = p;
  }

  unlink(order: BookOrder): void {
    const h = order.handle;
    const li = levelIndex(order.bookSide, order.bookPrice);
    const prev = this.prevOf[h];
    const next = this.nextOf[h];
    if (prev === NIL) this.levelHead[li] = next;
    else this.nextOf[prev] = next;
    if (next === NIL) this.levelTail[li] = prev;
    else this.prevOf[next] = prev;
    this.nodes[h] = null;
    this.free[this.freeCount++] = h;
    order.handle = NIL;
    this.levelQty[li] -= order.quantity - order.filledQuantity;
    this.count--;
    if (--this.levelCnt[li] === 0) this.emptied(order.bookSide, order.bookPrice);
  }

  private emptied(side: BookSide, price: number): void {
    const cnt = this.levelCnt;
    if (side === 'BID') {
      if (price === this.bestBid) {
        let p = price - 1;
        while (p > 0 && cnt[p] === 0) p--;
        this.bestBid = p;
      }
    } else if (price === this.bestAsk) {
      let p = price + 1;
      while (p < 100 && cnt[ASK_BASE + p] === 0) p++;
      this.bestAsk = p;
    }
  }

  shrink(order: BookOrder, qty: number): void {
    this.levelQty[levelIndex(order.bookSide, order.bookPrice)] -= qty;
  }

  head(side: BookSide, price: number): BookOrder | null {
    const h = this.levelHead[levelIndex(side, price)];
    return h === NIL ? null : this.nodes[h];
  }

  next(order: BookOrder): BookOrder | null {
    if (order.handle < 0) return null;
    const h = this.nextOf[order.handle];
    return h === NIL ? null : this.nodes[h];
  }

  levelQuantity(side: BookSide, price: number): number {
    return this.levelQty[levelIndex(side, price)];
  }

  levelCount(side: BookSide, price: number): number {
    return this.levelCnt[levelIndex(side, price)];
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
      for (let h = this.levelHead[p]; h !== NIL; h = this.nextOf[h]) yield this.nodes[h]!;
    }
    for (let p = 1; p < 100; p++) {
      for (let h = this.levelHead[ASK_BASE + p]; h !== NIL; h = this.nextOf[h]) {
        yield this.nodes[h]!;
      }
    }
  }

  size(): number {
    return this.count;
  }

  has(order: BookOrder): boolean {
    const h = order.handle;
    return h >= 0 && h < this.used && this.nodes[h] === order;
  }
}
