import { MARKET_ID_SOURCE } from '../../common/ids/id-patterns.js';

/**
 * JSON schemas of the order request bodies. Fastify compiles them once and validates on the hot
 * path (class-validator costs too much per order here); the same objects document the bodies in
 * the OpenAPI contract. Cross-field rules (LIMIT needs a price, MARKET has none) are checked in the
 * service so their messages stay clear; the document states them too ({@link PLACE_ORDER_DOC}).
 */
const MARKET_ID_PATTERN = MARKET_ID_SOURCE;

export const PLACE_ORDER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['market_id', 'action', 'side', 'type', 'quantity'],
  properties: {
    market_id: { type: 'string', pattern: MARKET_ID_PATTERN, description: 'Market id (mkt_...)' },
    action: { type: 'string', enum: ['BUY', 'SELL'] },
    side: { type: 'string', enum: ['YES', 'NO'] },
    type: { type: 'string', enum: ['LIMIT', 'MARKET'] },
    price: {
      type: 'integer',
      minimum: 1,
      maximum: 99,
      description:
        "LIMIT only: cents 1..99 in the order's own side (a BUY NO at 30 rests as a YES ask at 70)",
    },
    quantity: {
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000_000,
      description: 'Contracts (capped by ORDER_MAX_QUANTITY)',
    },
    time_in_force: {
      type: 'string',
      enum: ['GTC', 'IOC', 'FOK'],
      description: 'Default GTC for LIMIT; MARKET is IOC (or FOK)',
    },
    post_only: {
      type: 'boolean',
      description: 'LIMIT GTC only: refused (POST_ONLY_WOULD_CROSS) if it would take liquidity',
    },
    self_trade_prevention: {
      type: 'string',
      enum: ['CANCEL_TAKER', 'CANCEL_MAKER', 'CANCEL_BOTH'],
      default: 'CANCEL_TAKER',
      description:
        "What happens when this order would trade with a resting order of your own account in this world (no order ever trades with its own account): CANCEL_TAKER (default) ends this order's unfilled rest, CANCEL_MAKER cancels the resting order and goes on matching, CANCEL_BOTH does both. Ended orders show cancel_reason SELF_TRADE_PREVENTION; fills made before stand",
    },
    client_order_id: {
      type: 'string',
      pattern: '^[A-Za-z0-9._:-]{1,64}$',
      description:
        'Your reference; unique among the open orders of the API key (of the user, for orders placed with a session token)',
    },
  },
} as const;

/**
 * The cross-field rules OrdersService checks (its `shape`), as JSON Schema for the document:
 * LIMIT needs price; MARKET takes no price and is IOC or FOK; post_only true needs LIMIT GTC
 * (time_in_force absent is GTC).
 */
const ORDER_RULES = [
  {
    if: { required: ['type'], properties: { type: { const: 'LIMIT' } } },
    then: { required: ['price'], properties: { price: PLACE_ORDER_SCHEMA.properties.price } },
  },
  {
    if: { required: ['type'], properties: { type: { const: 'MARKET' } } },
    then: { properties: { price: { not: {} }, time_in_force: { enum: ['IOC', 'FOK'] } } },
  },
  {
    if: { required: ['post_only'], properties: { post_only: { const: true } } },
    then: { properties: { type: { const: 'LIMIT' }, time_in_force: { const: 'GTC' } } },
  },
];

/** The order body as published: its fields and the cross-field rules. */
export const PLACE_ORDER_DOC = { ...PLACE_ORDER_SCHEMA, allOf: ORDER_RULES } as const;

export const BATCH_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['orders'],
  properties: {
    orders: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      items: PLACE_ORDER_DOC,
      description:
        'Legs, each a POST /orders body. A leg that breaks its schema does not refuse the batch: its result is the 400 VALIDATION_FAILED POST /orders would have answered (fields named as there), and the other legs run.',
    },
  },
} as const;

/**
 * The batch body as validated by the route: the envelope only (an array of 1..20 legs, no other
 * field). Each leg is checked against {@link PLACE_ORDER_SCHEMA} on its own, so an invalid leg
 * answers its own 400 in the results instead of refusing the legs next to it.
 */
export const BATCH_ENVELOPE_RULE = {
  ...BATCH_SCHEMA,
  properties: { orders: { type: 'array', minItems: 1, maxItems: 20 } },
} as const;

export const AMEND_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    price: {
      type: 'integer',
      minimum: 1,
      maximum: 99,
      description: "New limit price in the order's own side",
    },
    quantity: {
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000_000,
      description:
        'New total quantity (more than what has filled). Lower keeps priority; higher re-queues.',
    },
  },
} as const;

/** The cancel-all body as documented: optional; `{}` or no body cancels every open order. */
export const CANCEL_ALL_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { market_id: { type: 'string', pattern: MARKET_ID_PATTERN } },
} as const;

/**
 * The cancel-all body as validated. Fastify validates a missing body as `null`, which a plain
 * `type: 'object'` refuses (400 for a bodyless POST /orders/cancel-all), so the rule also takes
 * null (ajv's `nullable`): no body, `null` or `{}` cancel everything; anything else must match.
 */
export const CANCEL_ALL_BODY_RULE = { ...CANCEL_ALL_SCHEMA, nullable: true } as const;

export const CANCEL_BATCH_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['order_ids'],
  properties: {
    order_ids: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      uniqueItems: true,
      items: { type: 'string', maxLength: 60 },
    },
  },
} as const;

const nullable = (type: string) => ({ type: [type, 'null'] });

/**
 * The order answer of POST /orders (OrderDto, whose decorators stay the OpenAPI source), as the
 * JSON Schema Fastify compiles into a serializer (fast-json-stringify) for the 201: the hot
 * route's answer is written without a generic JSON.stringify. Every OrderDto field is listed, in
 * its order; a field missing here would be dropped from the answer, which the OpenAPI
 * conformance e2e test (every field required by the document) would catch.
 */
export const ORDER_ANSWER_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    client_order_id: nullable('string'),
    market_id: { type: 'string' },
    action: { type: 'string' },
    side: { type: 'string' },
    type: { type: 'string' },
    rfq_id: nullable('string'),
    price: nullable('integer'),
    quantity: { type: 'integer' },
    filled_quantity: { type: 'integer' },
    remaining_quantity: { type: 'integer' },
    average_fill_price: nullable('number'),
    filled_cost_cents: { type: 'integer' },
    status: { type: 'string' },
    cancel_reason: nullable('string'),
    time_in_force: { type: 'string' },
    post_only: { type: 'boolean' },
    self_trade_prevention: { type: 'string' },
    environment: { type: 'string' },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
    fills: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          price: { type: 'integer' },
          yes_price: { type: 'integer' },
          quantity: { type: 'integer' },
          liquidity: { type: 'string' },
          created_at: { type: 'string' },
        },
      },
    },
  },
} as const;

export interface PlaceOrderBody {
  market_id: string;
  action: 'BUY' | 'SELL';
  side: 'YES' | 'NO';
  type: 'LIMIT' | 'MARKET';
  price?: number;
  quantity: number;
  time_in_force?: 'GTC' | 'IOC' | 'FOK';
  post_only?: boolean;
  self_trade_prevention?: 'CANCEL_TAKER' | 'CANCEL_MAKER' | 'CANCEL_BOTH';
  client_order_id?: string;
}

export interface AmendBody {
  price?: number;
  quantity?: number;
}
