import type { WebhookEventType } from './webhook-event-schemas.js';

/**
 * What a sample may depend on: fresh ids (so a receiver that dedupes never drops one), the
 * endpoint, and the service clock's now (epoch ms) so its times read as recent.
 */
export interface SampleContext {
  id(prefix: 'ord' | 'mkt' | 'rfq' | 'quo' | 'fil' | 'dex'): string;
  endpointId: string;
  now: number;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const SECOND = 1000;

/** An open RFQ for 500 contracts (asked 40 s ago) and a fresh quote on it, bid 41 ask 44. */
function rfqAndQuote(c: SampleContext) {
  const asked = c.now - 40 * SECOND;
  const quoted = c.now - 5 * SECOND;
  const rfq = {
    id: c.id('rfq'),
    market_id: c.id('mkt'),
    quantity: 500,
    status: 'OPEN',
    expires_at: iso(asked + 300 * SECOND),
    accepted_quote_id: null,
    trade_id: null,
    created_at: iso(asked),
    environment: 'test',
  };
  const quote = {
    id: c.id('quo'),
    rfq_id: rfq.id,
    bid: 41,
    ask: 44,
    quantity: rfq.quantity,
    status: 'OPEN',
    expires_at: iso(quoted + 30 * SECOND),
    created_at: iso(quoted),
    environment: 'test',
  };
  return { rfq, quote };
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
      self_trade_prevention: 'CANCEL_TAKER',
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
  'order.expired': (c) => ({
    order_id: c.id('ord'),
    status: 'EXPIRED',
    cancel_reason: 'FOK_UNFILLABLE',
    filled_quantity: 0,
  }),
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
  'rfq.quote_received': (c) => {
    const { rfq, quote } = rfqAndQuote(c);
    return { rfq_id: rfq.id, market_id: rfq.market_id, quote };
  },
  // The requester's copy; the responder's is {rfq_id, market_id, quote, trade} (the schema's oneOf).
  'rfq.quote_accepted': (c) => {
    const { rfq, quote } = rfqAndQuote(c);
    const trade = {
      id: c.id('fil'),
      market_id: rfq.market_id,
      price: 44,
      no_price: 56,
      quantity: rfq.quantity,
      taker_side: 'YES',
      source: 'RFQ',
      created_at: iso(c.now),
    };
    return {
      rfq: { ...rfq, status: 'FILLED', accepted_quote_id: quote.id, trade_id: trade.id },
      quote: { ...quote, status: 'ACCEPTED' },
      trade,
    };
  },
  'rfq.expired': (c) => {
    const created = c.now - 300 * SECOND;
    return {
      rfq: {
        id: c.id('rfq'),
        market_id: c.id('mkt'),
        quantity: 500,
        status: 'EXPIRED',
        expires_at: iso(c.now),
        accepted_quote_id: null,
        trade_id: null,
        created_at: iso(created),
        environment: 'test',
      },
    };
  },
  'data_export.ready': (c) => ({
    export_id: c.id('dex'),
    dataset: 'TRADES',
    format: 'CSV',
    record_count: 12_840,
    size_bytes: 1_093_412,
    sha256: '9f2c4e1a7b3d5f60c8e2a4b6d8f0e1c3a5b7d9f1e3c5a7b9d1f3e5c7a9b1d3f5',
    expires_at: iso(c.now + 7 * 24 * 3600 * SECOND),
    status: 'READY',
    ready_at: iso(c.now),
  }),
  'webhook.test': (c) => ({
    endpoint_id: c.endpointId,
    message: 'Test event from the sandbox exchange',
  }),
};
