/**
 * State and internal mechanics shared by the engine layers: matching, fills, resting, removal and
 * reservation bookkeeping. Public commands live in the subclasses; see {@link MatchingEngine}.
 */
import { orderUpdated, positionChanged, balanceChanged } from './event-builders.js';
import type { EngineEvent } from './events.js';
import { HoldBook } from './holds.js';
import { AccountState, applyFill, PositionState, refreshReserve } from './ledger.js';
import { BookOrder } from './order.js';
import { HandleOrderBook } from './handle-order-book.js';
import type { OrderBook } from './order-book.js';
import { selfTradeAction } from './self-trade.js';
import type {
  BookSide,
  CancelReason,
  Clock,
  ExpireReason,
  Failure,
  IdGenerator,
  MarketStatus,
  Outcome,
  ResultCode,
} from './types.js';

/** Upper bound of the recycled-order free list (bounds memory after a mass cancel). */
const MAX_SPARE_ORDERS = 65_536;

/** Construction options of the engine. */
export interface EngineOptions {
  clock: Clock;
  ids: IdGenerator;
  /**
   * How many final (filled/cancelled/expired) orders stay readable through getOrder and answer
   * ORDER_NOT_OPEN rather than UNKNOWN_ORDER; the oldest are forgotten first. Default 10,000.
   * The persistence layer is the long-term record.
   */
  closedOrderRetention?: number;
}

export class MarketState {
  readonly book: OrderBook = new HandleOrderBook();
  outcome: Outcome | null = null;
  /** 0 = no trade yet. */
  lastPrice = 0;
  volume = 0;
  orphanYes = 0;
  orphanNo = 0;
  /**
   * Position states by account id: every account that touched this market. Looked up through
   * the market rather than the account because the market is hot in cache and the account's
   * own table would cost two more cache misses per order.
   */
  readonly positions = new Map<string, PositionState>();
  constructor(
    readonly id: string,
    public status: MarketStatus,
  ) {}
}

export function isPrice(p: unknown): p is number {
  return typeof p === 'number' && Number.isSafeInteger(p) && p >= 1 && p <= 99;
}

export function isAmount(a: unknown): a is number {
  return typeof a === 'number' && Number.isSafeInteger(a) && a > 0;
}

export abstract class EngineCore {
  protected readonly clock: Clock;
  protected readonly ids: IdGenerator;
  protected readonly markets = new Map<string, MarketState>();
  protected readonly accounts = new Map<string, AccountState>();
  /**
   * Open orders by id: the only string-keyed lookup an order meets on its way, and only if it
   * rests (cancel and amend name orders by id). An order that trades or expires on arrival never
   * enters it; final orders are found through {@link findOrder}.
   */
  protected readonly orders = new Map<string, BookOrder>();
  /**
   * The retention ring's orders by id, built the first time someone asks for a final order and
   * kept up to date from then on, so an engine whose callers never ask pays nothing per order.
   */
  private closedIndex: Map<string, BookOrder> | null = null;
  /** Quote holds (see holds.ts); commands in engine-rfq.ts, dropped by an account reset. */
  protected readonly holds = new HoldBook();
  protected readonly closedRetention: number;
  private readonly closedRing: BookOrder[] = [];
  private readonly spare: BookOrder[] = [];
  private closedNext = 0;
  protected sequence = 0;
  /** Bumped per command so positions are marked stale at most once per command. */
  protected epoch = 0;
  protected readonly dirty: PositionState[] = [];
  protected dirtyCount = 0;
  /** External money flows, for the conservation invariant. */
  protected deposited = 0;
  protected withdrawn = 0;
  protected adjusted = 0;

  constructor(options: EngineOptions) {
    this.clock = options.clock;
    this.ids = options.ids;
    this.closedRetention = options.closedOrderRetention ?? 10_000;
  }

  protected fail(code: ResultCode, message: string): Failure {
    return { ok: false, code, message };
  }

  /** INSUFFICIENT_FUNDS naming what the order needs of the available balance. */
  protected short(message: string, required: number, account: AccountState): Failure {
    const available = account.balance - account.reserved;
    return { ok: false, code: 'INSUFFICIENT_FUNDS', message, funds: { required, available } };
  }

  /** Gets or creates the (account, market) position state. */
  protected positionOf(account: AccountState, market: MarketState): PositionState {
    let ps = market.positions.get(account.id);
    if (ps === undefined) {
      ps = new PositionState(account, market.id);
      account.positions.push(ps);
      market.positions.set(account.id, ps);
    }
    return ps;
  }

  protected markDirty(ps: PositionState): void {
    if (ps.dirtyEpoch !== this.epoch) {
      ps.dirtyEpoch = this.epoch;
      this.dirty[this.dirtyCount++] = ps;
    }
  }

  /** Recomputes the reserves touched by this command; ends the command's epoch. */
  protected flushDirty(): void {
    const d = this.dirty;
    // A count instead of `length = 0`: truncating frees the backing store, and the next command
    // would allocate a new one.
    for (let i = 0; i < this.dirtyCount; i++) refreshReserve(d[i]);
    this.dirtyCount = 0;
    this.epoch++;
  }

  /**
   * Trades `taker` (not resting) against the opposite side while prices cross its limit, best
   * price first, FIFO within a level, each at the resting order's price; at most `maxFill`
   * contracts (a forced partial fill). Returns true when self-trade prevention ended the taker:
   * the caller then cancels its remainder (reason SELF_TRADE_PREVENTION) instead of resting it.
   */
  protected match(
    market: MarketState,
    taker: BookOrder,
    events: EngineEvent[],
    now: number,
    maxFill = Infinity,
  ): boolean {
    const book = market.book;
    const takerIsBid = taker.bookSide === 'BID';
    const makerSide: BookSide = takerIsBid ? 'ASK' : 'BID';
    const limit = taker.bookPrice;
    let remaining = taker.remaining < maxFill ? taker.remaining : maxFill;
    let stopped = false;
    while (remaining > 0 && !stopped) {
      const price = takerIsBid ? book.bestAsk : book.bestBid;
      if (takerIsBid ? price > limit : price < limit) break;
      let maker = book.head(makerSide, price);
      while (maker !== null && remaining > 0) {
        // The one place where the incoming order meets a resting maker.
        const stp = selfTradeAction(taker.accountId, maker.accountId, taker.selfTradePrevention);
        if (!stp.trade) {
          // Taken before a cancel unlinks the maker from its level.
          const after = book.next(maker);
          if (stp.cancelMaker)
            this.cancelResting(market, maker, 'SELF_TRADE_PREVENTION', events, now);
          maker = after;
          if (stp.cancelTaker) {
            stopped = true;
            break;
          }
          continue;
        }
        const mr = maker.remaining;
        const q = remaining < mr ? remaining : mr;
        this.fill(market, price, maker, taker, q, events, now);
        remaining -= q;
        const next = book.next(maker);
        if (q === mr) {
          book.unlink(maker);
          maker.owner.unlinkOrder(maker);
          this.retire(maker);
        }
        maker = next;
      }
      events.push({
        type: 'book.level',
        marketId: market.id,
        side: makerSide,
        price,
        quantity: book.levelQuantity(makerSide, price),
      });
    }
    if (taker.filledQuantity > 0) {
      taker.status = taker.remaining === 0 ? 'FILLED' : 'PARTIALLY_FILLED';
      taker.updatedAt = now;
      this.markDirty(taker.owner);
      events.push(orderUpdated(taker));
    }
    return stopped;
  }

  private fill(
    market: MarketState,
    price: number,
    maker: BookOrder,
    taker: BookOrder,
    q: number,
    events: EngineEvent[],
    now: number,
  ): void {
    market.book.shrink(maker, q);
    const tradeId = this.ids.next('fil_');
    maker.filledQuantity += q;
    maker.fillCost += maker.ownPrice(price) * q;
    maker.status = maker.filledQuantity === maker.quantity ? 'FILLED' : 'PARTIALLY_FILLED';
    maker.updatedAt = now;
    const makerPs = maker.owner;
    makerPs.addResting(maker.bookSide, price, -q);
    taker.filledQuantity += q;
    taker.fillCost += taker.ownPrice(price) * q;
    const takerPs = taker.owner;
    market.lastPrice = price;
    market.volume += q;
    this.markDirty(makerPs);
    events.push({
      type: 'trade',
      source: 'BOOK',
      id: tradeId,
      marketId: market.id,
      price,
      quantity: q,
      makerOrderId: maker.id,
      takerOrderId: taker.id,
      makerAccountId: maker.accountId,
      takerAccountId: taker.accountId,
      makerSide: maker.side,
      takerSide: taker.side,
      takerBookSide: taker.bookSide,
      timestamp: now,
    });
    // Each side's events are built right after its own booking, so that a self-trade (same
    // account on both sides) still shows consistent intermediate balances and positions.
    const makerCash = applyFill(makerPs, maker.bookSide, price, q);
    events.push(
      orderUpdated(maker),
      positionChanged(makerPs),
      balanceChanged(makerPs.account, makerCash, 'TRADE', tradeId, now),
    );
    const takerCash = applyFill(takerPs, taker.bookSide, price, q);
    events.push(
      positionChanged(takerPs),
      balanceChanged(takerPs.account, takerCash, 'TRADE', tradeId, now),
    );
  }

  /** Puts a GTC remainder on the book. */
  protected rest(market: MarketState, order: BookOrder, events: EngineEvent[]): void {
    market.book.append(order);
    const ps = order.owner;
    ps.linkOrder(order);
    ps.addResting(order.bookSide, order.bookPrice, order.remaining);
    if (!order.indexed) {
      order.indexed = true;
      this.orders.set(order.id, order);
    }
    this.markDirty(ps);
    events.push(
      {
        type: 'order.rested',
        orderId: order.id,
        marketId: market.id,
        bookSide: order.bookSide,
        bookPrice: order.bookPrice,
        remainingQuantity: order.remaining,
        sequence: order.sequence,
      },
      {
        type: 'book.level',
        marketId: market.id,
        side: order.bookSide,
        price: order.bookPrice,
        quantity: market.book.levelQuantity(order.bookSide, order.bookPrice),
      },
    );
  }

  /** Takes a resting order off the book and its owner's bookkeeping (it stays in `orders`). */
  protected lift(market: MarketState, order: BookOrder, events: EngineEvent[] | null): void {
    market.book.unlink(order);
    const ps = order.owner;
    ps.unlinkOrder(order);
    ps.addResting(order.bookSide, order.bookPrice, -order.remaining);
    this.markDirty(ps);
    if (events !== null) {
      events.push({
        type: 'book.level',
        marketId: market.id,
        side: order.bookSide,
        price: order.bookPrice,
        quantity: market.book.levelQuantity(order.bookSide, order.bookPrice),
      });
    }
  }

  protected cancelResting(
    market: MarketState,
    order: BookOrder,
    reason: CancelReason,
    events: EngineEvent[],
    now: number,
  ): void {
    const dropped = order.remaining;
    this.lift(market, order, null);
    order.status = 'CANCELLED';
    order.cancelReason = reason;
    order.updatedAt = now;
    this.retire(order);
    events.push(
      {
        type: 'order.cancelled',
        orderId: order.id,
        accountId: order.accountId,
        reason,
        filledQuantity: order.filledQuantity,
        cancelledQuantity: dropped,
        updatedAt: now,
      },
      {
        type: 'book.level',
        marketId: market.id,
        side: order.bookSide,
        price: order.bookPrice,
        quantity: market.book.levelQuantity(order.bookSide, order.bookPrice),
      },
    );
  }

  /**
   * Cancels a taker's remainder without it ever resting (a forced partial fill): it holds no
   * resting bookkeeping, so only its owner's reserve is recomputed.
   */
  protected cancelTaker(
    order: BookOrder,
    reason: CancelReason,
    events: EngineEvent[],
    now: number,
  ): void {
    const dropped = order.remaining;
    order.status = 'CANCELLED';
    order.cancelReason = reason;
    order.updatedAt = now;
    this.markDirty(order.owner);
    this.retire(order);
    events.push({
      type: 'order.cancelled',
      orderId: order.id,
      accountId: order.accountId,
      reason,
      filledQuantity: order.filledQuantity,
      cancelledQuantity: dropped,
      updatedAt: now,
    });
  }

  /** Ends a taker's life without resting it (IOC / MARKET remainder, unfillable FOK). */
  protected expire(
    order: BookOrder,
    events: EngineEvent[],
    now: number,
    reason: ExpireReason,
  ): void {
    const dropped = order.remaining;
    order.status = 'EXPIRED';
    order.cancelReason = reason;
    order.updatedAt = now;
    this.retire(order);
    events.push({
      type: 'order.expired',
      orderId: order.id,
      accountId: order.accountId,
      reason,
      filledQuantity: order.filledQuantity,
      expiredQuantity: dropped,
      updatedAt: now,
    });
  }

  /**
   * Called once an order is final: keeps it readable (getOrder, ORDER_NOT_OPEN) within a bounded
   * FIFO. A ring of ids decides what to forget; evicting through the Map's own iteration order
   * would rescan the holes left by deletions.
   */
  protected retire(order: BookOrder): void {
    if (order.indexed) {
      order.indexed = false;
      this.orders.delete(order.id);
    }
    const cap = this.closedRetention;
    if (cap <= 0) {
      this.recycle(order);
      return;
    }
    const ring = this.closedRing;
    const slot = this.closedNext;
    const index = this.closedIndex;
    if (ring.length < cap) ring.push(order);
    else {
      const evicted = ring[slot];
      if (index !== null && index.get(evicted.id) === evicted) index.delete(evicted.id);
      this.recycle(evicted);
      ring[slot] = order;
    }
    this.closedNext = slot + 1 === cap ? 0 : slot + 1;
    if (index !== null) index.set(order.id, order);
  }

  /** An open order, or a final one still within the retention window. */
  protected findOrder(id: string): BookOrder | undefined {
    const open = this.orders.get(id);
    if (open !== undefined) return open;
    let index = this.closedIndex;
    if (index === null) {
      index = new Map<string, BookOrder>();
      for (const o of this.closedRing) index.set(o.id, o);
      this.closedIndex = index;
    }
    return index.get(id);
  }

  /**
   * Keeps a forgotten order object for reuse: resting orders live long enough to be promoted to
   * the old generation, so allocating a fresh one per order is what the garbage collector spent
   * most of its time on. The instance stays intact until the next {@link newOrder}, and a
   * command creates its order before anything can be retired, so a just-retired order can
   * still be read (snapshotted) until the command returns.
   */
  protected recycle(order: BookOrder): void {
    order.indexed = false;
    if (this.spare.length < MAX_SPARE_ORDERS) this.spare.push(order);
  }

  /** A fresh OPEN order, reusing a recycled instance when there is one. */
  protected newOrder(): BookOrder {
    return this.spare.pop() ?? new BookOrder();
  }
}
