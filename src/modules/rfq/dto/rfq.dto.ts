import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsString, Matches, Max, Min } from 'class-validator';
import { MARKET_ID_SOURCE } from '../../../common/ids/id-patterns.js';
import { PageQueryDto } from '../../../common/pagination/page-query.dto.js';
import { SchemaRules } from '../../../common/api/schema-rules.js';
import { OptionalField } from '../../../common/validation/fields.js';
import { OrderDto } from '../../orders/dto/order.dto.js';
import { QUOTE_EXPIRY, RFQ_EXPIRY } from '../rfq-rules.js';

const RFQ_STATUSES = ['OPEN', 'FILLED', 'CANCELLED', 'EXPIRED'] as const;
const QUOTE_STATUSES = ['OPEN', 'ACCEPTED', 'REPLACED', 'CANCELLED', 'EXPIRED'] as const;
const ENVIRONMENTS = ['live', 'test'] as const;

export class CreateRfqDto {
  @ApiProperty({ example: 'mkt_3f1c2b9a7d6e5f4a3b2c', description: 'An OPEN market of your world' })
  @IsString()
  @Matches(new RegExp(MARKET_ID_SOURCE), { message: 'market_id must be a market id (mkt_...)' })
  market_id: string;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: 1_000_000, example: 500 })
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  quantity: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: RFQ_EXPIRY.min,
    maximum: RFQ_EXPIRY.max,
    default: RFQ_EXPIRY.default,
    description: 'Seconds until the RFQ expires on the service clock',
  })
  @OptionalField()
  @IsInt()
  @Min(RFQ_EXPIRY.min)
  @Max(RFQ_EXPIRY.max)
  expires_in_seconds?: number;
}

export class ListRfqQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: RFQ_STATUSES, description: 'Only RFQs in this status' })
  @OptionalField()
  @IsIn(RFQ_STATUSES, { message: `status must be one of ${RFQ_STATUSES.join(', ')}` })
  status?: (typeof RFQ_STATUSES)[number];
}

/**
 * What SubmitQuoteUseCase refuses with 400 besides the fields' own bounds: no side at all (bid is
 * then named). Its other rule, ask above bid when both are given, compares two values, which JSON
 * Schema cannot state: the descriptions say it.
 */
// The properties named again (any value) so the subschemas define what they require.
@SchemaRules([
  {
    if: { not: { required: ['ask'], properties: { ask: {} } } },
    then: { required: ['bid'], properties: { bid: {} } },
  },
])
export class SubmitQuoteDto {
  @ApiPropertyOptional({
    type: 'integer',
    description:
      'YES cents you buy YES at (the requester sells YES / buys NO here), 1..99; below ask when both are given (else 400 naming ask). Give a bid, an ask or both (neither: 400 naming bid).',
  })
  @OptionalField()
  @IsInt()
  @Min(1)
  @Max(99)
  bid?: number;

  @ApiPropertyOptional({
    type: 'integer',
    description:
      'YES cents you sell YES at (the requester buys YES / sells NO here), 1..99; above bid when both are given (else 400 naming ask)',
  })
  @OptionalField()
  @IsInt()
  @Min(1)
  @Max(99)
  ask?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: QUOTE_EXPIRY.min,
    maximum: QUOTE_EXPIRY.max,
    default: QUOTE_EXPIRY.default,
    description: 'Seconds the quote stays binding, on the service clock',
  })
  @OptionalField()
  @IsInt()
  @Min(QUOTE_EXPIRY.min)
  @Max(QUOTE_EXPIRY.max)
  expires_in_seconds?: number;
}

export class AcceptQuoteDto {
  @ApiProperty({ enum: ['BUY', 'SELL'] })
  @IsIn(['BUY', 'SELL'], { message: 'action must be one of BUY, SELL' })
  action: 'BUY' | 'SELL';

  @ApiProperty({ enum: ['YES', 'NO'] })
  @IsIn(['YES', 'NO'], { message: 'side must be one of YES, NO' })
  side: 'YES' | 'NO';
}

export class RfqDto {
  @ApiProperty({ example: 'rfq_01jd3x000000000000abcd' }) id: string;
  @ApiProperty() market_id: string;
  @ApiProperty({ type: 'integer' }) quantity: number;
  @ApiProperty({ enum: RFQ_STATUSES }) status: (typeof RFQ_STATUSES)[number];
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ type: 'string', nullable: true }) accepted_quote_id: string | null;
  @ApiProperty({ type: 'string', nullable: true }) trade_id: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ enum: ENVIRONMENTS }) environment: 'live' | 'test';
}

export class RfqPageDto {
  @ApiProperty({ type: [RfqDto] }) data: RfqDto[];
  @ApiProperty({ type: 'string', nullable: true }) next_cursor: string | null;
}

/** An OPEN RFQ as a responder sees it: no requester identity. */
export class OpenRfqDto {
  @ApiProperty() id: string;
  @ApiProperty() market_id: string;
  @ApiProperty({ type: 'integer' }) quantity: number;
  @ApiProperty({ enum: ['OPEN'] }) status: 'OPEN';
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ enum: ENVIRONMENTS }) environment: 'live' | 'test';
}

export class OpenRfqPageDto {
  @ApiProperty({ type: [OpenRfqDto] }) data: OpenRfqDto[];
  @ApiProperty({ type: 'string', nullable: true }) next_cursor: string | null;
}

export class QuoteViewDto {
  @ApiProperty({ example: 'quo_01jd3x000000000000abcd' }) id: string;
  @ApiProperty() rfq_id: string;
  @ApiProperty({ type: 'integer', nullable: true, description: 'YES cents' }) bid: number | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'YES cents' }) ask: number | null;
  @ApiProperty({ type: 'integer' }) quantity: number;
  @ApiProperty({ enum: QUOTE_STATUSES }) status: (typeof QUOTE_STATUSES)[number];
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ enum: ENVIRONMENTS }) environment: 'live' | 'test';
}

export class QuotePageDto {
  @ApiProperty({ type: [QuoteViewDto] }) data: QuoteViewDto[];
  @ApiProperty({ type: 'string', nullable: true }) next_cursor: string | null;
}

export class RfqTradeDto {
  @ApiProperty() id: string;
  @ApiProperty() market_id: string;
  @ApiProperty({ type: 'integer', description: 'YES cents' }) price: number;
  @ApiProperty({ type: 'integer', description: '100 - price' }) no_price: number;
  @ApiProperty({ type: 'integer' }) quantity: number;
  @ApiProperty({ enum: ['YES', 'NO'], description: 'What the requester bought' })
  taker_side: 'YES' | 'NO';
  @ApiProperty({ enum: ['RFQ'] }) source: 'RFQ';
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class AcceptResultDto {
  @ApiProperty({ type: RfqDto }) rfq: RfqDto;
  @ApiProperty({ type: QuoteViewDto }) quote: QuoteViewDto;
  @ApiProperty({ type: OrderDto, description: 'Your FILLED order (type RFQ)' }) order: OrderDto;
  @ApiProperty({ type: RfqTradeDto }) trade: RfqTradeDto;
}
