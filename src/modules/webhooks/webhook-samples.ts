import type { WebhookEventType } from './webhook-event-schemas.js';

/** What a sample may depend on: fresh ids (so a receiver that dedupes never drops one) and the endpoint. */
export interface SampleContext {
  id(prefix: 'ord' | 'mkt'): string;
  endpointId: string;
}

/**
 * The one registry of sample `data` per event type, as POST /webhooks/{id}/test sends them:
 * realistic values in the documented shapes (a test validates each against the published schema).
 */
export const WEBHOOK_SAMPLES: Record<WebhookEventType, (c: SampleContext) => unknown> = {
  'order.created': (c) => ({
    order: {
      id: c.id('ord'),
      client_order_id: 'sample-order-1',
      market_id: c.id('mkt'),
      action: 'BUY',
      side: 'YES',
      type: 'LIMIT',
      price: 42,
      quantity: 10,
      time_in_force: 'GTC',
      status: 'OPEN',
    },
  }),
  'order.partially_filled': (c) => ({
    order_id: c.id('ord'),
    status: 'PARTIALLY_FILLED',
    filled_quantity: 4,
    remaining_quantity: 6,
    average_fill_price: 42,
  }),
  'order.filled': (c) => ({
    order_id: c.id('ord'),
    status: 'FILLED',
    filled_quantity: 10,
    remaining_quantity: 0,
    average_fill_price: 41.6,
  }),
  'order.cancelled': (c) => ({
    order_id: c.id('ord'),
    status: 'CANCELLED',
    cancel_reason: 'USER',
    filled_quantity: 4,
  }),
  'order.expired': (c) => ({ order_id: c.id('ord'), status: 'EXPIRED', filled_quantity: 0 }),
  'market.resolved': (c) => ({ market_id: c.id('mkt'), outcome: 'YES' }),
  'position.settled': (c) => ({
    market_id: c.id('mkt'),
    outcome: 'YES',
    yes: 10,
    no: 0,
    payout_cents: 1000,
    realized_pnl_cents: 584,
  }),
  'account.reset': (c) => ({
    cancelled_orders: 3,
    balance_cents: 1_000_000,
    market_ids: [c.id('mkt'), c.id('mkt')],
  }),
  'webhook.test': (c) => ({
    endpoint_id: c.endpointId,
    message: 'Test event from the sandbox exchange',
  }),
};
