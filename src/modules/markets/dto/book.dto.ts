import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto.js';
import { DecimalIntegerQuery, OptionalField } from '../../../common/validation/fields.js';

export const MAX_BOOK_DEPTH = 99;
export const DEFAULT_BOOK_DEPTH = 10;

export class BookLevelDto {
  @ApiProperty({ type: 'integer', description: 'YES cents 1..99' })
  price: number;

  @ApiProperty({ type: 'integer', description: 'Contracts resting at this price' })
  quantity: number;
}

export class OrderBookDto {
  @ApiProperty()
  market_id: string;

  @ApiProperty({ enum: ['live', 'test'], description: 'Engine whose book this is' })
  environment: 'live' | 'test';

  @ApiProperty({
    type: [BookLevelDto],
    description: 'YES bids, best (highest) first: BUY YES at p and SELL NO at 100-p',
  })
  bids: BookLevelDto[];

  @ApiProperty({
    type: [BookLevelDto],
    description: 'YES asks, best (lowest) first: SELL YES at p and BUY NO at 100-p',
  })
  asks: BookLevelDto[];
}

export class OrderBookQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_BOOK_DEPTH,
    default: DEFAULT_BOOK_DEPTH,
    description: 'Price levels per side',
  })
  @OptionalField()
  @DecimalIntegerQuery()
  @IsInt()
  @Min(1)
  @Max(MAX_BOOK_DEPTH)
  depth?: number;
}

export class MarketTradeDto {
  @ApiProperty({ example: 'fil_01jd3x000000000000abcd' })
  id: string;

  @ApiProperty()
  market_id: string;

  @ApiProperty({ type: 'integer', description: 'Trade price, YES cents (the resting order price)' })
  price: number;

  @ApiProperty({ type: 'integer', description: '100 - price: the same trade in NO cents' })
  no_price: number;

  @ApiProperty({ type: 'integer', description: 'Contracts' })
  quantity: number;

  @ApiProperty({
    enum: ['YES', 'NO'],
    description:
      'What the taker (the incoming order) bought: YES for a bid-side taker (BUY YES / SELL NO), NO for an ask-side taker (SELL YES / BUY NO)',
  })
  taker_side: 'YES' | 'NO';

  @ApiProperty({
    enum: ['BOOK', 'RFQ'],
    description:
      'BOOK: matched on the order book; RFQ: an accepted quote, traded off the book (the requester is the taker)',
  })
  source: 'BOOK' | 'RFQ';

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

export class MarketTradePageDto {
  @ApiProperty({ type: [MarketTradeDto], description: 'Newest first' })
  data: MarketTradeDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}

export class MarketTradesQueryDto extends PageQueryDto {}
