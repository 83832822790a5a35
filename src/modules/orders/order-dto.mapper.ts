import type { EngineEvent, OrderSnapshot, TradeEvent } from '../../engine/index.js';
import { iso } from '../../common/clock/iso.js';
import type { Environment } from '../../common/environment.js';
import { apiCancelReason } from '../trading/cancel-reason.js';
import type { OrderRow, TradeRow } from '../trading/stores/order.store.js';
import type { FillDto, OrderDto } from './dto/order.dto.js';

/** Order statuses in which an order can still trade. */
export const OPEN_STATUSES = new Set(['OPEN', 'PARTIALLY_FILLED']);

/*
 * The order as the API shows it, from the engine's snapshot (an answer to a command) or from the
 * stored row (a read), with its fills in the order's own side terms.
 */

function ownPrice(yesPrice: number, side: 'YES' | 'NO'): number {
  return side === 'YES' ? yesPrice : 100 - yesPrice;
}

export function fillsFromEvents(o: OrderSnapshot, events: readonly EngineEvent[]): FillDto[] {
  const fills: FillDto[] = [];
  for (const e of events) {
    if (e.type !== 'trade' || (e.takerOrderId !== o.id && e.makerOrderId !== o.id)) continue;
    fills.push(tradeEventToFill(e, o));
  }
  return fills;
}

function tradeEventToFill(t: TradeEvent, o: OrderSnapshot): FillDto {
  return {
    id: t.id,
    price: ownPrice(t.price, o.side),
    yes_price: t.price,
    quantity: t.quantity,
    liquidity: t.makerOrderId === o.id ? 'MAKER' : 'TAKER',
    created_at: iso(t.timestamp),
  };
}

export function tradeToFill(t: TradeRow, orderId: string, side: 'YES' | 'NO'): FillDto {
  return {
    id: t.id,
    price: ownPrice(t.price, side),
    yes_price: t.price,
    quantity: t.quantity,
    liquidity: t.maker_order_id === orderId ? 'MAKER' : 'TAKER',
    created_at: t.created_at,
  };
}

export function toDto(o: OrderSnapshot, env: Environment, fills: FillDto[]): OrderDto {
  return {
    id: o.id,
    client_order_id: o.clientOrderId,
    market_id: o.marketId,
    action: o.action,
    side: o.side,
    type: o.type,
    rfq_id: o.rfqId,
    price: o.price,
    quantity: o.quantity,
    filled_quantity: o.filledQuantity,
    remaining_quantity: o.remainingQuantity,
    average_fill_price: o.averageFillPrice,
    filled_cost_cents: o.fillCost,
    status: o.status,
    cancel_reason: apiCancelReason(o.cancelReason),
    time_in_force: o.timeInForce,
    post_only: o.postOnly,
    self_trade_prevention: o.selfTradePrevention,
    environment: env,
    created_at: iso(o.createdAt),
    updated_at: iso(o.updatedAt),
    fills,
  };
}

export function rowToDto(r: OrderRow, env: Environment, trades: TradeRow[]): OrderDto {
  const open = OPEN_STATUSES.has(r.status);
  return {
    id: r.id,
    client_order_id: r.client_order_id,
    market_id: r.market_id,
    action: r.action,
    side: r.side,
    type: r.type,
    rfq_id: r.rfq_id,
    price: r.price,
    quantity: r.quantity,
    filled_quantity: r.filled_quantity,
    remaining_quantity: open ? r.quantity - r.filled_quantity : 0,
    average_fill_price: r.filled_quantity > 0 ? r.fill_cost / r.filled_quantity : null,
    filled_cost_cents: r.fill_cost,
    status: r.status,
    cancel_reason: apiCancelReason(r.cancel_reason),
    time_in_force: r.time_in_force,
    post_only: r.post_only === 1,
    self_trade_prevention: r.self_trade_prevention,
    environment: env,
    created_at: r.created_at,
    updated_at: r.updated_at,
    fills: trades.map((t) => tradeToFill(t, r.id, r.side)),
  };
}
