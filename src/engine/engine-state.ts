/**
 * The plain state the engine's collaborators share: a market (its book, statistics and the
 * positions held in it), the construction options, and the checks and failure builders every
 * command uses. No behaviour lives here beyond that.
 */
import { HandleOrderBook } from './handle-order-book.js';
import type { PositionState } from './ledger.js';
import type { OrderBook } from './order-book.js';
import {
  MAX_ORDER_QUANTITY,
  type Clock,
  type Failure,
  type IdGenerator,
  type MarketStatus,
  type Outcome,
  type ResultCode,
} from './types.js';

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
   * Every account's position state in this market, in first-touched order (for settlement,
   * restore and reads). Lookups go through the ledger's numeric position index.
   */
  readonly positions: PositionState[] = [];
  /**
   * @param index the market's number in its engine (creation order), the key of its positions
   *   in the position index.
   */
  constructor(
    readonly id: string,
    public status: MarketStatus,
    readonly index: number,
  ) {}
}

export function isPrice(p: unknown): p is number {
  return typeof p === 'number' && Number.isSafeInteger(p) && p >= 1 && p <= 99;
}

export function isAmount(a: unknown): a is number {
  return typeof a === 'number' && Number.isSafeInteger(a) && a > 0;
}

export function isQuantity(q: unknown): q is number {
  return typeof q === 'number' && Number.isSafeInteger(q) && q >= 1 && q <= MAX_ORDER_QUANTITY;
}

export function fail(code: ResultCode, message: string): Failure {
  return { ok: false, code, message };
}

/** INSUFFICIENT_FUNDS naming what is required of the available balance (and who is short). */
export function shortOf(
  message: string,
  required: number,
  available: number,
  party?: 'TAKER' | 'MAKER',
): Failure {
  return {
    ok: false,
    code: 'INSUFFICIENT_FUNDS',
    message,
    funds: { required, available },
    ...(party === undefined ? {} : { party }),
  };
}
