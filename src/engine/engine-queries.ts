/**
 * Read-only queries of the engine. Every read returns fresh plain objects (snapshots), so callers
 * can keep them without seeing later changes.
 */
import { EngineCore } from './engine-core.js';
import { NO_ASK, NO_BID } from './order-book.js';
import type {
  AccountSnapshot,
  Depth,
  MarketSummary,
  OrderSnapshot,
  PositionSnapshot,
} from './types.js';

/** Totals of money that entered or left the engine from outside, integer cents. */
export interface LedgerTotals {
  readonly deposited: number;
  readonly withdrawn: number;
  /** Restored opening balances, resets and forfeited orphan payouts. */
  readonly adjusted: number;
}

export abstract class EngineQueries extends EngineCore {
  /** An open order, or a final one still within the retention window. */
  getOrder(orderId: string): OrderSnapshot | undefined {
    return this.findOrder(orderId)?.snapshot();
  }

  /** The account's resting orders (optionally in one market), newest first per market. */
  openOrders(accountId: string, marketId?: string): OrderSnapshot[] {
    const account = this.accounts.get(accountId);
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
    return [...this.accounts.keys()];
  }

  /** Balance, reservation and available cash of an account. */
  getAccount(accountId: string): AccountSnapshot | undefined {
    const a = this.accounts.get(accountId);
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
    return this.accounts.get(accountId)?.balance;
  }

  /** Worst-case cash reserved by resting orders. */
  reserved(accountId: string): number | undefined {
    return this.accounts.get(accountId)?.reserved;
  }

  /** balance - reserved: what new orders and withdrawals may use. */
  available(accountId: string): number | undefined {
    const a = this.accounts.get(accountId);
    return a === undefined ? undefined : a.balance - a.reserved;
  }

  /** Position of an account in a market; a flat snapshot if it never traded there. */
  position(accountId: string, marketId: string): PositionSnapshot | undefined {
    const a = this.accounts.get(accountId);
    if (a === undefined) return undefined;
    const ps = this.markets.get(marketId)?.positions.get(accountId);
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
    const a = this.accounts.get(accountId);
    if (a === undefined) return [];
    const out: PositionSnapshot[] = [];
    for (const ps of a.positions) out.push(ps.snapshot());
    return out;
  }

  /** Every position state of a market (all accounts that touched it). */
  marketPositions(marketId: string): PositionSnapshot[] {
    const m = this.markets.get(marketId);
    const out: PositionSnapshot[] = [];
    if (m !== undefined) for (const ps of m.positions.values()) out.push(ps.snapshot());
    return out;
  }

  /** Money that entered/left from outside; see the conservation invariant. */
  ledgerTotals(): LedgerTotals {
    return { deposited: this.deposited, withdrawn: this.withdrawn, adjusted: this.adjusted };
  }

  /** Number of resting orders across all markets. */
  openOrderCount(): number {
    let n = 0;
    for (const m of this.markets.values()) {
      n += m.book.size();
    }
    return n;
  }
}
