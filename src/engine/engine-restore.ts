/**
 * Crash recovery: the service reloads accounts, markets, positions and resting orders from its
 * store. Restores emit no events and never match; call {@link EngineRestore.completeRestore}
 * once everything is loaded.
 */
import type { EngineAdmin } from './engine-admin.js';
import type { EngineLedger } from './engine-ledger.js';
import { fail, isPrice, type MarketState } from './engine-state.js';
import { refreshReserve } from './ledger.js';
import { bookPriceOf, bookSideOf } from './order.js';
import type { OrderRegistry } from './order-registry.js';
import {
  DEFAULT_SELF_TRADE_PREVENTION,
  isSelfTradePrevention,
  type SelfTradePrevention,
} from './self-trade.js';
import { MAX_ORDER_QUANTITY, type Action, type Result, type Side } from './types.js';

/** A resting order as persisted (LIMIT GTC; remaining = quantity - filledQuantity > 0). */
export interface RestoreOrderInput {
  id: string;
  accountId: string;
  marketId: string;
  tag?: string | null;
  clientOrderId?: string | null;
  action: Action;
  side: Side;
  /** Own-terms price, 1..99. */
  price: number;
  quantity: number;
  filledQuantity: number;
  fillCost?: number;
  postOnly?: boolean;
  /** Default CANCEL_TAKER (rows from before the field existed). */
  selfTradePrevention?: SelfTradePrevention;
  createdAt: number;
  updatedAt?: number;
  /** Time priority within the level; the engine continues numbering above the largest seen. */
  sequence: number;
}

/** A persisted position. */
export interface RestorePositionInput {
  yes: number;
  no: number;
  yesCost?: number;
  noCost?: number;
  realizedPnl?: number;
}

const isCount = (n: unknown): n is number =>
  typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

export class EngineRestore {
  constructor(
    private readonly markets: Map<string, MarketState>,
    private readonly ledger: EngineLedger,
    private readonly orders: OrderRegistry,
    private readonly admin: EngineAdmin,
  ) {}

  /** Creates an account with a balance, without a DEPOSIT. Codes: DUPLICATE_ACCOUNT, INVALID_AMOUNT. */
  restoreAccount(accountId: string, balance: number): Result {
    if (this.ledger.accounts.has(accountId)) return fail('DUPLICATE_ACCOUNT', accountId);
    if (!isCount(balance)) return fail('INVALID_AMOUNT', 'balance must be >= 0');
    const r = this.admin.createAccount(accountId);
    if (!r.ok) return r;
    this.ledger.accounts.get(accountId)!.balance = balance;
    return { ok: true, events: [] };
  }

  /**
   * Sets a position (replacing any). Codes: UNKNOWN_ACCOUNT, UNKNOWN_MARKET, INVALID_STATE
   * (negative or both sides held, or a resolved market).
   */
  restorePosition(accountId: string, marketId: string, input: RestorePositionInput): Result {
    const account = this.ledger.accounts.get(accountId);
    if (account === undefined) return fail('UNKNOWN_ACCOUNT', accountId);
    const market = this.markets.get(marketId);
    if (market === undefined) return fail('UNKNOWN_MARKET', marketId);
    const { yes, no } = input;
    const yesCost = input.yesCost ?? 0;
    const noCost = input.noCost ?? 0;
    const realized = input.realizedPnl ?? 0;
    if (!isCount(yes) || !isCount(no) || (yes > 0 && no > 0) || market.status === 'RESOLVED') {
      return fail('INVALID_STATE', 'yes/no must be >= 0, not both > 0, market unresolved');
    }
    if (!isCount(yesCost) || !isCount(noCost) || !Number.isSafeInteger(realized)) {
      return fail('INVALID_STATE', 'costs must be non-negative integers');
    }
    const ps = this.ledger.positionOf(account, market);
    ps.yes = yes;
    ps.no = no;
    ps.yesCost = yesCost;
    ps.noCost = noCost;
    ps.realizedPnl = realized;
    refreshReserve(ps);
    return { ok: true, events: [] };
  }

  /**
   * Rests an order WITHOUT matching, placed by `sequence` inside its level. Codes:
   * UNKNOWN_ACCOUNT, UNKNOWN_MARKET, DUPLICATE_ORDER, INVALID_ORDER, INVALID_STATE (it would
   * cross the book, or the market is resolved).
   */
  restoreOrder(input: RestoreOrderInput): Result {
    const account = this.ledger.accounts.get(input.accountId);
    if (account === undefined) return fail('UNKNOWN_ACCOUNT', input.accountId);
    const market = this.markets.get(input.marketId);
    if (market === undefined) return fail('UNKNOWN_MARKET', input.marketId);
    if (market.status === 'RESOLVED') return fail('INVALID_STATE', 'market resolved');
    if (this.orders.find(input.id) !== undefined) return fail('DUPLICATE_ORDER', input.id);
    const { quantity, filledQuantity } = input;
    if (
      !isPrice(input.price) ||
      !isCount(quantity) ||
      quantity > MAX_ORDER_QUANTITY ||
      !isCount(filledQuantity) ||
      filledQuantity >= quantity ||
      !isCount(input.sequence) ||
      (input.action !== 'BUY' && input.action !== 'SELL') ||
      (input.side !== 'YES' && input.side !== 'NO') ||
      (input.selfTradePrevention !== undefined && !isSelfTradePrevention(input.selfTradePrevention))
    ) {
      return fail('INVALID_ORDER', 'bad price, quantity, filled quantity or sequence');
    }
    const bookSide = bookSideOf(input.action, input.side);
    const bookPrice = bookPriceOf(input.side, input.price);
    if (market.book.crosses(bookSide, bookPrice)) {
      return fail('INVALID_STATE', 'restoring this order would cross the book');
    }
    const order = this.orders
      .newOrder()
      .init(
        input.id,
        this.ledger.positionOf(account, market),
        input.tag ?? null,
        input.clientOrderId ?? null,
        input.action,
        input.side,
        'LIMIT',
        input.price,
        bookSide,
        bookPrice,
        quantity,
        'GTC',
        input.postOnly ?? false,
        input.createdAt,
        input.sequence,
      );
    order.selfTradePrevention = input.selfTradePrevention ?? DEFAULT_SELF_TRADE_PREVENTION;
    order.filledQuantity = filledQuantity;
    order.fillCost = input.fillCost ?? 0;
    order.status = filledQuantity > 0 ? 'PARTIALLY_FILLED' : 'OPEN';
    order.updatedAt = input.updatedAt ?? input.createdAt;
    market.book.insertBySequence(order);
    order.owner.linkOrder(order);
    order.owner.addResting(bookSide, bookPrice, order.remaining);
    this.orders.index(order);
    this.orders.observeSequence(input.sequence);
    refreshReserve(order.owner);
    return { ok: true, events: [] };
  }

  /**
   * Ends a restore: recomputes every reservation, derives orphan counts from the restored
   * positions and takes the restored money as the opening balance of the conservation ledger.
   * Returns the accounts whose balance is below their reservation (restored data that breaks
   * the funding rule; they can still cancel but not add risk).
   */
  completeRestore(): Result<{ underfundedAccounts: string[] }> {
    let money = 0;
    for (const account of this.ledger.accounts.values()) {
      for (const ps of account.positions) refreshReserve(ps);
      money += account.balance;
    }
    for (const market of this.markets.values()) {
      let yes = 0;
      let no = 0;
      for (const ps of market.positions) {
        yes += ps.yes;
        no += ps.no;
      }
      market.orphanYes = yes < no ? no - yes : 0;
      market.orphanNo = no < yes ? yes - no : 0;
      money += 100 * (yes + market.orphanYes);
    }
    this.ledger.adjusted = money - this.ledger.deposited + this.ledger.withdrawn;
    const underfundedAccounts: string[] = [];
    for (const a of this.ledger.accounts.values()) {
      if (a.balance < a.reserved) underfundedAccounts.push(a.id);
    }
    return { ok: true, events: [], underfundedAccounts };
  }
}
