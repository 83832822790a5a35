/**
 * Read-only queries of the engine. Every read returns fresh plain objects (snapshots), so callers
 * can keep them without seeing later changes.
 */
import type { EngineLedger, LedgerTotals } from './engine-ledger.js';
import { fail, type MarketState } from './engine-state.js';
import { NO_ASK, NO_BID } from './order-book.js';
import { bookPriceOf, bookSideOf } from './order.js';
import type { OrderRegistry } from './order-registry.js';
import { orderProblem } from './order-shape.js';
import {
  DEFAULT_SELF_TRADE_PREVENTION,
  ownRestingLevels,
  selfTradeFillable,
} from './self-trade.js';
import { newWalkResult, walkBook } from './walk.js';
import type {
  AccountSnapshot,
  Depth,
  DepthLevel,
  MarketSummary,
  OrderSnapshot,
  PositionSnapshot,
  Quote,
  QuoteRequest,
  Result,
  Side,
} from './types.js';

export type { LedgerTotals } from './engine-ledger.js';

export class EngineQueries {
  constructor(
    private readonly markets: Map<string, MarketState>,
    private readonly ledger: EngineLedger,
    private readonly orders: OrderRegistry,
  ) {}

  /** An open order, or a final one still within the retention window. */
  getOrder(orderId: string): OrderSnapshot | undefined {
    return this.orders.find(orderId)?.snapshot();
  }

  /** The account's resting orders (optionally in one market), newest first per market. */
  openOrders(accountId: string, marketId?: string): OrderSnapshot[] {
    const account = this.ledger.accounts.get(accountId);
    const out: OrderSnapshot[] = [];
    if (account === undefined) return out;
    for (const ps of account.positions) {
      if (marketId !== undefined && ps.marketId !== marketId) continue;
      for (let o = ps.ordersHead; o !== null; o = o.ownerNext) out.push(o.snapshot());
    }
    return out;
  }

  /** Every resting order of a market in priority order: bids best first, then asks best first. */
  bookOrders(marketId: string): OrderSnapshot[] {
    const market = this.markets.get(marketId);
    const out: OrderSnapshot[] = [];
    if (market === undefined) return out;
    for (const o of market.book.orders()) out.push(o.snapshot());
    return out;
  }

  /** Aggregated book, YES terms, at most `levels` levels per side, best first. */
  depth(marketId: string, levels = 10): Depth | undefined {
    const market = this.markets.get(marketId);
    if (market === undefined) return undefined;
    return {
      marketId,
      bids: market.book.depth('BID', levels),
      asks: market.book.depth('ASK', levels),
    };
  }

  /** Best bid/ask, last price, volume and status of a market. */
  marketSummary(marketId: string): MarketSummary | undefined {
    const m = this.markets.get(marketId);
    if (m === undefined) return undefined;
    return {
      marketId,
      status: m.status,
      outcome: m.outcome,
      bestBid: m.book.bestBid === NO_BID ? null : m.book.bestBid,
      bestAsk: m.book.bestAsk === NO_ASK ? null : m.book.bestAsk,
      lastPrice: m.lastPrice === 0 ? null : m.lastPrice,
      volume: m.volume,
      orphanYes: m.orphanYes,
      orphanNo: m.orphanNo,
    };
  }

  /** Ids of all markets, in creation order. */
  marketIds(): string[] {
    return [...this.markets.keys()];
  }

  /** Ids of all accounts, in creation order. */
  accountIds(): string[] {
    return [...this.ledger.accounts.keys()];
  }

  /** Balance, reservation and available cash of an account. */
  getAccount(accountId: string): AccountSnapshot | undefined {
    const a = this.ledger.accounts.get(accountId);
    if (a === undefined) return undefined;
    return {
      accountId,
      balance: a.balance,
      reserved: a.reserved,
      available: a.balance - a.reserved,
    };
  }

  /** Balance in cents, or undefined for an unknown account. */
  balance(accountId: string): number | undefined {
    return this.ledger.accounts.get(accountId)?.balance;
  }

  /** Worst-case cash reserved by resting orders. */
  reserved(accountId: string): number | undefined {
    return this.ledger.accounts.get(accountId)?.reserved;
  }

  /** balance - reserved: what new orders and withdrawals may use. */
  available(accountId: string): number | undefined {
    const a = this.ledger.accounts.get(accountId);
    return a === undefined ? undefined : a.balance - a.reserved;
  }

  /** Position of an account in a market; a flat snapshot if it never traded there. */
  position(accountId: string, marketId: string): PositionSnapshot | undefined {
    const a = this.ledger.accounts.get(accountId);
    if (a === undefined) return undefined;
    const market = this.markets.get(marketId);
    const ps = market === undefined ? undefined : this.ledger.position(a, market);
    if (ps !== undefined) return ps.snapshot();
    return {
      accountId,
      marketId,
      yes: 0,
      no: 0,
      yesCost: 0,
      noCost: 0,
      realizedPnl: 0,
      yesAveragePrice: null,
      noAveragePrice: null,
      reserved: 0,
      openOrders: 0,
    };
  }

  /** Every market the account ever touched (flat ones included, for realized P&L). */
  positions(accountId: string): PositionSnapshot[] {
    const a = this.ledger.accounts.get(accountId);
    if (a === undefined) return [];
    const out: PositionSnapshot[] = [];
    for (const ps of a.positions) out.push(ps.snapshot());
    return out;
  }

  /** Every position state of a market (all accounts that touched it). */
  marketPositions(marketId: string): PositionSnapshot[] {
    const m = this.markets.get(marketId);
    const out: PositionSnapshot[] = [];
    if (m !== undefined) for (const ps of m.positions) out.push(ps.snapshot());
    return out;
  }

  /** Money that entered/left from outside; see the conservation invariant. */
  ledgerTotals(): LedgerTotals {
    return this.ledger.totals();
  }

  /** Number of resting orders across all markets. */
  openOrderCount(): number {
    let n = 0;
    for (const m of this.markets.values()) {
      n += m.book.size();
    }
    return n;
  }

  /**
   * What the order would fill right now, without changing anything: FOK that cannot fill
   * completely quotes zero; post-only that would cross quotes POST_ONLY_WOULD_CROSS. An
   * `accountId` with no account yet quotes as a flat position. Codes: INVALID_ORDER,
   * UNKNOWN_MARKET, MARKET_NOT_OPEN, POST_ONLY_WOULD_CROSS.
   */
  quote(req: QuoteRequest): Result<{ quote: Quote }> {
    const problem = orderProblem(req);
    if (problem !== null) return fail('INVALID_ORDER', problem);
    const market = this.markets.get(req.marketId);
    if (market === undefined) return fail('UNKNOWN_MARKET', req.marketId);
    if (market.status !== 'OPEN') return fail('MARKET_NOT_OPEN', market.status);
    // No account (yet), or none in this market: a flat position.
    const account =
      req.accountId === undefined ? undefined : this.ledger.accounts.get(req.accountId);
    const ps = account === undefined ? undefined : this.ledger.position(account, market);
    const side = bookSideOf(req.action, req.side);
    const limit =
      req.type === 'LIMIT' ? bookPriceOf(req.side, req.price!) : side === 'BID' ? 99 : 1;
    if (req.postOnly === true && market.book.crosses(side, limit)) {
      return fail('POST_ONLY_WOULD_CROSS', 'post-only order would take liquidity');
    }
    const levels: DepthLevel[] = [];
    // As the order would fill: never against the account's own orders (self-trade prevention).
    const mine = ownRestingLevels(ps, side === 'BID' ? 'ASK' : 'BID');
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
