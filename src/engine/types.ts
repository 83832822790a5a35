/**
 * Shared value types of the matching engine. Everything here is plain data: the engine never
 * depends on a framework, and all money is integer cents, all quantities integer contracts.
 */
import type { EngineEvent } from './events.js';
import type { SelfTradePrevention } from './self-trade.js';

export type { SelfTradePrevention } from './self-trade.js';

/** BUY or SELL, in the terms of the order's own {@link Side}. */
export type Action = 'BUY' | 'SELL';
/** The contract an order trades: YES pays 100 cents on a YES resolution, NO on a NO resolution. */
export type Side = 'YES' | 'NO';
/**
 * LIMIT needs a price; MARKET has none and never rests. RFQ orders are made only by
 * {@link MatchingEngine.crossQuote}: filled at once at the quote's price, never on the book.
 */
export type OrderType = 'LIMIT' | 'MARKET' | 'RFQ';
/** GTC rests its remainder, IOC expires it, FOK fills completely or not at all. */
export type TimeInForce = 'GTC' | 'IOC' | 'FOK';
/** OPEN and PARTIALLY_FILLED orders rest on the book; the others are final. */
export type OrderStatus = 'OPEN' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELLED' | 'EXPIRED';
/** Side of the single YES-terms book: BUY YES and SELL NO are bids, SELL YES and BUY NO asks. */
export type BookSide = 'BID' | 'ASK';
/** Only OPEN markets accept new orders and amends; cancels work in every status but RESOLVED. */
export type MarketStatus = 'OPEN' | 'HALTED' | 'CLOSED' | 'RESOLVED';
/** Resolution outcome of a binary market. */
export type Outcome = 'YES' | 'NO';
/**
 * Why an order was cancelled. `REQUOTE` is used by the house market maker, `ACCOUNT_RESET` by
 * {@link MatchingEngine.resetAccount} (which emits one summary event instead of one per order),
 * `SCENARIO` for the remainder of an order placed with a {@link PlaceOrderRequest.fillLimit},
 * `SELF_TRADE_PREVENTION` for an order that met its own account's order (see self-trade.ts).
 */
export type CancelReason =
  | 'USER'
  | 'CANCEL_ALL'
  | 'CANCEL_BY_TAG'
  | 'MARKET_RESOLVED'
  | 'ACCOUNT_RESET'
  | 'REQUOTE'
  | 'SCENARIO'
  | 'SELF_TRADE_PREVENTION';
/**
 * Why a taker ended EXPIRED: a FOK whose whole quantity was not available (nothing traded), or
 * the part an IOC or MARKET order could not fill at once (dropped, never rested).
 */
export type ExpireReason = 'FOK_UNFILLABLE' | 'IOC_REMAINDER';
/** Why a balance moved. */
export type BalanceReason = 'TRADE' | 'DEPOSIT' | 'WITHDRAWAL' | 'SETTLEMENT' | 'RESET';

/** Source of time, epoch milliseconds. Injected so the engine stays deterministic. */
export interface Clock {
  now(): number;
}

/** Source of ids; the engine asks for `ord_` (orders) and `fil_` (trades) prefixes. */
export interface IdGenerator {
  next(prefix: string): string;
}

/**
 * Result codes of failed commands. The engine never throws for a business failure.
 * - `INSUFFICIENT_FUNDS`: the account's available balance cannot cover the order's worst case
 *   (or the withdrawal); nothing happened.
 * - `MARKET_NOT_OPEN`: orders and amends need an OPEN market.
 * - `MARKET_ALREADY_RESOLVED`: the market is RESOLVED and cannot change any more.
 * - `UNKNOWN_MARKET` / `UNKNOWN_ACCOUNT` / `UNKNOWN_ORDER`: no such id (an order of another
 *   account is also UNKNOWN_ORDER, so ids of other accounts are not disclosed).
 * - `ORDER_NOT_OPEN`: the order exists but is final (filled, cancelled or expired).
 * - `POST_ONLY_WOULD_CROSS`: a post-only order (or amend) would take liquidity; nothing happened.
 * - `AMEND_NO_CHANGE`: an amend without any field or with the current values.
 * - `INVALID_ORDER`: malformed order or amend (price, quantity, type/time-in-force combination).
 * - `INVALID_AMOUNT`: a money amount that is not a positive safe integer, or that would overflow.
 * - `INVALID_STATE`: a restore or status change that contradicts the engine's rules.
 * - `DUPLICATE_ACCOUNT` / `DUPLICATE_MARKET` / `DUPLICATE_ORDER` / `DUPLICATE_HOLD`: the id
 *   already exists.
 * - `UNKNOWN_HOLD`: no such quote hold (released, crossed, dropped by a reset, or another
 *   account's).
 * - `SELF_TRADE`: a quote cross between an account and itself.
 */
export type ResultCode =
  | 'INSUFFICIENT_FUNDS'
  | 'MARKET_NOT_OPEN'
  | 'MARKET_ALREADY_RESOLVED'
  | 'UNKNOWN_MARKET'
  | 'UNKNOWN_ACCOUNT'
  | 'UNKNOWN_ORDER'
  | 'ORDER_NOT_OPEN'
  | 'POST_ONLY_WOULD_CROSS'
  | 'AMEND_NO_CHANGE'
  | 'INVALID_ORDER'
  | 'INVALID_AMOUNT'
  | 'INVALID_STATE'
  | 'DUPLICATE_ACCOUNT'
  | 'DUPLICATE_MARKET'
  | 'DUPLICATE_ORDER'
  | 'DUPLICATE_HOLD'
  | 'UNKNOWN_HOLD'
  | 'SELF_TRADE';

/** A failed command: nothing changed in the engine. */
export interface Failure {
  readonly ok: false;
  readonly code: ResultCode;
  readonly message: string;
  /**
   * INSUFFICIENT_FUNDS of an order or amend: how much of the available balance the order needs
   * (cents: its reserve increase, or a market order's cost net of what it frees) and how much
   * is available.
   */
  readonly funds?: { readonly required: number; readonly available: number };
  /** INSUFFICIENT_FUNDS of a quote cross: which party is short (the requester is the taker). */
  readonly party?: 'TAKER' | 'MAKER';
}

/** A successful command with its events (in order) plus command-specific fields. */
export type Success<T extends object = object> = {
  readonly ok: true;
  readonly events: EngineEvent[];
} & T;

/** Outcome of a command. */
export type Result<T extends object = object> = Success<T> | Failure;

/** A new order. `price` is in the order's own side terms (a BUY NO at 30 is an ask at YES 70). */
export interface PlaceOrderRequest {
  accountId: string;
  marketId: string;
  action: Action;
  side: Side;
  type: OrderType;
  /** 1..99, required for LIMIT, must be absent/null for MARKET. */
  price?: number | null;
  /** Contracts, 1..{@link MAX_ORDER_QUANTITY}. */
  quantity: number;
  /** Default GTC for LIMIT, IOC for MARKET (MARKET accepts IOC or FOK). */
  timeInForce?: TimeInForce;
  /** LIMIT GTC only. */
  postOnly?: boolean;
  /** Opaque, e.g. the API key id, for {@link MatchingEngine.cancelByTag}. */
  tag?: string | null;
  /** Opaque client reference, echoed back. */
  clientOrderId?: string | null;
  /**
   * Forced partial fill (sandbox scenarios): the order takes at most this many contracts from the
   * book at its own limit, whatever its time in force, and never rests; what is left is cancelled
   * with reason `SCENARIO`. Absent: the order behaves normally.
   */
  fillLimit?: number;
  /** What happens when it would trade with its own account's resting order; default CANCEL_TAKER. */
  selfTradePrevention?: SelfTradePrevention;
}

/** Amend: `quantity` is the new TOTAL quantity (must exceed the filled quantity). */
export interface AmendOrderRequest {
  price?: number;
  quantity?: number;
}

/** Immutable copy of an order. */
export interface OrderSnapshot {
  readonly id: string;
  readonly accountId: string;
  readonly marketId: string;
  readonly tag: string | null;
  readonly clientOrderId: string | null;
  readonly action: Action;
  readonly side: Side;
  readonly type: OrderType;
  /** As given, in the order's own side terms; null for MARKET. */
  readonly price: number | null;
  readonly bookSide: BookSide;
  /** YES-terms price of the book level; null for MARKET. */
  readonly bookPrice: number | null;
  readonly quantity: number;
  readonly filledQuantity: number;
  /** quantity - filledQuantity while resting, 0 once final. */
  readonly remainingQuantity: number;
  /** Sum of (fill price in the order's own terms x quantity), integer cents. */
  readonly fillCost: number;
  /** fillCost / filledQuantity in own terms (display value, may be fractional); null if unfilled. */
  readonly averageFillPrice: number | null;
  readonly status: OrderStatus;
  readonly timeInForce: TimeInForce;
  readonly postOnly: boolean;
  readonly selfTradePrevention: SelfTradePrevention;
  readonly cancelReason: CancelReason | ExpireReason | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Engine-wide increasing number; FIFO order inside a price level. */
  readonly sequence: number;
  /** The request for quote an RFQ order traded under; null for book orders. */
  readonly rfqId: string | null;
}

/** Balances of an account, integer cents. available = balance - reserved. */
export interface AccountSnapshot {
  readonly accountId: string;
  readonly balance: number;
  readonly reserved: number;
  readonly available: number;
}

/**
 * Netted position of one account in one market. Costs are the cost basis of the current holding
 * in the contract's own terms (NO cost in NO cents); realizedPnl is closed proceeds minus cost.
 */
export interface PositionSnapshot {
  readonly accountId: string;
  readonly marketId: string;
  readonly yes: number;
  readonly no: number;
  readonly yesCost: number;
  readonly noCost: number;
  readonly realizedPnl: number;
  /** yesCost / yes (display value), null when flat. */
  readonly yesAveragePrice: number | null;
  /** noCost / no in NO terms (display value), null when flat. */
  readonly noAveragePrice: number | null;
  /** Worst-case reservation of this account's resting orders in this market. */
  readonly reserved: number;
  readonly openOrders: number;
}

/** One aggregated book level, YES terms. */
export interface DepthLevel {
  readonly price: number;
  readonly quantity: number;
}

/** Book snapshot, best levels first. */
export interface Depth {
  readonly marketId: string;
  readonly bids: DepthLevel[];
  readonly asks: DepthLevel[];
}

/** Per-market statistics. Prices are YES cents; null when there is none. */
export interface MarketSummary {
  readonly marketId: string;
  readonly status: MarketStatus;
  readonly outcome: Outcome | null;
  readonly bestBid: number | null;
  readonly bestAsk: number | null;
  readonly lastPrice: number | null;
  /** Contracts traded. */
  readonly volume: number;
  /**
   * Contracts whose holder was wiped by {@link MatchingEngine.resetAccount}: their counterparts
   * still exist, so sum(yes) + orphanYes == sum(no) + orphanNo. Orphans are not paid out.
   */
  readonly orphanYes: number;
  readonly orphanNo: number;
}

/** A quote request: like an order, the account is optional (needed only for cashDelta). */
/**
 * A quote's order. `accountId`, when given, nets the fills against that account's position for
 * `cashDelta`; an account that does not exist yet quotes as a flat one (a quote opens nothing).
 */
export type QuoteRequest = Omit<PlaceOrderRequest, 'accountId'> & { accountId?: string };

/** What an order would fill against the current book. Prices in the order's own terms. */
export interface Quote {
  readonly filledQuantity: number;
  readonly averagePrice: number | null;
  /** Own-terms notional, integer cents (paid when buying, received when selling). */
  readonly cost: number;
  readonly levels: DepthLevel[];
  readonly levelsWalked: number;
  readonly fullyFilled: boolean;
  /** Cash change of `accountId` with netting against its position; null without account. */
  readonly cashDelta: number | null;
}

/** Largest quantity of one order; keeps every price x quantity product a safe integer. */
export const MAX_ORDER_QUANTITY = 1_000_000_000;
