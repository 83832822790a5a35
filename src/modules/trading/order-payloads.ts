/**
 * The API bodies of an order's progress, shared by the realtime `orders` channel and the
 * developer webhooks, so both describe the same committed event with the same fields.
 */
import type {
  OrderCancelledEvent,
  OrderExpiredEvent,
  OrderUpdatedEvent,
} from '../../engine/index.js';
import { apiCancelReason } from './cancel-reason.js';

export function orderProgressPayload(e: OrderUpdatedEvent) {
  return {
    order_id: e.orderId,
    status: e.status,
    filled_quantity: e.filledQuantity,
    remaining_quantity: e.remainingQuantity,
    average_fill_price: e.averageFillPrice,
  };
}

export function orderCancelledPayload(e: OrderCancelledEvent) {
  return {
    order_id: e.orderId,
    status: 'CANCELLED' as const,
    cancel_reason: apiCancelReason(e.reason),
    filled_quantity: e.filledQuantity,
  };
}

export function orderExpiredPayload(e: OrderExpiredEvent) {
  return {
    order_id: e.orderId,
    status: 'EXPIRED' as const,
    cancel_reason: e.reason,
    filled_quantity: e.filledQuantity,
  };
}
