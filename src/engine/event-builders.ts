/** Builders of the events that several engine layers emit. */
import type { EngineEvent } from './events.js';
import type { AccountState, PositionState } from './ledger.js';
import type { BookOrder } from './order.js';
import type { BalanceReason, CancelReason } from './types.js';

/** order.updated with the order's current fill state. */
export function orderUpdated(order: BookOrder): EngineEvent {
  return {
    type: 'order.updated',
    orderId: order.id,
    accountId: order.accountId,
    filledQuantity: order.filledQuantity,
    remainingQuantity: order.isOpen ? order.remaining : 0,
    status: order.status,
    fillCost: order.fillCost,
    averageFillPrice: order.averageFillPrice(),
    updatedAt: order.updatedAt,
  };
}

/**
 * order.cancelled of an order just ended (its status, reason and updatedAt already set), resting
 * or a taker's remainder alike; `dropped` is the remainder it had before.
 */
export function orderCancelled(
  order: BookOrder,
  reason: CancelReason,
  dropped: number,
): EngineEvent {
  return {
    type: 'order.cancelled',
    orderId: order.id,
    accountId: order.accountId,
    reason,
    filledQuantity: order.filledQuantity,
    cancelledQuantity: dropped,
    updatedAt: order.updatedAt,
  };
}

/** position.changed with the position's current holdings. */
export function positionChanged(ps: PositionState): EngineEvent {
  return {
    type: 'position.changed',
    accountId: ps.account.id,
    marketId: ps.marketId,
    yes: ps.yes,
    no: ps.no,
    yesCost: ps.yesCost,
    noCost: ps.noCost,
    realizedPnl: ps.realizedPnl,
  };
}

/** balance.changed; `account.balance` must already include `delta`. */
export function balanceChanged(
  account: AccountState,
  delta: number,
  reason: BalanceReason,
  referenceId: string | null,
  now: number,
): EngineEvent {
  return {
    type: 'balance.changed',
    accountId: account.id,
    delta,
    balance: account.balance,
    reason,
    referenceId,
    timestamp: now,
  };
}
