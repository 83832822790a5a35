/**
 * Cancels: one order by id, or an account's resting orders (all, or those with a tag). Allowed
 * whatever the market's status but RESOLVED (a resolved market has no resting orders).
 */
import type { EngineLedger } from './engine-ledger.js';
import { fail, type MarketState } from './engine-state.js';
import type { EngineEvent } from './events.js';
import type { Matcher } from './matcher.js';
import type { BookOrder } from './order.js';
import type { OrderRegistry } from './order-registry.js';
import type { CancelReason, Clock, OrderSnapshot, Result } from './types.js';

export class OrderCancels {
  constructor(
    private readonly clock: Clock,
    private readonly markets: Map<string, MarketState>,
    private readonly ledger: EngineLedger,
    private readonly orders: OrderRegistry,
    private readonly matcher: Matcher,
  ) {}

  /**
   * Cancels one resting order (allowed in OPEN, HALTED and CLOSED markets). `accountId`, when
   * given, must own the order. Codes: UNKNOWN_ORDER, ORDER_NOT_OPEN.
   */
  cancelOrder(
    orderId: string,
    accountId?: string,
    reason: CancelReason = 'USER',
  ): Result<{ order: OrderSnapshot }> {
    const order = this.orders.find(orderId);
    if (order === undefined || (accountId !== undefined && order.accountId !== accountId)) {
      return fail('UNKNOWN_ORDER', orderId);
    }
    if (!order.isOpen) return fail('ORDER_NOT_OPEN', `order is ${order.status}`);
    const events: EngineEvent[] = [];
    this.matcher.cancelResting(
      this.markets.get(order.marketId)!,
      order,
      reason,
      events,
      this.clock.now(),
    );
    this.ledger.flushDirty();
    return { ok: true, events, order: order.snapshot() };
  }

  /** Cancels every resting order of the account, optionally in one market. Codes: UNKNOWN_ACCOUNT, UNKNOWN_MARKET. */
  cancelAll(accountId: string, marketId?: string): Result<{ cancelled: number }> {
    return this.cancelWhere(accountId, marketId, null, 'CANCEL_ALL');
  }

  /**
   * Cancels the account's resting orders whose tag equals `match` (or satisfies it), e.g. all
   * orders of a disconnected API key. Codes: UNKNOWN_ACCOUNT, UNKNOWN_MARKET.
   */
  cancelByTag(
    accountId: string,
    match: string | ((tag: string | null) => boolean),
    marketId?: string,
  ): Result<{ cancelled: number }> {
    const test = typeof match === 'string' ? (t: string | null) => t === match : match;
    return this.cancelWhere(accountId, marketId, test, 'CANCEL_BY_TAG');
  }

  private cancelWhere(
    accountId: string,
    marketId: string | undefined,
    test: ((tag: string | null) => boolean) | null,
    reason: CancelReason,
  ): Result<{ cancelled: number }> {
    const account = this.ledger.accounts.get(accountId);
    if (account === undefined) return fail('UNKNOWN_ACCOUNT', accountId);
    if (marketId !== undefined && !this.markets.has(marketId)) {
      return fail('UNKNOWN_MARKET', marketId);
    }
    const now = this.clock.now();
    const events: EngineEvent[] = [];
    let cancelled = 0;
    for (const ps of account.positions) {
      if (marketId !== undefined && ps.marketId !== marketId) continue;
      if (ps.ordersHead === null) continue;
      const market = this.markets.get(ps.marketId)!;
      for (let o: BookOrder | null = ps.ordersHead; o !== null;) {
        const next: BookOrder | null = o.ownerNext;
        if (test === null || test(o.tag)) {
          this.matcher.cancelResting(market, o, reason, events, now);
          cancelled++;
        }
        o = next;
      }
    }
    this.ledger.flushDirty();
    return { ok: true, events, cancelled };
  }
}
