/**
 * Events emitted by the engine, in order, inside each successful command result. They carry
 * enough to mirror the engine state in SQL without reading the engine back: orders (accepted
 * snapshot, then deltas), trades, positions, balances and book levels.
 */
import type {
  BalanceReason,
  BookSide,
  CancelReason,
  ExpireReason,
  MarketStatus,
  OrderSnapshot,
  OrderStatus,
  Outcome,
  Side,
} from './types.js';

/** A new order passed every check; full snapshot at acceptance (status OPEN, nothing filled). */
export interface OrderAcceptedEvent {
  readonly type: 'order.accepted';
  readonly order: OrderSnapshot;
}

/** The order's remainder now rests on the book at `bookPrice`. */
export interface OrderRestedEvent {
  readonly type: 'order.rested';
  readonly orderId: string;
  readonly marketId: string;
  readonly bookSide: BookSide;
  readonly bookPrice: number;
  readonly remainingQuantity: number;
  readonly sequence: number;
}

/**
 * One execution. `price` is YES cents (the resting order's price, or the quote's for an RFQ
 * cross). `source` says where it traded: on the book, or off it by a quote cross.
 */
export interface TradeEvent {
  readonly type: 'trade';
  readonly source: 'BOOK' | 'RFQ';
  readonly id: string;
  readonly marketId: string;
  readonly price: number;
  readonly quantity: number;
  readonly makerOrderId: string;
  readonly takerOrderId: string;
  readonly makerAccountId: string;
  readonly takerAccountId: string;
  /** Each order's own side (YES or NO): the fill's own-terms price follows from it. */
  readonly makerSide: Side;
  readonly takerSide: Side;
  readonly takerBookSide: BookSide;
  readonly timestamp: number;
}

/** Fill progress of an order (once per maker fill, once per taker command). */
export interface OrderUpdatedEvent {
  readonly type: 'order.updated';
  readonly orderId: string;
  /** The order's owner, so consumers need not look the order up (it may be forgotten by then). */
  readonly accountId: string;
  readonly filledQuantity: number;
  readonly remainingQuantity: number;
  readonly status: OrderStatus;
  /** Integer cents in the order's own terms. */
  readonly fillCost: number;
  readonly averageFillPrice: number | null;
  readonly updatedAt: number;
}

/** The order left the book by cancellation; `cancelledQuantity` is the remainder dropped. */
export interface OrderCancelledEvent {
  readonly type: 'order.cancelled';
  readonly orderId: string;
  readonly accountId: string;
  readonly reason: CancelReason;
  readonly filledQuantity: number;
  readonly cancelledQuantity: number;
  readonly updatedAt: number;
}

/** IOC/MARKET remainder or an unfillable FOK; `expiredQuantity` is the remainder dropped. */
export interface OrderExpiredEvent {
  readonly type: 'order.expired';
  readonly orderId: string;
  readonly accountId: string;
  readonly reason: ExpireReason;
  readonly filledQuantity: number;
  readonly expiredQuantity: number;
  readonly updatedAt: number;
}

/**
 * Amended in place (`requeued` false: quantity lowered, priority kept) or re-queued with a new
 * sequence (`requeued` true: it may then trade as a taker, followed by trade/updated events).
 */
export interface OrderAmendedEvent {
  readonly type: 'order.amended';
  readonly orderId: string;
  readonly accountId: string;
  readonly price: number;
  readonly bookPrice: number;
  readonly quantity: number;
  readonly remainingQuantity: number;
  readonly sequence: number;
  readonly requeued: boolean;
  readonly updatedAt: number;
}

/** New netted position after a fill. */
export interface PositionChangedEvent {
  readonly type: 'position.changed';
  readonly accountId: string;
  readonly marketId: string;
  readonly yes: number;
  readonly no: number;
  readonly yesCost: number;
  readonly noCost: number;
  readonly realizedPnl: number;
}

/** Cash movement. `referenceId` is the trade id, market id (settlement) or caller reference. */
export interface BalanceChangedEvent {
  readonly type: 'balance.changed';
  readonly accountId: string;
  readonly delta: number;
  readonly balance: number;
  readonly reason: BalanceReason;
  readonly referenceId: string | null;
  readonly timestamp: number;
}

/** New total resting quantity at one YES price level (0 = level gone). */
export interface BookLevelEvent {
  readonly type: 'book.level';
  readonly marketId: string;
  readonly side: BookSide;
  readonly price: number;
  readonly quantity: number;
}

/** Account opened (createAccount). */
export interface AccountCreatedEvent {
  readonly type: 'account.created';
  readonly accountId: string;
  readonly balance: number;
}

/**
 * All orders and positions of the account were dropped and the balance set. Replaces one event
 * per order: the mirror should cancel every open order of the account (reason ACCOUNT_RESET)
 * and delete its positions. Book level changes follow as `book.level` events.
 */
export interface AccountResetEvent {
  readonly type: 'account.reset';
  readonly accountId: string;
  readonly balance: number;
  readonly cancelledOrders: number;
  readonly marketIds: string[];
  readonly timestamp: number;
}

/** Market added or its status changed (not to RESOLVED; see market.resolved). */
export interface MarketStatusEvent {
  readonly type: 'market.status';
  readonly marketId: string;
  readonly status: MarketStatus;
}

/** Market resolved; emitted after the cancels and settlements of that market. */
export interface MarketResolvedEvent {
  readonly type: 'market.resolved';
  readonly marketId: string;
  readonly outcome: Outcome;
  readonly timestamp: number;
}

/** A position closed by settlement: `payout` = 100 x winning contracts; position is now flat. */
export interface PositionSettledEvent {
  readonly type: 'position.settled';
  readonly accountId: string;
  readonly marketId: string;
  readonly outcome: Outcome;
  readonly yes: number;
  readonly no: number;
  readonly payout: number;
  readonly realizedPnl: number;
}

/**
 * Collateral held for an account's binding quote (an RFQ quote): it counts in the account's
 * reserved amount (available drops by `amountCents`) until released. Not on any book.
 */
export interface HoldPlacedEvent {
  readonly type: 'hold.placed';
  readonly holdId: string;
  readonly accountId: string;
  readonly marketId: string;
  readonly amountCents: number;
  readonly timestamp: number;
}

/**
 * A hold ended: RELEASED by its owner (quote withdrawn, expired or cancelled), REPLACED by a new
 * hold in the same command, CROSSED when its quote traded, or dropped by an ACCOUNT_RESET.
 */
export interface HoldReleasedEvent {
  readonly type: 'hold.released';
  readonly holdId: string;
  readonly accountId: string;
  readonly amountCents: number;
  readonly reason: 'RELEASED' | 'REPLACED' | 'CROSSED' | 'ACCOUNT_RESET';
  readonly timestamp: number;
}

/** Every event the engine emits; switch on `type`. */
export type EngineEvent =
  | OrderAcceptedEvent
  | OrderRestedEvent
  | TradeEvent
  | OrderUpdatedEvent
  | OrderCancelledEvent
  | OrderExpiredEvent
  | OrderAmendedEvent
  | PositionChangedEvent
  | BalanceChangedEvent
  | BookLevelEvent
  | AccountCreatedEvent
  | AccountResetEvent
  | MarketStatusEvent
  | MarketResolvedEvent
  | PositionSettledEvent
  | HoldPlacedEvent
  | HoldReleasedEvent;
