/** Commands and results of the RFQ engine layer (see engine-rfq.ts). Plain data. */
import type { TradeEvent } from './events.js';
import type { Action, OrderSnapshot, Side } from './types.js';

/** A quote hold to place. */
export interface HoldRequest {
  /** Chosen by the caller (the quote id: one hold per quote). */
  holdId: string;
  accountId: string;
  marketId: string;
  /** Positive integer cents, e.g. the quote's larger side. */
  amountCents: number;
  /** A hold of the same account released in the same command (a replaced quote). */
  replacesHoldId?: string | null;
}

/** A hold as persisted, for a restore. */
export interface RestoreHoldInput {
  holdId: string;
  accountId: string;
  marketId: string;
  amountCents: number;
  createdAt: number;
}

/** One accepted quote: the requester takes `quantity` from the responder at one price. */
export interface CrossQuoteRequest {
  marketId: string;
  /** Contracts, 1..{@link MAX_ORDER_QUANTITY}; all or nothing. */
  quantity: number;
  /** The requester. `price` is in its own side terms, 1..99. `tag` is stored on its order. */
  taker: { accountId: string; action: Action; side: Side; price: number; tag?: string | null };
  /** The responder; its order is the YES-terms mirror of the taker's. */
  maker: { accountId: string; tag?: string | null };
  /** Stored on both orders. */
  rfqId: string;
  /** The accepted quote's hold (the maker's, on this market), released by the cross. */
  releaseHoldId?: string | null;
  /** Ids of the two orders when the caller chooses them; else the engine's `ord_` ids. */
  takerOrderId?: string;
  makerOrderId?: string;
  /** The trade's id when the caller chooses it (unique: the store refuses a repeat); else `fil_`. */
  tradeId?: string;
}

/** What a cross made. */
export interface CrossQuoteResult {
  takerOrder: OrderSnapshot;
  makerOrder: OrderSnapshot;
  trade: TradeEvent;
}
