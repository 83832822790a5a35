/**
 * The matching engine: one YES-terms price-time-priority book per binary market, netted
 * positions, worst-case reservations, and command results with ordered events.
 *
 * Self-trade is PREVENTED: an account's taker order never trades with its own resting orders;
 * the taker's {@link SelfTradePrevention} mode says which side is cancelled (see self-trade.ts).
 */
import { EngineRfq } from './engine-rfq.js';
import { isPrice, type MarketState } from './engine-core.js';
import type { EngineEvent } from './events.js';
import { AccountState, computeReserve, PositionState } from './ledger.js';
import { bookPriceOf, bookSideOf, type BookOrder } from './order.js';
import {
  DEFAULT_SELF_TRADE_PREVENTION,
  isSelfTradePrevention,
  ownRestingLevels,
  selfTradeFillable,
  type SelfTradePrevention,
} from './self-trade.js';
import { newWalkResult, walkBook } from './walk.js';
import {
  MAX_ORDER_QUANTITY,
  type AmendOrderRequest,
  type BookSide,
  type CancelReason,
  type DepthLevel,
  type OrderSnapshot,
  type PlaceOrderRequest,
  type Quote,
  type QuoteRequest,
  type Result,
  type Side,
  type TimeInForce,
} from './types.js';

const isQuantity = (q: unknown): q is number =>
  typeof q === 'number' && Number.isSafeInteger(q) && q >= 1 && q <= MAX_ORDER_QUANTITY;

/** Returns an error message, or null when the order is well formed. */
function orderProblem(req: QuoteRequest): string | null {
  if (req.action !== 'BUY' && req.action !== 'SELL') return 'action must be BUY or SELL';
  if (req.side !== 'YES' && req.side !== 'NO') return 'side must be YES or NO';
  if (!isQuantity(req.quantity)) return `quantity must be an integer 1..${MAX_ORDER_QUANTITY}`;
  if (req.fillLimit !== undefined && !isQuantity(req.fillLimit)) {
    return `fillLimit must be an integer 1..${MAX_ORDER_QUANTITY}`;
  }
  const tif = req.timeInForce;
  if (tif !== undefined && tif !== 'GTC' && tif !== 'IOC' && tif !== 'FOK') {
    return 'timeInForce must be GTC, IOC or FOK';
  }
  const stp = (req as PlaceOrderRequest).selfTradePrevention;
  if (stp !== undefined && !isSelfTradePrevention(stp)) {
    return 'selfTradePrevention must be CANCEL_TAKER, CANCEL_MAKER or CANCEL_BOTH';
  }
  if (req.type === 'LIMIT') {
    if (!isPrice(req.price)) return 'LIMIT price must be an integer 1..99';
    if (req.postOnly === true && tif !== undefined && tif !== 'GTC') {
      return 'postOnly needs GTC';
    }
    return null;
  }
  if (req.type !== 'MARKET') return 'type must be LIMIT or MARKET';
  if (req.price !== undefined && req.price !== null) return 'MARKET orders take no price';
  if (tif === 'GTC') return 'MARKET orders are IOC or FOK';
  if (req.postOnly === true) return 'postOnly needs a LIMIT order';
  return null;
}

/**
 * Paper/live matching engine for binary prediction markets (framework-free, single-threaded,
 * deterministic given its {@link Clock} and {@link IdGenerator}).
 *
 * Every command returns a {@link Result}: `{ ok: true, events, ... }` or
 * `{ ok: false, code, message }` with nothing changed; business failures never throw. Events are
 * emitted in order and suffice to mirror the state in SQL (see `events.ts`).
 *
 * Commands: {@link placeOrder}, {@link amendOrder}, {@link cancelOrder}, {@link cancelAll},
 * {@link cancelByTag}, {@link quote}; accounts ({@link createAccount}, {@link deposit},
 * {@link withdraw}, {@link resetAccount}); markets ({@link addMarket}, {@link setMarketStatus},
 * {@link resolveMarket}); restore ({@link restoreAccount}, {@link restorePosition},
 * {@link restoreOrder}, {@link restoreHold}, {@link completeRestore}); request for quote
 * ({@link placeHold}, {@link releaseHold}, {@link crossQuote}, see engine-rfq.ts). Reads: {@link getOrder}, {@link openOrders},
 * {@link depth}, {@link marketSummary}, {@link position}, {@link positions},
 * {@link getAccount} and friends.
 *
 * Self-trade is prevented (see the file comment).
 */
export class MatchingEngine extends EngineRfq {
  private readonly scratch = newWalkResult();
  private readonly blank = new PositionState(new AccountState(''), '');

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
    if (problem !== null) return this.fail('INVALID_ORDER', problem);
    const market = this.markets.get(req.marketId);
    if (market === undefined) return this.fail('UNKNOWN_MARKET', req.marketId);
    if (market.status !== 'OPEN') return this.fail('MARKET_NOT_OPEN', market.status);
    const existing = market.positions.get(req.accountId);
    const account = existing?.account ?? this.accounts.get(req.accountId);
    if (account === undefined) return this.fail('UNKNOWN_ACCOUNT', req.accountId);
    const isLimit = req.type === 'LIMIT';
    const bookSide = bookSideOf(req.action, req.side);
    const limit = isLimit ? bookPriceOf(req.side, req.price!) : bookSide === 'BID' ? 99 : 1;
    const postOnly = req.postOnly === true;
    const book = market.book;
    if (postOnly && book.crosses(bookSide, limit)) {
      return this.fail('POST_ONLY_WOULD_CROSS', 'post-only order would take liquidity');
    }
    const qty = req.quantity;
    // A rejected order must not leave a (flat) position behind, so checks use a blank state.
    const ps = existing ?? this.blank;
    if (isLimit) {
      const increase = computeReserve(ps, ps.yes, ps.no, bookSide, limit, qty) - ps.reserve;
      if (increase > account.balance - account.reserved) {
        return this.short('order exceeds available balance', increase, account);
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
        return this.short('market order walk exceeds available balance', required, account);
      }
    }
    const tif: TimeInForce = req.timeInForce ?? (isLimit ? 'GTC' : 'IOC');
    const now = this.clock.now();
    const order = this.newOrder().init(
      this.ids.next('ord_'),
      ps === this.blank ? this.positionOf(account, market) : ps,
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
      ++this.sequence,
    );
    if (req.selfTradePrevention !== undefined) order.selfTradePrevention = req.selfTradePrevention;
    const accepted = order.snapshot();
    const events: EngineEvent[] = [{ type: 'order.accepted', order: accepted }];
    if (req.fillLimit !== undefined) {
      const stopped = this.match(market, order, events, now, req.fillLimit);
      if (order.remaining === 0) this.retire(order);
      else this.cancelTaker(order, stopped ? 'SELF_TRADE_PREVENTION' : 'SCENARIO', events, now);
    } else if (tif === 'FOK' && this.fokFillable(order, market) < qty) {
      this.expire(order, events, now, 'FOK_UNFILLABLE');
    } else {
      const stopped = this.match(market, order, events, now);
      if (order.remaining === 0) this.retire(order);
      else if (stopped) this.cancelTaker(order, 'SELF_TRADE_PREVENTION', events, now);
      else if (tif === 'GTC') this.rest(market, order, events);
      else this.expire(order, events, now, 'IOC_REMAINDER');
    }
    this.flushDirty();
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
    const own = ownRestingLevels(ps.ordersHead, side === 'BID' ? 'ASK' : 'BID');
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
    const order = this.findOrder(orderId);
    if (order === undefined || (accountId !== undefined && order.accountId !== accountId)) {
      return this.fail('UNKNOWN_ORDER', orderId);
    }
    if (!order.isOpen) return this.fail('ORDER_NOT_OPEN', `order is ${order.status}`);
    const market = this.markets.get(order.marketId)!;
    if (market.status !== 'OPEN') return this.fail('MARKET_NOT_OPEN', market.status);
    if (req.price !== undefined && !isPrice(req.price)) {
      return this.fail('INVALID_ORDER', 'price must be an integer 1..99');
    }
    if (req.quantity !== undefined && !isQuantity(req.quantity)) {
      return this.fail('INVALID_ORDER', `quantity must be an integer 1..${MAX_ORDER_QUANTITY}`);
    }
    const price = req.price ?? order.price!;
    const quantity = req.quantity ?? order.quantity;
    if (price === order.price && quantity === order.quantity) {
      return this.fail('AMEND_NO_CHANGE', 'amend changes nothing');
    }
    if (quantity <= order.filledQuantity) {
      return this.fail('INVALID_ORDER', 'new quantity must exceed the filled quantity');
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
      this.markDirty(ps);
      events.push(this.amendedEvent(order, false), {
        type: 'book.level',
        marketId: market.id,
        side: order.bookSide,
        price: order.bookPrice,
        quantity: market.book.levelQuantity(order.bookSide, order.bookPrice),
      });
      this.flushDirty();
      return { ok: true, events, order: order.snapshot() };
    }
    const bookPrice = bookPriceOf(order.side, price);
    if (order.postOnly && market.book.crosses(order.bookSide, bookPrice)) {
      return this.fail('POST_ONLY_WOULD_CROSS', 'post-only amend would take liquidity');
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
      return this.short('amended order exceeds available balance', after - ps.reserve, account);
    }
    this.lift(market, order, events);
    order.price = price;
    order.bookPrice = bookPrice;
    order.quantity = quantity;
    order.sequence = ++this.sequence;
    order.updatedAt = now;
    events.push(this.amendedEvent(order, true));
    const stopped = this.match(market, order, events, now);
    if (order.remaining === 0) this.retire(order);
    else if (stopped) this.cancelTaker(order, 'SELF_TRADE_PREVENTION', events, now);
    else this.rest(market, order, events);
    this.flushDirty();
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

  /**
   * Cancels one resting order (allowed in OPEN, HALTED and CLOSED markets). `accountId`, when
   * given, must own the order. Codes: UNKNOWN_ORDER, ORDER_NOT_OPEN.
   */
  cancelOrder(
    orderId: string,
    accountId?: string,
    reason: CancelReason = 'USER',
  ): Result<{ order: OrderSnapshot }> {
    const order = this.findOrder(orderId);
    if (order === undefined || (accountId !== undefined && order.accountId !== accountId)) {
      return this.fail('UNKNOWN_ORDER', orderId);
    }
    if (!order.isOpen) return this.fail('ORDER_NOT_OPEN', `order is ${order.status}`);
    const events: EngineEvent[] = [];
    this.cancelResting(this.markets.get(order.marketId)!, order, reason, events, this.clock.now());
    this.flushDirty();
    return { ok: true, events, order: order.snapshot() };
  }

  /** Cancels every resting order of the account, optionally in one market. Codes: UNKNOWN_ACCOUNT, UNKNOWN_MARKET. */
  cancelAll(accountId: string, marketId?: string): Result<{ cancelled: number }> {
    return this.cancelWhere(accountId, marketId, null, 'CANCEL_ALL');
  }

  /**
   * Cancels the account's resting orders whose tag equals `match` (or satisfies it), e.g. all
   * orders of a disconnected API key. Codes: UNKNOWN_ACCOUNT, UNKNOWN_MARKET.
   */
  cancelByTag(
    accountId: string,
    match: string | ((tag: string | null) => boolean),
    marketId?: string,
  ): Result<{ cancelled: number }> {
    const test = typeof match === 'string' ? (t: string | null) => t === match : match;
    return this.cancelWhere(accountId, marketId, test, 'CANCEL_BY_TAG');
  }

  private cancelWhere(
    accountId: string,
    marketId: string | undefined,
    test: ((tag: string | null) => boolean) | null,
    reason: CancelReason,
  ): Result<{ cancelled: number }> {
    const account = this.accounts.get(accountId);
    if (account === undefined) return this.fail('UNKNOWN_ACCOUNT', accountId);
    if (marketId !== undefined && !this.markets.has(marketId)) {
      return this.fail('UNKNOWN_MARKET', marketId);
    }
    const now = this.clock.now();
    const events: EngineEvent[] = [];
    let cancelled = 0;
    for (const ps of account.positions) {
      if (marketId !== undefined && ps.marketId !== marketId) continue;
      if (ps.ordersHead === null) continue;
      const market = this.markets.get(ps.marketId)!;
      for (let o: BookOrder | null = ps.ordersHead; o !== null;) {
        const next: BookOrder | null = o.ownerNext;
        if (test === null || test(o.tag)) {
          this.cancelResting(market, o, reason, events, now);
          cancelled++;
        }
        o = next;
      }
    }
    this.flushDirty();
    return { ok: true, events, cancelled };
  }

  /**
   * What the order would fill right now, without changing anything: FOK that cannot fill
   * completely quotes zero; post-only that would cross quotes POST_ONLY_WOULD_CROSS. An
   * `accountId` with no account yet quotes as a flat position. Codes: INVALID_ORDER,
   * UNKNOWN_MARKET, MARKET_NOT_OPEN, POST_ONLY_WOULD_CROSS.
   */
  quote(req: QuoteRequest): Result<{ quote: Quote }> {
    const problem = orderProblem(req);
    if (problem !== null) return this.fail('INVALID_ORDER', problem);
    const market = this.markets.get(req.marketId);
    if (market === undefined) return this.fail('UNKNOWN_MARKET', req.marketId);
    if (market.status !== 'OPEN') return this.fail('MARKET_NOT_OPEN', market.status);
    // No account (yet), or none in this market: a flat position.
    const ps = req.accountId === undefined ? undefined : market.positions.get(req.accountId);
    const side = bookSideOf(req.action, req.side);
    const limit =
      req.type === 'LIMIT' ? bookPriceOf(req.side, req.price!) : side === 'BID' ? 99 : 1;
    if (req.postOnly === true && market.book.crosses(side, limit)) {
      return this.fail('POST_ONLY_WOULD_CROSS', 'post-only order would take liquidity');
    }
    const levels: DepthLevel[] = [];
    // As the order would fill: never against the account's own orders (self-trade prevention).
    const mine = ownRestingLevels(ps?.ordersHead ?? null, side === 'BID' ? 'ASK' : 'BID');
    const mode = req.selfTradePrevention ?? DEFAULT_SELF_TRADE_PREVENTION;
    const wanted =
      mine === null
        ? req.quantity
        : selfTradeFillable(market.book, side, limit, req.quantity, req.accountId!, mode);
    const w = walkBook(
      market.book,
      side,
      limit,
      wanted,
      ps?.yes ?? 0,
      ps?.no ?? 0,
      newWalkResult(),
      levels,
      mine,
    );
    const none = req.timeInForce === 'FOK' && w.filled < req.quantity;
    const own = (p: number): number => ownPrice(req.side, p);
    let cost = 0;
    for (const l of levels) cost += own(l.price) * l.quantity;
    const quote: Quote = {
      filledQuantity: none ? 0 : w.filled,
      averagePrice: none || w.filled === 0 ? null : cost / w.filled,
      cost: none ? 0 : cost,
      levels: none ? [] : levels.map((l) => ({ price: own(l.price), quantity: l.quantity })),
      levelsWalked: none ? 0 : w.levels,
      fullyFilled: w.filled === req.quantity,
      cashDelta: req.accountId === undefined ? null : none ? 0 : w.cash,
    };
    return { ok: true, events: [], quote };
  }
}

function ownPrice(side: Side, yesPrice: number): number {
  return side === 'YES' ? yesPrice : 100 - yesPrice;
}
