/**
 * Self-trade prevention (STP): an incoming order never trades with a resting order of the same
 * account. The taker's mode decides which side gives way; fills made before the two meet stand.
 *
 * Kept apart from the matching loop, which only asks {@link selfTradeAction} what to do, so the
 * rule stays one pure decision whatever the book's storage looks like.
 */
import type { OrderBook } from './order-book.js';
import type { PositionState } from './ledger.js';
import type { BookOrder } from './order.js';
import type { BookSide } from './types.js';

/**
 * What an incoming order does when it meets its own account's resting order:
 * - `CANCEL_TAKER` (default): the incoming order's remainder is cancelled; the resting one stays.
 * - `CANCEL_MAKER`: the resting order is cancelled and matching goes on with the next one.
 * - `CANCEL_BOTH`: both are cancelled.
 */
export type SelfTradePrevention = 'CANCEL_TAKER' | 'CANCEL_MAKER' | 'CANCEL_BOTH';

export const SELF_TRADE_PREVENTION_MODES: readonly SelfTradePrevention[] = [
  'CANCEL_TAKER',
  'CANCEL_MAKER',
  'CANCEL_BOTH',
];

export const DEFAULT_SELF_TRADE_PREVENTION: SelfTradePrevention = 'CANCEL_TAKER';

export function isSelfTradePrevention(v: unknown): v is SelfTradePrevention {
  return v === 'CANCEL_TAKER' || v === 'CANCEL_MAKER' || v === 'CANCEL_BOTH';
}

/** The matching loop's next step for one (taker, maker) pair. */
export interface SelfTradeAction {
  /** The two may trade. */
  readonly trade: boolean;
  /** Cancel the resting order (reason SELF_TRADE_PREVENTION). */
  readonly cancelMaker: boolean;
  /** Stop matching and cancel the taker's remainder (reason SELF_TRADE_PREVENTION). */
  readonly cancelTaker: boolean;
}

const TRADE: SelfTradeAction = { trade: true, cancelMaker: false, cancelTaker: false };
const ACTIONS: Record<SelfTradePrevention, SelfTradeAction> = {
  CANCEL_TAKER: { trade: false, cancelMaker: false, cancelTaker: true },
  CANCEL_MAKER: { trade: false, cancelMaker: true, cancelTaker: false },
  CANCEL_BOTH: { trade: false, cancelMaker: true, cancelTaker: true },
};

/**
 * Decides what happens when a taker of `takerAccountId` with mode `mode` meets a resting order
 * of `makerAccountId`. Constant objects: the hot path allocates nothing.
 */
export function selfTradeAction(
  takerAccountId: string,
  makerAccountId: string,
  mode: SelfTradePrevention,
): SelfTradeAction {
  return takerAccountId === makerAccountId ? ACTIONS[mode] : TRADE;
}

/**
 * How much of `wanted` a taker of `accountId` can actually fill up to `limit` under STP (what a
 * FOK must check): other accounts' orders count; the account's own orders are skipped
 * (CANCEL_MAKER cancels them and goes on) or end the walk (the other modes stop the taker).
 */
export function selfTradeFillable(
  book: OrderBook,
  takerSide: BookSide,
  limit: number,
  wanted: number,
  accountId: string,
  mode: SelfTradePrevention,
): number {
  const bid = takerSide === 'BID';
  const makerSide: BookSide = bid ? 'ASK' : 'BID';
  let total = 0;
  for (
    let p = bid ? book.bestAsk : book.bestBid;
    bid ? p <= limit && p < 100 : p >= limit && p > 0;
    p += bid ? 1 : -1
  ) {
    for (let o = book.head(makerSide, p); o !== null && total < wanted; o = book.next(o)) {
      if (o.accountId !== accountId) total += o.quantity - o.filledQuantity;
      else if (mode !== 'CANCEL_MAKER') return total < wanted ? total : wanted;
    }
    if (total >= wanted) return wanted;
  }
  return total;
}

/**
 * The resting quantity per YES price of an account's own orders on `side` in one market (a
 * `walkBook` exclusion, so a market order's funds check walks only what it can trade), or null
 * when the account has none there: the common case costs nothing. A position with many resting
 * orders keeps these per-price quantities already (PositionState's levels, read-only here), so
 * its walk is O(price range), not O(orders), and allocates nothing.
 */
export function ownRestingLevels(
  ps: PositionState | undefined,
  side: BookSide,
): Float64Array | null {
  if (ps === undefined || ps.ordersHead === null) return null;
  if ((side === 'BID' ? ps.bidTotal : ps.askTotal) === 0) return null;
  const kept = side === 'BID' ? ps.bidLevels : ps.askLevels;
  if (kept !== null) return kept;
  let levels: Float64Array | null = null;
  for (let o: BookOrder | null = ps.ordersHead; o !== null; o = o.ownerNext) {
    if (o.bookSide !== side) continue;
    levels ??= new Float64Array(101);
    levels[o.bookPrice] += o.quantity - o.filledQuantity;
  }
  return levels;
}
