/**
 * Order entry: placing and amending orders. Each checks everything first (shape, market,
 * account, post-only, funds) so that a failure changes nothing, then hands the order to the
 * {@link Matcher}, which trades, rests or ends it.
 */
import type { EngineLedger } from './engine-ledger.js';
import { fail, isPrice, isQuantity, type MarketState } from './engine-state.js';
import type { EngineEvent } from './events.js';
import { AccountState, computeReserve, PositionState } from './ledger.js';
import type { Matcher } from './matcher.js';
import { bookPriceOf, bookSideOf, type BookOrder } from './order.js';
import type { OrderRegistry } from './order-registry.js';
import { orderProblem } from './order-shape.js';
import {
  DEFAULT_SELF_TRADE_PREVENTION,
  ownRestingLevels,
  selfTradeFillable,
  type SelfTradePrevention,
} from './self-trade.js';
import { newWalkResult, walkBook } from './walk.js';
import {
  MAX_ORDER_QUANTITY,
  type AmendOrderRequest,
  type BookSide,
  type Clock,
  type IdGenerator,
  type OrderSnapshot,
  type PlaceOrderRequest,
  type Result,
  type TimeInForce,
} from './types.js';

export class OrderEntry {
  private readonly scratch = newWalkResult();
  private readonly blank = new PositionState(new AccountState(''), '');

  constructor(
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly markets: Map<string, MarketState>,
    private readonly ledger: EngineLedger,
    private readonly orders: OrderRegistry,
    private readonly matcher: Matcher,
  ) {}

  /**
   * Places an order. Checks, in order: shape (INVALID_ORDER), UNKNOWN_MARKET, MARKET_NOT_OPEN,
   * UNKNOWN_ACCOUNT, POST_ONLY_WOULD_CROSS, INSUFFICIENT_FUNDS (LIMIT: the reserve increase if the
   * whole order rested at its limit must fit the available balance; MARKET: the simulated walk
   * must leave balance >= reserved). A failed check changes nothing. Then FOK is checked against
   * the book (unfillable: accepted and EXPIRED with no fill), the order matches, and the
   * remainder rests (GTC) or expires (IOC, MARKET).
   */
  placeOrder(req: PlaceOrderRequest): Result<{ order: OrderSnapshot }> {
    const problem = orderProblem(req);
    if (problem !== null) return fail('INVALID_ORDER', problem);
    const market = this.markets.get(req.marketId);
    if (market === undefined) return fail('UNKNOWN_MARKET', req.marketId);
    if (market.status !== 'OPEN') return fail('MARKET_NOT_OPEN', market.status);
    const account = this.ledger.accounts.get(req.accountId);
    if (account === undefined) return fail('UNKNOWN_ACCOUNT', req.accountId);
    const existing = this.ledger.position(account, market);
    const isLimit = req.type === 'LIMIT';
    const bookSide = bookSideOf(req.action, req.side);
    const limit = isLimit ? bookPriceOf(req.side, req.price!) : bookSide === 'BID' ? 99 : 1;
    const postOnly = req.postOnly === true;
    const book = market.book;
    if (postOnly && book.crosses(bookSide, limit)) {
      return fail('POST_ONLY_WOULD_CROSS', 'post-only order would take liquidity');
    }
    const qty = req.quantity;
    // A rejected order must not leave a (flat) position behind, so checks use a blank state.
    const ps = existing ?? this.blank;
    if (isLimit) {
      const increase = computeReserve(ps, ps.yes, ps.no, bookSide, limit, qty) - ps.reserve;
      if (increase > account.balance - account.reserved) {
        return this.ledger.short('order exceeds available balance', increase, account);
      }
    } else {
      const required = this.walkNeeds(
        ps,
        market,
        bookSide,
        qty,
        req.selfTradePrevention ?? DEFAULT_SELF_TRADE_PREVENTION,
      );
      if (required > account.balance - account.reserved) {
        return this.ledger.short('market order walk exceeds available balance', required, account);
      }
    }
    const tif: TimeInForce = req.timeInForce ?? (isLimit ? 'GTC' : 'IOC');
    const now = this.clock.now();
    const order = this.orders
      .newOrder()
      .init(
        this.ids.next('ord_'),
        ps === this.blank ? this.ledger.createPosition(account, market) : ps,
        req.tag ?? null,
        req.clientOrderId ?? null,
        req.action,
        req.side,
        req.type,
        isLimit ? req.price! : null,
        bookSide,
        limit,
        qty,
        tif,
        postOnly,
        now,
        this.orders.nextSequence(),
      );
    if (req.selfTradePrevention !== undefined) order.selfTradePrevention = req.selfTradePrevention;
    const accepted = order.snapshot();
    const events: EngineEvent[] = [{ type: 'order.accepted', order: accepted }];
    if (req.fillLimit !== undefined) {
      const stopped = this.matcher.match(market, order, events, now, req.fillLimit);
      if (order.remaining === 0) this.orders.retire(order);
      else
        this.matcher.cancelTaker(
          order,
          stopped ? 'SELF_TRADE_PREVENTION' : 'SCENARIO',
          events,
          now,
        );
    } else if (tif === 'FOK' && this.fokFillable(order, market) < qty) {
      this.matcher.expire(order, events, now, 'FOK_UNFILLABLE');
    } else {
      const stopped = this.matcher.match(market, order, events, now);
      if (order.remaining === 0) this.orders.retire(order);
      else if (stopped) this.matcher.cancelTaker(order, 'SELF_TRADE_PREVENTION', events, now);
      else if (tif === 'GTC') this.matcher.rest(market, order, events);
      else this.matcher.expire(order, events, now, 'IOC_REMAINDER');
    }
    this.ledger.flushDirty();
    // A snapshot is immutable, so an order that simply rested can share the accepted one.
    const unchanged = order.status === 'OPEN' && order.filledQuantity === 0;
    return { ok: true, events, order: unchanged ? accepted : order.snapshot() };
  }

  /**
   * What a FOK can fill now: the book's quantity, or with its own account's orders opposite, what
   * self-trade prevention lets it reach (a FOK that would be stopped part-way fills nothing).
   */
  private fokFillable(order: BookOrder, market: MarketState): number {
    const ps = order.owner;
    const own = order.bookSide === 'BID' ? ps.askTotal : ps.bidTotal;
    const { bookSide, bookPrice, quantity } = order;
    if (own === 0) return market.book.fillable(bookSide, bookPrice, quantity);
    const mode = order.selfTradePrevention;
    return selfTradeFillable(market.book, bookSide, bookPrice, quantity, order.accountId, mode);
  }

  /**
   * What a market order walking the book needs of the available balance: its reserve after the
   * walk, less its reserve now, less the cash the walk brings in. It fits when the available
   * balance covers this. With its own account's orders opposite, the walk takes exactly what
   * self-trade prevention lets it trade: other accounts' orders only, and for CANCEL_TAKER and
   * CANCEL_BOTH only those ahead of its first own order (a prefix is not always cheaper: buying
   * can free the reserve of the account's own resting orders).
   */
  private walkNeeds(
    ps: PositionState,
    market: MarketState,
    side: BookSide,
    qty: number,
    mode: SelfTradePrevention,
  ): number {
    const limit = side === 'BID' ? 99 : 1;
    const own = ownRestingLevels(ps, side === 'BID' ? 'ASK' : 'BID');
    const wanted =
      own === null ? qty : selfTradeFillable(market.book, side, limit, qty, ps.account.id, mode);
    const w = walkBook(market.book, side, limit, wanted, ps.yes, ps.no, this.scratch, null, own);
    const after = computeReserve(ps, w.finalYes, w.finalNo, null, 0, 0);
    return after - ps.reserve - w.cash;
  }

  /**
   * Amends a resting order. `quantity` is the new total. A lower quantity at the same price keeps
   * time priority; a new price or a larger quantity re-queues at the back of the (new) level with
   * a new sequence and may trade as a taker first. Codes: UNKNOWN_ORDER, ORDER_NOT_OPEN,
   * MARKET_NOT_OPEN, INVALID_ORDER (bad price, quantity <= filled), AMEND_NO_CHANGE,
   * POST_ONLY_WOULD_CROSS, INSUFFICIENT_FUNDS (reserve increase checked as for placement).
   * `accountId`, when given, must own the order.
   */
  amendOrder(
    orderId: string,
    req: AmendOrderRequest,
    accountId?: string,
  ): Result<{ order: OrderSnapshot }> {
    const order = this.orders.find(orderId);
    if (order === undefined || (accountId !== undefined && order.accountId !== accountId)) {
      return fail('UNKNOWN_ORDER', orderId);
    }
    if (!order.isOpen) return fail('ORDER_NOT_OPEN', `order is ${order.status}`);
    const market = this.markets.get(order.marketId)!;
    if (market.status !== 'OPEN') return fail('MARKET_NOT_OPEN', market.status);
    if (req.price !== undefined && !isPrice(req.price)) {
      return fail('INVALID_ORDER', 'price must be an integer 1..99');
    }
    if (req.quantity !== undefined && !isQuantity(req.quantity)) {
      return fail('INVALID_ORDER', `quantity must be an integer 1..${MAX_ORDER_QUANTITY}`);
    }
    const price = req.price ?? order.price!;
    const quantity = req.quantity ?? order.quantity;
    if (price === order.price && quantity === order.quantity) {
      return fail('AMEND_NO_CHANGE', 'amend changes nothing');
    }
    if (quantity <= order.filledQuantity) {
      return fail('INVALID_ORDER', 'new quantity must exceed the filled quantity');
    }
    const now = this.clock.now();
    const events: EngineEvent[] = [];
    const ps = order.owner;
    if (price === order.price && quantity < order.quantity) {
      const delta = order.quantity - quantity;
      market.book.shrink(order, delta);
      ps.addResting(order.bookSide, order.bookPrice, -delta);
      order.quantity = quantity;
      order.updatedAt = now;
      this.ledger.markDirty(ps);
      events.push(this.amendedEvent(order, false), {
        type: 'book.level',
        marketId: market.id,
        side: order.bookSide,
        price: order.bookPrice,
        quantity: market.book.levelQuantity(order.bookSide, order.bookPrice),
      });
      this.ledger.flushDirty();
      return { ok: true, events, order: order.snapshot() };
    }
    const bookPrice = bookPriceOf(order.side, price);
    if (order.postOnly && market.book.crosses(order.bookSide, bookPrice)) {
      return fail('POST_ONLY_WOULD_CROSS', 'post-only amend would take liquidity');
    }
    const account = ps.account;
    ps.addResting(order.bookSide, order.bookPrice, -order.remaining);
    const after = computeReserve(
      ps,
      ps.yes,
      ps.no,
      order.bookSide,
      bookPrice,
      quantity - order.filledQuantity,
      order,
    );
    ps.addResting(order.bookSide, order.bookPrice, order.remaining);
    if (after - ps.reserve > account.balance - account.reserved) {
      return this.ledger.short(
        'amended order exceeds available balance',
        after - ps.reserve,
        account,
      );
    }
    this.matcher.lift(market, order, events);
    order.price = price;
    order.bookPrice = bookPrice;
    order.quantity = quantity;
    order.sequence = this.orders.nextSequence();
    order.updatedAt = now;
    events.push(this.amendedEvent(order, true));
    const stopped = this.matcher.match(market, order, events, now);
    if (order.remaining === 0) this.orders.retire(order);
    else if (stopped) this.matcher.cancelTaker(order, 'SELF_TRADE_PREVENTION', events, now);
    else this.matcher.rest(market, order, events);
    this.ledger.flushDirty();
    return { ok: true, events, order: order.snapshot() };
  }

  private amendedEvent(order: BookOrder, requeued: boolean): EngineEvent {
    return {
      type: 'order.amended',
      orderId: order.id,
      accountId: order.accountId,
      price: order.price!,
      bookPrice: order.bookPrice,
      quantity: order.quantity,
      remainingQuantity: order.remaining,
      sequence: order.sequence,
      requeued,
      updatedAt: order.updatedAt,
    };
  }
}
