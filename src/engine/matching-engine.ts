/**
 * The matching engine: one YES-terms price-time-priority book per binary market, netted
 * positions, worst-case reservations, and command results with ordered events.
 *
 * A façade over collaborators that share plain state (the markets map, the {@link EngineLedger},
 * the {@link OrderRegistry} and the quote {@link HoldBook}):
 * - {@link Matcher}: where an incoming order meets resting makers (self-trade prevention decides
 *   there), plus resting, lifting and ending orders;
 * - {@link OrderEntry}: placeOrder and amendOrder; {@link OrderCancels}: the cancels;
 * - {@link EngineAdmin}: accounts and funding, markets, resolution, account reset;
 * - {@link EngineRestore}: crash recovery; {@link EngineRfq}: quote holds and the quote cross;
 * - {@link EngineQueries}: reads and quotes.
 *
 * Self-trade is PREVENTED: an account's taker order never trades with its own resting orders;
 * the taker's `SelfTradePrevention` mode says which side is cancelled (see self-trade.ts).
 */
import { EngineAdmin, type AddMarketOptions } from './engine-admin.js';
import { EngineLedger, type LedgerTotals } from './engine-ledger.js';
import { EngineQueries } from './engine-queries.js';
import {
  EngineRestore,
  type RestoreOrderInput,
  type RestorePositionInput,
} from './engine-restore.js';
import { EngineRfq } from './engine-rfq.js';
import type { EngineOptions, MarketState } from './engine-state.js';
import { HoldBook, type HoldSnapshot } from './holds.js';
import { Matcher } from './matcher.js';
import { OrderCancels } from './order-cancels.js';
import { OrderEntry } from './order-entry.js';
import { OrderRegistry } from './order-registry.js';
import type {
  CrossQuoteRequest,
  CrossQuoteResult,
  HoldRequest,
  RestoreHoldInput,
} from './rfq-types.js';
import type {
  AccountSnapshot,
  AmendOrderRequest,
  CancelReason,
  Depth,
  MarketStatus,
  MarketSummary,
  OrderSnapshot,
  Outcome,
  PlaceOrderRequest,
  PositionSnapshot,
  Quote,
  QuoteRequest,
  Result,
} from './types.js';

/**
 * Paper/live matching engine for binary prediction markets (framework-free, single-threaded,
 * deterministic given its {@link Clock} and {@link IdGenerator}).
 *
 * Every command returns a {@link Result}: `{ ok: true, events, ... }` or
 * `{ ok: false, code, message }` with nothing changed; business failures never throw. Events are
 * emitted in order and suffice to mirror the state in SQL (see `events.ts`). Each method's codes
 * and rules are documented on the collaborator that implements it.
 */
export class MatchingEngine {
  private readonly entry: OrderEntry;
  private readonly cancels: OrderCancels;
  private readonly admin: EngineAdmin;
  private readonly restore: EngineRestore;
  private readonly rfq: EngineRfq;
  private readonly queries: EngineQueries;

  constructor(options: EngineOptions) {
    const { clock, ids } = options;
    const markets = new Map<string, MarketState>();
    const ledger = new EngineLedger();
    const orders = new OrderRegistry(options.closedOrderRetention ?? 10_000);
    const holds = new HoldBook();
    const matcher = new Matcher(ids, ledger, orders);
    this.entry = new OrderEntry(clock, ids, markets, ledger, orders, matcher);
    this.cancels = new OrderCancels(clock, markets, ledger, orders, matcher);
    this.admin = new EngineAdmin(clock, markets, ledger, orders, matcher, holds);
    this.restore = new EngineRestore(markets, ledger, orders, this.admin);
    this.rfq = new EngineRfq(clock, ids, markets, ledger, orders, holds);
    this.queries = new EngineQueries(markets, ledger, orders);
  }

  // Orders (order-entry.ts, order-cancels.ts)

  /** See {@link OrderEntry.placeOrder}. */
  placeOrder(req: PlaceOrderRequest): Result<{ order: OrderSnapshot }> {
    return this.entry.placeOrder(req);
  }

  /** See {@link OrderEntry.amendOrder}. */
  amendOrder(
    orderId: string,
    req: AmendOrderRequest,
    accountId?: string,
  ): Result<{ order: OrderSnapshot }> {
    return this.entry.amendOrder(orderId, req, accountId);
  }

  /** See {@link OrderCancels.cancelOrder}. */
  cancelOrder(
    orderId: string,
    accountId?: string,
    reason: CancelReason = 'USER',
  ): Result<{ order: OrderSnapshot }> {
    return this.cancels.cancelOrder(orderId, accountId, reason);
  }

  /** See {@link OrderCancels.cancelAll}. */
  cancelAll(accountId: string, marketId?: string): Result<{ cancelled: number }> {
    return this.cancels.cancelAll(accountId, marketId);
  }

  /** See {@link OrderCancels.cancelByTag}. */
  cancelByTag(
    accountId: string,
    match: string | ((tag: string | null) => boolean),
    marketId?: string,
  ): Result<{ cancelled: number }> {
    return this.cancels.cancelByTag(accountId, match, marketId);
  }

  /** See {@link EngineQueries.quote}. */
  quote(req: QuoteRequest): Result<{ quote: Quote }> {
    return this.queries.quote(req);
  }

  // Accounts and markets (engine-admin.ts)

  /** See {@link EngineAdmin.createAccount}. */
  createAccount(accountId: string, initialDeposit = 0): Result<{ account: AccountSnapshot }> {
    return this.admin.createAccount(accountId, initialDeposit);
  }

  /** See {@link EngineAdmin.deposit}. */
  deposit(
    accountId: string,
    amount: number,
    referenceId: string | null = null,
  ): Result<{ account: AccountSnapshot }> {
    return this.admin.deposit(accountId, amount, referenceId);
  }

  /** See {@link EngineAdmin.withdraw}. */
  withdraw(
    accountId: string,
    amount: number,
    referenceId: string | null = null,
  ): Result<{ account: AccountSnapshot }> {
    return this.admin.withdraw(accountId, amount, referenceId);
  }

  /** See {@link EngineAdmin.resetAccount}. */
  resetAccount(accountId: string, startingBalance: number): Result<{ account: AccountSnapshot }> {
    return this.admin.resetAccount(accountId, startingBalance);
  }

  /** See {@link EngineAdmin.addMarket}. */
  addMarket(marketId: string, options: AddMarketOptions = {}): Result {
    return this.admin.addMarket(marketId, options);
  }

  /** See {@link EngineAdmin.setMarketStatus}. */
  setMarketStatus(marketId: string, status: Exclude<MarketStatus, 'RESOLVED'>): Result {
    return this.admin.setMarketStatus(marketId, status);
  }

  /** See {@link EngineAdmin.resolveMarket}. */
  resolveMarket(marketId: string, outcome: Outcome): Result {
    return this.admin.resolveMarket(marketId, outcome);
  }

  // Restore (engine-restore.ts)

  /** See {@link EngineRestore.restoreAccount}. */
  restoreAccount(accountId: string, balance: number): Result {
    return this.restore.restoreAccount(accountId, balance);
  }

  /** See {@link EngineRestore.restorePosition}. */
  restorePosition(accountId: string, marketId: string, input: RestorePositionInput): Result {
    return this.restore.restorePosition(accountId, marketId, input);
  }

  /** See {@link EngineRestore.restoreOrder}. */
  restoreOrder(input: RestoreOrderInput): Result {
    return this.restore.restoreOrder(input);
  }

  /** See {@link EngineRfq.restoreHold}. */
  restoreHold(input: RestoreHoldInput): Result {
    return this.rfq.restoreHold(input);
  }

  /** See {@link EngineRestore.completeRestore}. */
  completeRestore(): Result<{ underfundedAccounts: string[] }> {
    return this.restore.completeRestore();
  }

  // Request for quote (engine-rfq.ts)

  /** See {@link EngineRfq.placeHold}. */
  placeHold(req: HoldRequest): Result<{ hold: HoldSnapshot }> {
    return this.rfq.placeHold(req);
  }

  /** See {@link EngineRfq.releaseHold}. */
  releaseHold(holdId: string, accountId?: string): Result<{ hold: HoldSnapshot }> {
    return this.rfq.releaseHold(holdId, accountId);
  }

  /** See {@link EngineRfq.crossQuote}. */
  crossQuote(req: CrossQuoteRequest): Result<CrossQuoteResult> {
    return this.rfq.crossQuote(req);
  }

  /** The holds of an account (or every hold), in placement order. */
  heldQuotes(accountId?: string): HoldSnapshot[] {
    return this.rfq.heldQuotes(accountId);
  }

  /** Sum of the account's quote holds, cents (part of its reserved amount). */
  held(accountId: string): number {
    return this.rfq.held(accountId);
  }

  // Reads (engine-queries.ts): fresh snapshots, safe to keep.

  /** An open order, or a final one still within the retention window. */
  getOrder(orderId: string): OrderSnapshot | undefined {
    return this.queries.getOrder(orderId);
  }

  /** The account's resting orders (optionally in one market), newest first per market. */
  openOrders(accountId: string, marketId?: string): OrderSnapshot[] {
    return this.queries.openOrders(accountId, marketId);
  }

  /** Every resting order of a market in priority order: bids best first, then asks best first. */
  bookOrders(marketId: string): OrderSnapshot[] {
    return this.queries.bookOrders(marketId);
  }

  /** Aggregated book, YES terms, at most `levels` levels per side, best first. */
  depth(marketId: string, levels = 10): Depth | undefined {
    return this.queries.depth(marketId, levels);
  }

  /** Best bid/ask, last price, volume and status of a market. */
  marketSummary(marketId: string): MarketSummary | undefined {
    return this.queries.marketSummary(marketId);
  }

  /** Ids of all markets, in creation order. */
  marketIds(): string[] {
    return this.queries.marketIds();
  }

  /** Ids of all accounts, in creation order. */
  accountIds(): string[] {
    return this.queries.accountIds();
  }

  /** Balance, reservation and available cash of an account. */
  getAccount(accountId: string): AccountSnapshot | undefined {
    return this.queries.getAccount(accountId);
  }

  /** Balance in cents, or undefined for an unknown account. */
  balance(accountId: string): number | undefined {
    return this.queries.balance(accountId);
  }

  /** Worst-case cash reserved by resting orders (and quote holds). */
  reserved(accountId: string): number | undefined {
    return this.queries.reserved(accountId);
  }

  /** balance - reserved: what new orders and withdrawals may use. */
  available(accountId: string): number | undefined {
    return this.queries.available(accountId);
  }

  /** Position of an account in a market; a flat snapshot if it never traded there. */
  position(accountId: string, marketId: string): PositionSnapshot | undefined {
    return this.queries.position(accountId, marketId);
  }

  /** Every market the account ever touched (flat ones included, for realized P&L). */
  positions(accountId: string): PositionSnapshot[] {
    return this.queries.positions(accountId);
  }

  /** Every position state of a market (all accounts that touched it). */
  marketPositions(marketId: string): PositionSnapshot[] {
    return this.queries.marketPositions(marketId);
  }

  /** Money that entered/left from outside; see the conservation invariant. */
  ledgerTotals(): LedgerTotals {
    return this.queries.ledgerTotals();
  }

  /** Number of resting orders across all markets. */
  openOrderCount(): number {
    return this.queries.openOrderCount();
  }
}
