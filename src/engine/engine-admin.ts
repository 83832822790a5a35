/**
 * Account, market and lifecycle commands: money in/out, market status, resolution and account
 * reset. Restore commands are in {@link EngineRestore}.
 */
import type { EngineLedger } from './engine-ledger.js';
import { fail, isAmount, MarketState } from './engine-state.js';
import { balanceChanged } from './event-builders.js';
import type { EngineEvent } from './events.js';
import type { HoldBook } from './holds.js';
import type { Matcher } from './matcher.js';
import type { BookOrder } from './order.js';
import type { OrderRegistry } from './order-registry.js';
import type { AccountSnapshot, Clock, MarketStatus, Outcome, Result } from './types.js';

/** Optional state of a new (or restored) market. */
export interface AddMarketOptions {
  status?: Exclude<MarketStatus, 'RESOLVED'>;
  /** Restored statistics. */
  lastPrice?: number | null;
  volume?: number;
}

export class EngineAdmin {
  constructor(
    private readonly clock: Clock,
    private readonly markets: Map<string, MarketState>,
    private readonly ledger: EngineLedger,
    private readonly orders: OrderRegistry,
    private readonly matcher: Matcher,
    private readonly holds: HoldBook,
  ) {}

  /**
   * Opens an account with an id chosen by the caller (a "house" account is just an account with
   * a large balance). `initialDeposit` is booked as a DEPOSIT.
   * Codes: DUPLICATE_ACCOUNT, INVALID_AMOUNT.
   */
  createAccount(accountId: string, initialDeposit = 0): Result<{ account: AccountSnapshot }> {
    if (this.ledger.accounts.has(accountId)) return fail('DUPLICATE_ACCOUNT', accountId);
    if (initialDeposit !== 0 && !isAmount(initialDeposit)) {
      return fail('INVALID_AMOUNT', 'initial deposit must be a non-negative safe integer');
    }
    const account = this.ledger.open(accountId);
    const events: EngineEvent[] = [{ type: 'account.created', accountId, balance: 0 }];
    if (initialDeposit > 0) {
      account.balance = initialDeposit;
      this.ledger.deposited += initialDeposit;
      events.push(balanceChanged(account, initialDeposit, 'DEPOSIT', null, this.clock.now()));
    }
    return { ok: true, events, account: this.ledger.snapshot(account) };
  }

  /** Adds cash. Codes: UNKNOWN_ACCOUNT, INVALID_AMOUNT. */
  deposit(
    accountId: string,
    amount: number,
    referenceId: string | null = null,
  ): Result<{ account: AccountSnapshot }> {
    const account = this.ledger.accounts.get(accountId);
    if (account === undefined) return fail('UNKNOWN_ACCOUNT', accountId);
    if (!isAmount(amount) || !Number.isSafeInteger(account.balance + amount)) {
      return fail('INVALID_AMOUNT', 'amount must be a positive safe integer');
    }
    account.balance += amount;
    this.ledger.deposited += amount;
    const events = [balanceChanged(account, amount, 'DEPOSIT', referenceId, this.clock.now())];
    return { ok: true, events, account: this.ledger.snapshot(account) };
  }

  /** Removes cash, at most the available amount. Codes: UNKNOWN_ACCOUNT, INVALID_AMOUNT, INSUFFICIENT_FUNDS. */
  withdraw(
    accountId: string,
    amount: number,
    referenceId: string | null = null,
  ): Result<{ account: AccountSnapshot }> {
    const account = this.ledger.accounts.get(accountId);
    if (account === undefined) return fail('UNKNOWN_ACCOUNT', accountId);
    if (!isAmount(amount)) return fail('INVALID_AMOUNT', 'amount must be a positive integer');
    if (amount > account.balance - account.reserved) {
      return fail('INSUFFICIENT_FUNDS', 'withdrawal exceeds the available balance');
    }
    account.balance -= amount;
    this.ledger.withdrawn += amount;
    const events = [balanceChanged(account, -amount, 'WITHDRAWAL', referenceId, this.clock.now())];
    return { ok: true, events, account: this.ledger.snapshot(account) };
  }

  /** Creates a market (default OPEN). Codes: DUPLICATE_MARKET, INVALID_STATE. */
  addMarket(marketId: string, options: AddMarketOptions = {}): Result {
    if (this.markets.has(marketId)) return fail('DUPLICATE_MARKET', marketId);
    const status = options.status ?? 'OPEN';
    if ((status as MarketStatus) === 'RESOLVED') {
      return fail('INVALID_STATE', 'a market cannot be added resolved');
    }
    const market = new MarketState(marketId, status, this.markets.size);
    const last = options.lastPrice ?? 0;
    const volume = options.volume ?? 0;
    if (!Number.isSafeInteger(last) || last < 0 || last > 99 || !Number.isSafeInteger(volume)) {
      return fail('INVALID_STATE', 'bad lastPrice or volume');
    }
    market.lastPrice = last;
    market.volume = volume;
    this.markets.set(marketId, market);
    return { ok: true, events: [{ type: 'market.status', marketId, status }] };
  }

  /**
   * OPEN, HALTED or CLOSED. Resting orders stay (cancels keep working); only OPEN accepts new
   * orders and amends. Codes: UNKNOWN_MARKET, MARKET_ALREADY_RESOLVED, INVALID_STATE.
   */
  setMarketStatus(marketId: string, status: Exclude<MarketStatus, 'RESOLVED'>): Result {
    const market = this.markets.get(marketId);
    if (market === undefined) return fail('UNKNOWN_MARKET', marketId);
    if (market.status === 'RESOLVED') return fail('MARKET_ALREADY_RESOLVED', marketId);
    if ((status as MarketStatus) === 'RESOLVED') {
      return fail('INVALID_STATE', 'use resolveMarket');
    }
    market.status = status;
    return { ok: true, events: [{ type: 'market.status', marketId, status }] };
  }

  /**
   * Cancels every resting order (MARKET_RESOLVED), pays 100 cents per winning contract, flattens
   * every position and marks the market RESOLVED. Events: order.cancelled/book.level per order,
   * then balance.changed (SETTLEMENT, referenceId = market id) and position.settled per holder,
   * then market.resolved. Codes: UNKNOWN_MARKET, MARKET_ALREADY_RESOLVED.
   */
  resolveMarket(marketId: string, outcome: Outcome): Result {
    const market = this.markets.get(marketId);
    if (market === undefined) return fail('UNKNOWN_MARKET', marketId);
    if (market.status === 'RESOLVED') return fail('MARKET_ALREADY_RESOLVED', marketId);
    const now = this.clock.now();
    const events: EngineEvent[] = [];
    const book = market.book;
    for (let p = 1; p < 100; p++) {
      for (let o = book.head('BID', p); o !== null; o = book.head('BID', p)) {
        this.matcher.cancelResting(market, o, 'MARKET_RESOLVED', events, now);
      }
      for (let o = book.head('ASK', p); o !== null; o = book.head('ASK', p)) {
        this.matcher.cancelResting(market, o, 'MARKET_RESOLVED', events, now);
      }
    }
    for (const ps of market.positions) {
      if (ps.yes === 0 && ps.no === 0) continue;
      const won = outcome === 'YES' ? ps.yes : ps.no;
      const payout = 100 * won;
      ps.realizedPnl += payout - ps.yesCost - ps.noCost;
      const yes = ps.yes;
      const no = ps.no;
      ps.yes = 0;
      ps.no = 0;
      ps.yesCost = 0;
      ps.noCost = 0;
      if (payout > 0) {
        ps.account.balance += payout;
        events.push(balanceChanged(ps.account, payout, 'SETTLEMENT', marketId, now));
      }
      this.ledger.markDirty(ps);
      events.push({
        type: 'position.settled',
        accountId: ps.account.id,
        marketId,
        outcome,
        yes,
        no,
        payout,
        realizedPnl: ps.realizedPnl,
      });
    }
    // Contracts orphaned by account resets have no holder to pay: the money leaves the system.
    this.ledger.adjusted -= 100 * (outcome === 'YES' ? market.orphanYes : market.orphanNo);
    market.orphanYes = 0;
    market.orphanNo = 0;
    market.status = 'RESOLVED';
    market.outcome = outcome;
    this.ledger.flushDirty();
    events.push({ type: 'market.resolved', marketId, outcome, timestamp: now });
    return { ok: true, events };
  }

  /**
   * Drops all open orders and positions of the account and sets its balance, in time linear in
   * the account's orders. Emits one `account.reset` (plus one balance.changed RESET and the
   * `book.level` changes) instead of an event per order. The counterparts of dropped positions
   * are kept as market orphans (see {@link MarketSummary.orphanYes}). Reset orders are not kept
   * for getOrder. The account's quote holds are released (`hold.released`, ACCOUNT_RESET).
   * Codes: UNKNOWN_ACCOUNT, INVALID_AMOUNT.
   */
  resetAccount(accountId: string, startingBalance: number): Result<{ account: AccountSnapshot }> {
    const account = this.ledger.accounts.get(accountId);
    if (account === undefined) return fail('UNKNOWN_ACCOUNT', accountId);
    if (!Number.isSafeInteger(startingBalance) || startingBalance < 0) {
      return fail('INVALID_AMOUNT', 'starting balance must be a non-negative safe integer');
    }
    const now = this.clock.now();
    const events: EngineEvent[] = [];
    const marketIds: string[] = [];
    let cancelled = 0;
    for (const ps of account.positions) {
      const market = this.markets.get(ps.marketId)!;
      marketIds.push(market.id);
      // Levels as side * 100 + price, in first-touched order.
      const touched = new Set<number>();
      for (let o: BookOrder | null = ps.ordersHead; o !== null;) {
        const next: BookOrder | null = o.ownerNext;
        market.book.unlink(o);
        touched.add((o.bookSide === 'BID' ? 0 : 100) + o.bookPrice);
        o.status = 'CANCELLED';
        o.ownerPrev = null;
        o.ownerNext = null;
        this.orders.drop(o);
        cancelled++;
        o = next;
      }
      ps.ordersHead = null;
      ps.orderCount = 0;
      ps.clearResting();
      // One book.level per distinct level touched (at most 198 per market), not per order.
      for (const level of touched) {
        const side = level < 100 ? 'BID' : 'ASK';
        const price = level % 100;
        events.push({
          type: 'book.level',
          marketId: market.id,
          side,
          price,
          quantity: market.book.levelQuantity(side, price),
        });
      }
      market.orphanYes += ps.yes;
      market.orphanNo += ps.no;
      // Orphans on both sides are pairs nobody owns: cancel them out of the system.
      const pairs = Math.min(market.orphanYes, market.orphanNo);
      market.orphanYes -= pairs;
      market.orphanNo -= pairs;
      this.ledger.adjusted -= 100 * pairs;
      this.ledger.dropPosition(account, market);
    }
    account.positions.length = 0;
    // Its quote holds go with its orders (events first, so a mirror releases them before the reset).
    this.holds.releaseAccount(account, now, events);
    const delta = startingBalance - account.balance;
    account.balance = startingBalance;
    account.reserved = 0;
    this.ledger.adjusted += delta;
    events.push(
      {
        type: 'account.reset',
        accountId,
        balance: startingBalance,
        cancelledOrders: cancelled,
        marketIds,
        timestamp: now,
      },
      balanceChanged(account, delta, 'RESET', null, now),
    );
    return { ok: true, events, account: this.ledger.snapshot(account) };
  }
}
