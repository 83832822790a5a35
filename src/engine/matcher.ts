/**
 * Matching: the one place where an incoming order meets resting makers (self-trade prevention
 * decides there), and the book-side effects every command shares: fills, resting, lifting and
 * ending orders, each with its events. Commands (order entry, cancels, admin) call it; it never
 * checks funds or shapes, which the commands have done.
 */
import type { EngineLedger } from './engine-ledger.js';
import type { MarketState } from './engine-state.js';
import { balanceChanged, orderCancelled, orderUpdated, positionChanged } from './event-builders.js';
import type { EngineEvent } from './events.js';
import { applyFill } from './ledger.js';
import type { BookOrder } from './order.js';
import type { OrderRegistry } from './order-registry.js';
import { selfTradeAction } from './self-trade.js';
import type { BookSide, CancelReason, ExpireReason, IdGenerator } from './types.js';

export class Matcher {
  constructor(
    private readonly ids: IdGenerator,
    private readonly ledger: EngineLedger,
    private readonly orders: OrderRegistry,
  ) {}

  /**
   * Trades `taker` (not resting) against the opposite side while prices cross its limit, best
   * price first, FIFO within a level, each at the resting order's price; at most `maxFill`
   * contracts (a forced partial fill). Returns true when self-trade prevention ended the taker:
   * the caller then cancels its remainder (reason SELF_TRADE_PREVENTION) instead of resting it.
   */
  match(
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
          this.orders.retire(maker);
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
      this.ledger.markDirty(taker.owner);
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
    this.ledger.markDirty(makerPs);
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
  rest(market: MarketState, order: BookOrder, events: EngineEvent[]): void {
    market.book.append(order);
    const ps = order.owner;
    ps.linkOrder(order);
    ps.addResting(order.bookSide, order.bookPrice, order.remaining);
    this.orders.index(order);
    this.ledger.markDirty(ps);
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
  lift(market: MarketState, order: BookOrder, events: EngineEvent[] | null): void {
    market.book.unlink(order);
    const ps = order.owner;
    ps.unlinkOrder(order);
    ps.addResting(order.bookSide, order.bookPrice, -order.remaining);
    this.ledger.markDirty(ps);
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

  cancelResting(
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
    this.orders.retire(order);
    events.push(orderCancelled(order, reason, dropped), {
      type: 'book.level',
      marketId: market.id,
      side: order.bookSide,
      price: order.bookPrice,
      quantity: market.book.levelQuantity(order.bookSide, order.bookPrice),
    });
  }

  /**
   * Cancels a taker's remainder without it ever resting (a forced partial fill): it holds no
   * resting bookkeeping, so only its owner's reserve is recomputed.
   */
  cancelTaker(order: BookOrder, reason: CancelReason, events: EngineEvent[], now: number): void {
    const dropped = order.remaining;
    order.status = 'CANCELLED';
    order.cancelReason = reason;
    order.updatedAt = now;
    this.ledger.markDirty(order.owner);
    this.orders.retire(order);
    events.push(orderCancelled(order, reason, dropped));
  }

  /** Ends a taker's life without resting it (IOC / MARKET remainder, unfillable FOK). */
  expire(order: BookOrder, events: EngineEvent[], now: number, reason: ExpireReason): void {
    const dropped = order.remaining;
    order.status = 'EXPIRED';
    order.cancelReason = reason;
    order.updatedAt = now;
    this.orders.retire(order);
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
}
