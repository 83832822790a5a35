import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { IsIn, Matches } from 'class-validator';
import { IsInstant } from '../../../common/validation/instant.js';
import { PageQueryDto } from '../../../common/pagination/page-query.dto.js';
import { MARKET_ID } from '../../../common/ids/id-patterns.js';
import { OptionalField } from '../../../common/validation/fields.js';
import { ErrorDetailDto } from '../../../common/api/error-response.dto.js';

export class FillDto {
  @ApiProperty({ example: 'fil_01jd3x000000000000abcd' })
  id: string;

  @ApiProperty({ type: 'integer', description: "Fill price in the order's own side, cents" })
  price: number;

  @ApiProperty({ type: 'integer', description: 'YES-terms price of the trade, cents' })
  yes_price: number;

  @ApiProperty({ type: 'integer' })
  quantity: number;

  @ApiProperty({ enum: ['MAKER', 'TAKER'] })
  liquidity: 'MAKER' | 'TAKER';

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

export class OrderDto {
  @ApiProperty({ example: 'ord_01jd3x000000000000abcd' })
  id: string;

  @ApiProperty({ type: 'string', nullable: true })
  client_order_id: string | null;

  @ApiProperty()
  market_id: string;

  @ApiProperty({ enum: ['BUY', 'SELL'] })
  action: 'BUY' | 'SELL';

  @ApiProperty({ enum: ['YES', 'NO'] })
  side: 'YES' | 'NO';

  @ApiProperty({
    enum: ['LIMIT', 'MARKET', 'RFQ'],
    description: 'RFQ: filled off the book by accepting a quote (see rfq_id)',
  })
  type: 'LIMIT' | 'MARKET' | 'RFQ';

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The request for quote an RFQ order traded under; null for book orders',
  })
  rfq_id: string | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: "Limit price in the order's own side; null for MARKET",
  })
  price: number | null;

  @ApiProperty({ type: 'integer' })
  quantity: number;

  @ApiProperty({ type: 'integer' })
  filled_quantity: number;

  @ApiProperty({ type: 'integer' })
  remaining_quantity: number;

  @ApiProperty({
    type: 'number',
    nullable: true,
    description:
      "Average fill price in the order's own side (cents; may be fractional); null if unfilled",
  })
  average_fill_price: number | null;

  @ApiProperty({
    type: 'integer',
    description: "Sum of fill price x quantity in the order's own side, cents",
  })
  filled_cost_cents: number;

  @ApiProperty({ enum: ['OPEN', 'PARTIALLY_FILLED', 'FILLED', 'CANCELLED', 'EXPIRED'] })
  status: string;

  @ApiProperty({
    type: 'string',
    nullable: true,
    enum: [
      'USER',
      'CANCEL_ALL',
      'CANCEL_ON_DISCONNECT',
      'MARKET_RESOLVED',
      'ACCOUNT_RESET',
      'SCENARIO',
      'SELF_TRADE_PREVENTION',
      'FOK_UNFILLABLE',
      'IOC_REMAINDER',
    ],
    description:
      'Why the order ended: for CANCELLED who cancelled it (SCENARIO: the remainder of an order a sandbox PARTIAL_FILL scenario filled in part; SELF_TRADE_PREVENTION: it met an order of its own account, see self_trade_prevention); for EXPIRED, FOK_UNFILLABLE (a FOK whose whole quantity was not available: nothing traded) or IOC_REMAINDER (what an IOC or MARKET order could not fill at once, dropped). null while the order is open or once FILLED (and on orders that expired before these reasons were recorded).',
  })
  cancel_reason: string | null;

  @ApiProperty({ enum: ['GTC', 'IOC', 'FOK'] })
  time_in_force: string;

  @ApiProperty()
  post_only: boolean;

  @ApiProperty({
    enum: ['CANCEL_TAKER', 'CANCEL_MAKER', 'CANCEL_BOTH'],
    description:
      'Self-trade prevention mode the order was placed with (default CANCEL_TAKER): what happens when it meets a resting order of the same account',
  })
  self_trade_prevention: 'CANCEL_TAKER' | 'CANCEL_MAKER' | 'CANCEL_BOTH';

  @ApiProperty({ enum: ['live', 'test'] })
  environment: 'live' | 'test';

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;

  @ApiProperty({ type: [FillDto] })
  fills: FillDto[];
}

export class OrderPageDto {
  @ApiProperty({ type: [OrderDto] })
  data: OrderDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}

const ORDER_STATUSES = ['OPEN', 'PARTIALLY_FILLED', 'FILLED', 'CANCELLED', 'EXPIRED'];

/** The filters the order list and the CSV export share. */
export class OrderFiltersDto {
  @ApiPropertyOptional({ enum: ORDER_STATUSES })
  @OptionalField()
  @IsIn(ORDER_STATUSES)
  status?: string;

  @ApiPropertyOptional({ description: 'Market id (mkt_...)' })
  @OptionalField()
  @Matches(MARKET_ID, { message: 'market_id must be a market id (mkt_...)' })
  market_id?: string;
}

export class ListOrdersQueryDto extends IntersectionType(PageQueryDto, OrderFiltersDto) {}

/** Filters of the CSV export: those of the order list, and a creation-time window. */
export class ExportOrdersQueryDto extends OrderFiltersDto {
  @ApiPropertyOptional({
    format: 'date-time',
    description:
      'Only orders created at or after this instant (ISO 8601, e.g. 2026-11-01T00:00:00Z)',
  })
  @OptionalField()
  @IsInstant()
  created_from?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'Only orders created before this instant (ISO 8601; exclusive)',
  })
  @OptionalField()
  @IsInstant()
  created_to?: string;
}

export class BatchLegResultDto {
  @ApiProperty({ type: 'integer' })
  index: number;

  @ApiProperty({ type: 'integer', description: 'HTTP status this leg would have had on its own' })
  status: number;

  @ApiPropertyOptional({ type: OrderDto })
  order?: OrderDto;

  @ApiPropertyOptional({
    description:
      "A failed leg's error, as the `error` object a POST /orders with that leg would have answered (code, message, status, request_id, details)",
    type: ErrorDetailDto,
  })
  error?: ErrorDetailDto;
}

export class BatchResultDto {
  @ApiProperty({ type: [BatchLegResultDto] })
  results: BatchLegResultDto[];
}

export class CancelResultDto {
  @ApiProperty({ type: 'integer' })
  cancelled: number;
}

export class QuoteDto {
  @ApiProperty({ type: 'integer' })
  filled_quantity: number;

  @ApiProperty({
    type: 'number',
    nullable: true,
    description: 'Own-side average price, cents; may be fractional',
  })
  average_price: number | null;

  @ApiProperty({ type: 'integer', description: 'Own-side notional of the fill, cents' })
  cost_cents: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: "Change of the caller's balance with netting, cents",
  })
  cash_delta_cents: number | null;

  @ApiProperty({ description: 'Whether the whole quantity would fill now' })
  fully_filled: boolean;

  @ApiProperty({
    type: 'array',
    items: {
      type: 'object',
      properties: { price: { type: 'integer' }, quantity: { type: 'integer' } },
      required: ['price', 'quantity'],
      additionalProperties: false,
    },
    description: 'Levels walked: own-side price and quantity taken at each',
  })
  levels: { price: number; quantity: number }[];
}
