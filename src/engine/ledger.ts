/**
 * Accounts, netted positions and worst-case reservations.
 *
 * A position keeps only totals of its resting orders (quantity and worst-case notional per book
 * side) instead of per-price arrays: thousands of accounts times hundreds of markets would
 * otherwise cost hundreds of megabytes and slow every garbage collection. The per-price walk the
 * reservation rule sometimes needs is rebuilt on demand from the position's own order list.
 */
import type { BookOrder } from './order.js';
import type { BookSide, PositionSnapshot } from './types.js';

export class AccountState {
  balance = 0;
  /** Sum of the reserves of its positions. */
  reserved = 0;
  /** Every position state of the account (lookups go through the engine's position index). */
  readonly positions: PositionState[] = [];
  /**
   * @param index the account's number in its engine (creation order), the key of its positions
   *   in the position index; -1 for scratch accounts.
   */
  constructor(
    readonly id: string,
    readonly index = -1,
  ) {}
}

/**
 * One account's state in one market. Instances are built from an object literal (see the
 * constructor), so fields are `declare`d here rather than initialised.
 */
export class PositionState {
  declare readonly account: AccountState;
  declare readonly marketId: string;
  declare yes: number;
  declare no: number;
  declare yesCost: number;
  declare noCost: number;
  declare realizedPnl: number;
  /** Resting quantity per book side, and its worst-case cost if it all opened new contracts. */
  declare bidTotal: number;
  /** Sum of price x quantity over resting bids. */
  declare bidNotional: number;
  declare askTotal: number;
  /** Sum of (100 - price) x quantity over resting asks. */
  declare askNotional: number;
  declare reserve: number;
  /** Head of this account's open orders in this market. */
  declare ordersHead: BookOrder | null;
  declare orderCount: number;
  /** Command epoch in which the reserve was last marked stale (dedupes recomputation). */
  declare dirtyEpoch: number;
  /**
   * Resting quantity per YES price, kept only while the position has many resting orders
   * (more than {@link LEVELS_THRESHOLD}), so the reserve walk stays O(price range) instead of
   * O(orders) without costing memory for the many positions with a few orders.
   */
  declare bidLevels: Float64Array | null;
  declare askLevels: Float64Array | null;

  /**
   * Returns an object literal given this prototype instead of the `this` that `new` made. Why:
   * positions live as long as the engine (an account that touched a market keeps its state), and
   * an engine with thousands of accounts creates them at order rate. V8 can allocate an object
   * literal's site straight into the old generation once it sees that site's objects survive
   * (allocation-site pretenuring); it cannot for `new`. Allocated by `new`, every position was
   * copied twice by the young-generation collector: in the engine bench that copying was two
   * thirds of what survived each scavenge, and the scavenges took a fifth of the run on a loaded
   * machine. All instances share one hidden class (the prototype transition is cached).
   */
  constructor(account: AccountState, marketId: string) {
    const state = {
      account,
      marketId,
      yes: 0,
      no: 0,
      yesCost: 0,
      noCost: 0,
      realizedPnl: 0,
      bidTotal: 0,
      bidNotional: 0,
      askTotal: 0,
      askNotional: 0,
      reserve: 0,
      ordersHead: null,
      orderCount: 0,
      dirtyEpoch: -1,
      bidLevels: null,
      askLevels: null,
    };
    return Object.setPrototypeOf(state, PositionState.prototype) as PositionState;
  }

  linkOrder(order: BookOrder): void {
    order.ownerPrev = null;
    order.ownerNext = this.ordersHead;
    if (this.ordersHead !== null) this.ordersHead.ownerPrev = order;
    this.ordersHead = order;
    this.orderCount++;
  }

  unlinkOrder(order: BookOrder): void {
    if (order.ownerPrev === null) this.ordersHead = order.ownerNext;
    else order.ownerPrev.ownerNext = order.ownerNext;
    if (order.ownerNext !== null) order.ownerNext.ownerPrev = order.ownerPrev;
    order.ownerPrev = null;
    order.ownerNext = null;
    this.orderCount--;
    if (this.orderCount === 0) {
      this.bidLevels = null;
      this.askLevels = null;
    }
  }

  /** Adds (or with a negative qty removes) resting quantity at a YES price. */
  addResting(side: BookSide, price: number, qty: number): void {
    if (side === 'BID') {
      this.bidTotal += qty;
      this.bidNotional += price * qty;
      if (this.bidLevels !== null) this.bidLevels[price] += qty;
    } else {
      this.askTotal += qty;
      this.askNotional += (100 - price) * qty;
      if (this.askLevels !== null) this.askLevels[price] += qty;
    }
  }

  clearResting(): void {
    this.bidTotal = 0;
    this.bidNotional = 0;
    this.askTotal = 0;
    this.askNotional = 0;
    this.bidLevels = null;
    this.askLevels = null;
  }

  /** Builds the per-price arrays from the order list (once, when the list grows long). */
  buildLevels(): void {
    const bids = new Float64Array(101);
    const asks = new Float64Array(101);
    for (let o = this.ordersHead; o !== null; o = o.ownerNext) {
      const levels = o.bookSide === 'BID' ? bids : asks;
      levels[o.bookPrice] += o.quantity - o.filledQuantity;
    }
    this.bidLevels = bids;
    this.askLevels = asks;
  }

  snapshot(): PositionSnapshot {
    return {
      accountId: this.account.id,
      marketId: this.marketId,
      yes: this.yes,
      no: this.no,
      yesCost: this.yesCost,
      noCost: this.noCost,
      realizedPnl: this.realizedPnl,
      yesAveragePrice: this.yes === 0 ? null : this.yesCost / this.yes,
      noAveragePrice: this.no === 0 ? null : this.noCost / this.no,
      reserved: this.reserve,
      openOrders: this.orderCount,
    };
  }
}

/** Scratch per-price quantities for {@link walkReserve}; always left zeroed. */
const scratch = new Float64Array(101);

/** Above this many resting orders a position keeps per-price arrays (see PositionState). */
export const LEVELS_THRESHOLD = 32;

/** The reserve walk over per-price arrays: the skipped order's totals are already removed. */
function walkLevels(
  levels: Float64Array,
  side: BookSide,
  k: number,
  extraPrice: number,
  extraQty: number,
): number {
  let sum = 0;
  if (side === 'BID') {
    for (let p = 99; p >= 1 && k > 0; p--) {
      const q = levels[p] + (p === extraPrice ? extraQty : 0);
      const t = q < k ? q : k;
      sum += p * t;
      k -= t;
    }
  } else {
    for (let p = 1; p <= 99 && k > 0; p++) {
      const q = levels[p] + (p === extraPrice ? extraQty : 0);
      const t = q < k ? q : k;
      sum += (100 - p) * t;
      k -= t;
    }
  }
  return sum;
}

/**
 * Sum of the worst-case cost of the `k` most expensive resting contracts of one side (bids: the
 * highest prices, cost = price; asks: the lowest prices, cost = 100 - price), from the position's
 * order list plus an optional extra order, skipping `skip`. O(orders + price range).
 */
function walkReserve(
  ps: PositionState,
  side: BookSide,
  k: number,
  extraPrice: number,
  extraQty: number,
  skip: BookOrder | null,
): number {
  if (ps.orderCount > LEVELS_THRESHOLD) {
    if (ps.bidLevels === null || ps.askLevels === null) {
      // Built from the list, which still holds `skip` at its full remainder: take it out again.
      ps.buildLevels();
      if (skip !== null) {
        const levels = skip.bookSide === 'BID' ? ps.bidLevels! : ps.askLevels!;
        levels[skip.bookPrice] -= skip.quantity - skip.filledQuantity;
      }
    }
    return walkLevels(
      side === 'BID' ? ps.bidLevels! : ps.askLevels!,
      side,
      k,
      extraPrice,
      extraQty,
    );
  }
  let lo = 100;
  let hi = 0;
  if (extraQty > 0) {
    scratch[extraPrice] += extraQty;
    lo = hi = extraPrice;
  }
  for (let o = ps.ordersHead; o !== null; o = o.ownerNext) {
    if (o.bookSide !== side || o === skip) continue;
    const p = o.bookPrice;
    scratch[p] += o.quantity - o.filledQuantity;
    if (p < lo) lo = p;
    if (p > hi) hi = p;
  }
  let sum = 0;
  if (side === 'BID') {
    for (let p = hi; p >= lo && k > 0; p--) {
      const q = scratch[p];
      const t = q < k ? q : k;
      sum += p * t;
      k -= t;
    }
  } else {
    for (let p = lo; p <= hi && k > 0; p++) {
      const q = scratch[p];
      const t = q < k ? q : k;
      sum += (100 - p) * t;
      k -= t;
    }
  }
  for (let p = lo; p <= hi; p++) scratch[p] = 0;
  return sum;
}

/**
 * Worst-case cash the position's resting orders could still need, given holdings yes/no and an
 * optional extra order (side, price, qty) that is not resting yet; `skip` is a resting order to
 * leave out (an order being amended, whose totals the caller already removed). Bids beyond the
 * NO holding open YES at their price (the highest prices are the worst case); asks beyond the
 * YES holding open NO at 100 - price (the lowest prices are the worst case). Without a holding
 * on the closing side every contract counts, so the notional totals answer in O(1).
 */
export function computeReserve(
  ps: PositionState,
  yes: number,
  no: number,
  extraSide: BookSide | null,
  extraPrice: number,
  extraQty: number,
  skip: BookOrder | null = null,
): number {
  const extraBid = extraSide === 'BID' ? extraQty : 0;
  const extraAsk = extraSide === 'ASK' ? extraQty : 0;
  let sum = 0;
  let k = ps.bidTotal + extraBid - no;
  if (k > 0) {
    sum +=
      no === 0
        ? ps.bidNotional + extraPrice * extraBid
        : walkReserve(ps, 'BID', k, extraPrice, extraBid, skip);
  }
  k = ps.askTotal + extraAsk - yes;
  if (k > 0) {
    sum +=
      yes === 0
        ? ps.askNotional + (100 - extraPrice) * extraAsk
        : walkReserve(ps, 'ASK', k, extraPrice, extraAsk, skip);
  }
  return sum;
}

/** Recomputes the stored reserve and keeps the account total in step. */
export function refreshReserve(ps: PositionState): void {
  const r = computeReserve(ps, ps.yes, ps.no, null, 0, 0);
  ps.account.reserved += r - ps.reserve;
  ps.reserve = r;
}

/**
 * Applies one fill side to a position and its account balance, netting first: a bid-side fill
 * closes NO before opening YES, an ask-side fill closes YES before opening NO. Cost basis leaves
 * pro rata (floored, the whole cost when the holding closes fully). Returns the cash delta.
 */
export function applyFill(ps: PositionState, side: BookSide, price: number, qty: number): number {
  let cash: number;
  if (side === 'BID') {
    const held = ps.no;
    const c = qty < held ? qty : held;
    const open = qty - c;
    cash = (100 - price) * c - price * open;
    if (c > 0) {
      const basis = c === held ? ps.noCost : Math.floor((ps.noCost * c) / held);
      ps.noCost -= basis;
      ps.no = held - c;
      ps.realizedPnl += (100 - price) * c - basis;
    }
    if (open > 0) {
      ps.yes += open;
      ps.yesCost += price * open;
    }
  } else {
    const held = ps.yes;
    const c = qty < held ? qty : held;
    const open = qty - c;
    cash = price * c - (100 - price) * open;
    if (c > 0) {
      const basis = c === held ? ps.yesCost : Math.floor((ps.yesCost * c) / held);
      ps.yesCost -= basis;
      ps.yes = held - c;
      ps.realizedPnl += price * c - basis;
    }
    if (open > 0) {
      ps.no += open;
      ps.noCost += (100 - price) * open;
    }
  }
  ps.account.balance += cash;
  return cash;
}
