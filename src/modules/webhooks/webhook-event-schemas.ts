import { DATASETS, EXPORT_FORMATS } from '../data-exports/datasets.js';
import type { WEBHOOK_EVENT_TYPES } from './webhook-outbox.service.js';
import { SCHEMA_VERSION } from './webhooks.core.js';

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * JSON Schemas (OpenAPI 3.1 / 2020-12) of every webhook event type's envelope and data, published
 * under the document's `webhooks` and its component schemas. The samples POST /webhooks/{id}/test
 * sends (webhook-samples.ts) are checked against these by a test.
 */
type Schema = Record<string, unknown>;

const int = (description?: string, extra: Schema = {}): Schema => ({
  type: 'integer',
  ...(description !== undefined ? { description } : {}),
  ...extra,
});
const str = (description?: string, extra: Schema = {}): Schema => ({
  type: 'string',
  ...(description !== undefined ? { description } : {}),
  ...extra,
});
const object = (properties: Record<string, Schema>): Schema => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
});
const OUTCOME = { type: 'string', enum: ['YES', 'NO'] };
const ORDER_STATUS = ['OPEN', 'PARTIALLY_FILLED', 'FILLED', 'CANCELLED', 'EXPIRED'];

const progress = (status: string): Schema =>
  object({
    order_id: str('ord_...'),
    status: { type: 'string', const: status },
    filled_quantity: int('Contracts filled so far'),
    remaining_quantity: int('Contracts still open'),
    average_fill_price: {
      type: ['number', 'null'],
      description: 'Average fill price in cents, in the order’s own terms; null before any fill',
    },
  });

const ENVIRONMENT = { type: 'string', enum: ['live', 'test'] };
const dateTime = (description?: string): Schema => str(description, { format: 'date-time' });
const yesCents = (description: string): Schema => ({
  type: ['integer', 'null'],
  minimum: 1,
  maximum: 99,
  description,
});

/** A quote as both parties see it (rfq-views.ts quoteView): never the responder's identity. */
const rfqQuote = (status: string): Schema =>
  object({
    id: str('quo_...'),
    rfq_id: str('rfq_...'),
    bid: yesCents('YES cents the responder buys YES at; null when it quotes an ask only'),
    ask: yesCents('YES cents the responder sells YES at; null when it quotes a bid only'),
    quantity: int('Contracts: the RFQ’s quantity', { minimum: 1 }),
    status: { type: 'string', const: status },
    expires_at: dateTime('When the quote stops binding, on the service clock'),
    created_at: dateTime(),
    environment: ENVIRONMENT,
  });

/** The requester's view of its RFQ (rfq-views.ts rfqView). */
const requesterRfq = (status: string, traded: boolean): Schema =>
  object({
    id: str('rfq_...'),
    market_id: str('mkt_...'),
    quantity: int('Contracts asked for', { minimum: 1 }),
    status: { type: 'string', const: status },
    expires_at: dateTime(),
    accepted_quote_id: traded ? str('quo_...: the quote that traded') : { type: 'null' },
    trade_id: traded ? str('fil_...: the trade') : { type: 'null' },
    created_at: dateTime(),
    environment: ENVIRONMENT,
  });

/** The trade of an accepted quote (RfqTradeDto), in YES cents. */
const rfqTrade = object({
  id: str('fil_...'),
  market_id: str('mkt_...'),
  price: int('YES cents', { minimum: 1, maximum: 99 }),
  no_price: int('100 - price', { minimum: 1, maximum: 99 }),
  quantity: int('Contracts', { minimum: 1 }),
  taker_side: { type: 'string', enum: ['YES', 'NO'], description: 'What the requester bought' },
  source: { type: 'string', const: 'RFQ' },
  created_at: dateTime(),
});

/** The `data` of each event type, with a sentence saying when it is sent. */
export const WEBHOOK_EVENT_DATA: Record<WebhookEventType, { description: string; data: Schema }> = {
  'order.created': {
    description: 'An order was accepted (status OPEN, nothing filled yet).',
    data: object({
      order: object({
        id: str('ord_...'),
        client_order_id: { type: ['string', 'null'] },
        market_id: str('mkt_...'),
        action: { type: 'string', enum: ['BUY', 'SELL'] },
        side: { type: 'string', enum: ['YES', 'NO'] },
        type: { type: 'string', enum: ['LIMIT', 'MARKET'] },
        price: {
          type: ['integer', 'null'],
          minimum: 1,
          maximum: 99,
          description: 'null for MARKET',
        },
        quantity: int('Contracts', { minimum: 1 }),
        time_in_force: { type: 'string', enum: ['GTC', 'IOC', 'FOK'] },
        self_trade_prevention: {
          type: 'string',
          enum: ['CANCEL_TAKER', 'CANCEL_MAKER', 'CANCEL_BOTH'],
          description: 'What happens when it meets a resting order of the same account',
        },
        status: { type: 'string', enum: ORDER_STATUS },
      }),
    }),
  },
  'order.partially_filled': {
    description: 'An order filled in part; the rest is still open.',
    data: progress('PARTIALLY_FILLED'),
  },
  'order.filled': { description: 'An order filled completely.', data: progress('FILLED') },
  'order.cancelled': {
    description: 'An order left the book by cancellation.',
    data: object({
      order_id: str('ord_...'),
      status: { type: 'string', const: 'CANCELLED' },
      cancel_reason: {
        type: ['string', 'null'],
        description:
          'USER, CANCEL_ALL, CANCEL_ON_DISCONNECT, MARKET_RESOLVED, ACCOUNT_RESET, REQUOTE, SELF_TRADE_PREVENTION (it met an order of its own account), ...',
      },
      filled_quantity: int('Contracts filled before the cancel'),
    }),
  },
  'order.expired': {
    description: 'The unfilled rest of an IOC, FOK or MARKET order expired.',
    data: object({
      order_id: str('ord_...'),
      status: { type: 'string', const: 'EXPIRED' },
      cancel_reason: {
        type: 'string',
        enum: ['FOK_UNFILLABLE', 'IOC_REMAINDER'],
        description:
          'FOK_UNFILLABLE: a FOK whose whole quantity was not available (nothing traded); IOC_REMAINDER: what an IOC or MARKET order could not fill at once',
      },
      filled_quantity: int('Contracts filled before it expired'),
    }),
  },
  'market.resolved': {
    description: 'A market resolved (sent to every subscribed endpoint of the environment).',
    data: object({ market_id: str('mkt_...'), outcome: OUTCOME }),
  },
  'position.settled': {
    description: 'A position was settled at resolution; it is now flat.',
    data: object({
      market_id: str('mkt_...'),
      outcome: OUTCOME,
      yes: int('YES contracts held at resolution', { minimum: 0 }),
      no: int('NO contracts held at resolution', { minimum: 0 }),
      payout_cents: int('100 cents per winning contract', { minimum: 0 }),
      realized_pnl_cents: int('Payout less the cost of the settled contracts'),
    }),
  },
  'account.reset': {
    description: 'POST /sandbox/reset cleared the paper account (one event for all it dropped).',
    data: object({
      cancelled_orders: int('Open orders dropped', { minimum: 0 }),
      balance_cents: int('The balance after the reset', { minimum: 0 }),
      market_ids: {
        type: 'array',
        items: { type: 'string' },
        description: 'Markets of the positions dropped',
      },
    }),
  },
  'rfq.quote_received': {
    description:
      'A quote arrived on your RFQ (a replacement quote from the same responder is sent too, with the new quote id).',
    data: object({ rfq_id: str('rfq_...'), market_id: str('mkt_...'), quote: rfqQuote('OPEN') }),
  },
  'rfq.quote_accepted': {
    description:
      'A quote traded. Both parties are sent it: the requester {rfq, quote, trade}, the responder {rfq_id, market_id, quote, trade}, which never names the requester.',
    data: {
      oneOf: [
        {
          ...object({
            rfq: requesterRfq('FILLED', true),
            quote: rfqQuote('ACCEPTED'),
            trade: rfqTrade,
          }),
          title: 'Requester',
          description: 'The requester’s copy: its RFQ, now FILLED',
        },
        {
          ...object({
            rfq_id: str('rfq_...'),
            market_id: str('mkt_...'),
            quote: rfqQuote('ACCEPTED'),
            trade: rfqTrade,
          }),
          title: 'Responder',
          description: 'The responder’s copy: the RFQ by id only, never who asked',
        },
      ],
    },
  },
  'rfq.expired': {
    description: 'Your RFQ expired unfilled; its open quotes expired with it.',
    data: object({ rfq: requesterRfq('EXPIRED', false) }),
  },
  'data_export.ready': {
    description:
      'Your data export finished and can be downloaded (GET /data/exports/{id}/download) until expires_at.',
    data: object({
      export_id: str('dex_...'),
      dataset: { type: 'string', enum: [...DATASETS] },
      format: { type: 'string', enum: [...EXPORT_FORMATS] },
      record_count: int('Rows written', { minimum: 0 }),
      size_bytes: int('File size in bytes, uncompressed', { minimum: 0 }),
      sha256: str('sha256 of the file, hex (also its ETag)', { pattern: '^[0-9a-f]{64}$' }),
      expires_at: dateTime('ready_at + 7 days'),
      status: { type: 'string', const: 'READY' },
      ready_at: dateTime(),
    }),
  },
  'webhook.test': {
    description: 'Sent by POST /webhooks/{id}/test without a type.',
    data: object({ endpoint_id: str('whe_...'), message: str() }),
  },
};

/** The component schema name of an event type: order.created -> OrderCreatedWebhookEvent. */
export function webhookEventSchemaName(type: string): string {
  const words = type.split(/[._]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1));
  return `${words.join('')}WebhookEvent`;
}

/** The envelope of one event type (every event shares it; `data` differs). */
export function webhookEventSchema(type: WebhookEventType): Schema {
  const entry = WEBHOOK_EVENT_DATA[type];
  return {
    type: 'object',
    description: entry.description,
    required: ['id', 'type', 'created_at', 'schema_version', 'environment', 'data'],
    properties: {
      id: str('evt_...: the event id (the same on every retry and replay)'),
      type: { type: 'string', const: type },
      created_at: str(undefined, { format: 'date-time' }),
      schema_version: { type: 'string', const: SCHEMA_VERSION },
      environment: { type: 'string', enum: ['live', 'test'] },
      world_id: str(
        'Present only for events of an ephemeral world (POST /api/v1/sandbox/worlds): the world id (wld_...), whose endpoints alone receive them. Absent on live and shared paper-world events.',
        { pattern: '^wld_' },
      ),
      data: entry.data,
    },
  };
}

/**
 * The document's part: a component schema per event type and an OpenAPI 3.1 `webhooks` entry
 * (the POST an endpoint receives) referring to it.
 */
export function webhookEventDocs(types: readonly WebhookEventType[]): {
  schemas: Record<string, Schema>;
  webhooks: Record<string, Schema>;
} {
  const schemas: Record<string, Schema> = {};
  const webhooks: Record<string, Schema> = {};
  const header = (name: string, description: string): Schema => ({
    name,
    in: 'header',
    required: true,
    description,
    schema: { type: 'string' },
  });
  for (const type of types) {
    const name = webhookEventSchemaName(type);
    schemas[name] = webhookEventSchema(type);
    webhooks[type] = {
      post: {
        tags: ['Webhooks'],
        summary: `${type} event`,
        description: `${WEBHOOK_EVENT_DATA[type].description} POST /api/v1/webhooks/{id}/test sends a sample with {"type": "${type}"}.`,
        operationId: `webhookEvent_${type.replace(/\W/g, '_')}`,
        // Sent by the service, not called: the receiver checks Svc-Webhook-Signature instead.
        security: [],
        parameters: [
          header(
            'Svc-Webhook-Signature',
            't=<unix>,v1=<hex>[,v1=<hex>]: HMAC-SHA256 of "<t>.<raw body>" per live secret',
          ),
          header('Svc-Webhook-Secret-Version', 'The active secret version'),
          header('Svc-Webhook-Id', 'The delivery id (dlv_...), the same on every retry'),
          header('Svc-Webhook-Event', 'The event type'),
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } },
        },
        responses: {
          '2XX': {
            description:
              'Any 2xx within 10 s acknowledges the delivery; anything else (3xx included) is retried on the schedule',
          },
        },
      },
    };
  }
  return { schemas, webhooks };
}
