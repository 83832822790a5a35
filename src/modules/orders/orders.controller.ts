import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  Param,
  Patch,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import { RouteSchema } from '@nestjs/platform-fastify';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Cred, credentialOf } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import {
  BatchResultDto,
  CancelResultDto,
  ListOrdersQueryDto,
  ExportOrdersQueryDto,
  OrderDto,
  OrderPageDto,
  QuoteDto,
} from './dto/order.dto.js';
import { OrderExportService } from './order-export.service.js';
import {
  AMEND_SCHEMA,
  BATCH_ENVELOPE_RULE,
  BATCH_SCHEMA,
  CANCEL_ALL_BODY_RULE,
  CANCEL_ALL_SCHEMA,
  CANCEL_BATCH_SCHEMA,
  ORDER_ANSWER_SCHEMA,
  PLACE_ORDER_DOC,
  PLACE_ORDER_SCHEMA,
  type AmendBody,
  type PlaceOrderBody,
} from './order-schemas.js';
import { OrdersService } from './orders.service.js';

const ORDER_ERRORS = [400, 404, 409, 422];
const ORDER_NOT_OPEN = 'ORDER_NOT_OPEN (the order is filled, cancelled or expired)';
/** The 422 codes of a place or amend, named in the OpenAPI document. */
const FUNDS_REFUSAL =
  'INSUFFICIENT_FUNDS (details.required_cents: what the order needs of the available balance; details.available_cents)';
const PLACE_REFUSALS = [
  FUNDS_REFUSAL,
  'MARKET_NOT_OPEN',
  'POST_ONLY_WOULD_CROSS',
  'ORDER_QUANTITY_LIMIT',
  'OPEN_ORDERS_LIMIT',
];
const AMEND_REFUSALS = [
  FUNDS_REFUSAL,
  'MARKET_NOT_OPEN',
  'POST_ONLY_WOULD_CROSS',
  'ORDER_QUANTITY_LIMIT',
  'AMEND_NO_CHANGE',
];

/**
 * The request body's JSON Schema: validated by Fastify before the handler (`validate`, when the
 * rule differs from what is published) and published in the OpenAPI document.
 */
function JsonBody(
  schema: object,
  opts: { validate?: object; required?: boolean; response?: Record<number, object> } = {},
): MethodDecorator {
  return applyDecorators(
    RouteSchema({
      body: opts.validate ?? schema,
      ...(opts.response === undefined ? {} : { response: opts.response }),
    }),
    ApiBody({
      schema: schema as Record<string, unknown>,
      ...(opts.required === undefined ? {} : { required: opts.required }),
    }),
  );
}

@ApiTags('Orders')
@Controller('orders')
export class OrdersController {
  constructor(
    private readonly orders: OrdersService,
    private readonly exporter: OrderExportService,
  ) {}

  @Post()
  @JsonBody(PLACE_ORDER_DOC, {
    validate: PLACE_ORDER_SCHEMA,
    response: { 201: ORDER_ANSWER_SCHEMA },
  })
  @Endpoint({
    summary: 'Place an order',
    description:
      'LIMIT needs price (1..99, own side); MARKET has none and is IOC (or FOK). The order, its fills, the position and ledger changes are committed before the answer. Test keys trade on the paper engine.',
    auth: 'key',
    scopes: ['orders:write'],
    routeLimitPerMinute: 60,
    status: 201,
    type: OrderDto,
    errors: ORDER_ERRORS,
    codes: {
      409: [
        'DUPLICATE_CLIENT_ORDER_ID (client_order_id used by an open order of this API key, or of your sessions with a session token; details.order_id names it)',
      ],
      422: PLACE_REFUSALS,
    },
  })
  place(@Req() req: FastifyRequest): Promise<OrderDto> {
    // The hot route reads its credential and body from the request itself: a @Body() or @Cred()
    // parameter would run the global ValidationPipe (a chain of promises per parameter) on a body
    // Fastify's schema has already validated and on a credential it never checks.
    return this.orders.place(credentialOf(req), req.body as PlaceOrderBody);
  }

  @Post('batch')
  @JsonBody(BATCH_SCHEMA, { validate: BATCH_ENVELOPE_RULE })
  @Endpoint({
    summary: 'Place up to 20 orders (legs) in one request',
    description:
      "Each leg is charged against the per-IP orders ceiling before any leg runs, an invalid leg like a valid one; if the ceiling cannot take them all, nothing is placed and the answer is 429 (the per-key route limit counts the request once). Legs run in order; each leg answers in its result what POST /orders would have answered with that body: 201 and the order, or the error (400 VALIDATION_FAILED naming the leg's field as POST /orders names it, 404, 409 DUPLICATE_CLIENT_ORDER_ID, 422 ...). A failing leg does not undo or stop the others. The whole request is 400 only when the envelope is invalid: orders missing, not an array, empty, over 20 legs, or another top-level field.",
    auth: 'key',
    scopes: ['orders:write'],
    routeLimitPerMinute: 10,
    ipCharge: 'legs',
    status: 200,
    type: BatchResultDto,
    errors: [400],
  })
  batch(
    @Cred() c: Credential,
    @Body() body: { orders: unknown[] },
    @Req() req: FastifyRequest,
  ): Promise<BatchResultDto> {
    // The route's own validator compiler (same ajv options as every body schema) checks each leg.
    const leg = req.compileValidationSchema(PLACE_ORDER_SCHEMA);
    return this.orders
      .batch(c, body.orders, String(req.id), (l) => (leg(l) ? [] : (leg.errors ?? [])))
      .then((results) => ({ results }));
  }

  @Post('quote')
  @JsonBody(PLACE_ORDER_DOC, { validate: PLACE_ORDER_SCHEMA })
  @Endpoint({
    summary: 'Price an order without placing it (read-only)',
    description:
      'What the order would fill against the book now, and the cash change netted against your position in the market. Changes nothing: a caller with no trading account yet is priced as a flat position and no account is opened. Your own resting orders are never part of it, as self_trade_prevention would fill the order: CANCEL_TAKER and CANCEL_BOTH stop at your first own order, CANCEL_MAKER walks past them.',
    auth: 'key',
    scopes: ['orders:read'],
    routeLimitPerMinute: 120,
    status: 200,
    type: QuoteDto,
    errors: ORDER_ERRORS,
  })
  quote(@Cred() c: Credential, @Body() body: PlaceOrderBody): QuoteDto {
    return this.orders.quote(c, body);
  }

  @Post('cancel-all')
  @JsonBody(CANCEL_ALL_SCHEMA, { validate: CANCEL_ALL_BODY_RULE, required: false })
  @Endpoint({
    summary: 'Cancel all your open orders (optionally in one market)',
    auth: 'key',
    scopes: ['orders:write'],
    routeLimitPerMinute: 60,
    status: 200,
    type: CancelResultDto,
    errors: [400, 404],
  })
  cancelAll(
    @Cred() c: Credential,
    @Body() body: { market_id?: string } | undefined,
  ): CancelResultDto {
    return { cancelled: this.orders.cancelAll(c, body?.market_id) };
  }

  @Post('cancel-batch')
  @JsonBody(CANCEL_BATCH_SCHEMA)
  @Endpoint({
    summary: 'Cancel several orders; each id gets its own result',
    auth: 'key',
    scopes: ['orders:write'],
    routeLimitPerMinute: 60,
    status: 200,
    type: BatchResultDto,
    errors: [400],
  })
  cancelBatch(
    @Cred() c: Credential,
    @Body() body: { order_ids: string[] },
    @Req() req: FastifyRequest,
  ): BatchResultDto {
    return { results: this.orders.cancelBatch(c, body.order_ids, String(req.id)) };
  }

  @Get()
  @Endpoint({
    summary: 'List your orders, newest first (cursor pagination)',
    auth: 'key',
    scopes: ['orders:read'],
    type: OrderPageDto,
    errors: [400],
  })
  list(@Cred() c: Credential, @Query() q: ListOrdersQueryDto): OrderPageDto {
    return this.orders.list(c, q);
  }

  @Get('export')
  @Endpoint({
    summary: 'Export your orders as CSV (streamed)',
    description:
      "text/csv, a header row then one order a row (LF line endings), oldest first; streamed in constant memory whatever the count. Columns (named as in the order JSON): id, client_order_id, market_id, action, side, type, price, quantity, filled_quantity, filled_cost_cents, status, cancel_reason, time_in_force, post_only, self_trade_prevention, created_at, updated_at; values as in the JSON, except that a text cell beginning with =, +, -, @, a tab or a carriage return is prefixed with ' so spreadsheets show it as text rather than run it as a formula (OWASP CSV injection; client_order_id is your text, e.g. -1 reads '-1); numbers are written as numbers. The export holds the orders you had when it began (ending at your newest order then; orders placed while it streams are not in it), optionally narrowed by status, market_id and a creation-time window (created_from inclusive, created_to exclusive; a date, or a date-time with Z or an offset); each row shows its order as it is when the row is read, and the status filter applies then. Refused with EXPORT_TOO_LARGE when it would hold more than EXPORT_MAX_ROWS orders (details rows and max_rows): narrow it with the filters. HEAD answers the headers without reading any order.",
    auth: 'key',
    scopes: ['orders:read'],
    routeLimitPerMinute: 6,
    responseDescription: 'CSV (text/csv)',
    errors: [422],
  })
  export(
    @Cred() c: Credential,
    @Query() q: ExportOrdersQueryDto,
    @Res() reply: FastifyReply,
  ): void {
    this.exporter.stream(c, q, reply);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get one of your orders with its fills',
    auth: 'key',
    scopes: ['orders:read'],
    type: OrderDto,
    errors: [404],
  })
  get(@Cred() c: Credential, @Param('id') id: string): OrderDto {
    return this.orders.get(c, id);
  }

  @Patch(':id')
  @JsonBody(AMEND_SCHEMA)
  @Endpoint({
    summary: 'Amend an open order',
    description:
      'Lowering quantity keeps time priority; a new price or a larger quantity re-queues the order.',
    auth: 'key',
    scopes: ['orders:write'],
    routeLimitPerMinute: 120,
    type: OrderDto,
    errors: ORDER_ERRORS,
    codes: { 409: [ORDER_NOT_OPEN], 422: AMEND_REFUSALS },
  })
  amend(@Cred() c: Credential, @Param('id') id: string, @Body() body: AmendBody): OrderDto {
    return this.orders.amend(c, id, body);
  }

  @Delete(':id')
  @Endpoint({
    summary: 'Cancel an open order',
    auth: 'key',
    scopes: ['orders:write'],
    routeLimitPerMinute: 120,
    type: OrderDto,
    errors: [404, 409],
    codes: { 409: [ORDER_NOT_OPEN] },
  })
  cancel(@Cred() c: Credential, @Param('id') id: string): OrderDto {
    return this.orders.cancel(c, id);
  }
}
