import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto.js';
import type { MarketCategory, MarketStatus, Outcome } from '../entities/market.entity.js';
import { OptionalField } from '../../../common/validation/fields.js';

export const MARKET_STATUSES: MarketStatus[] = ['OPEN', 'HALTED', 'CLOSED', 'RESOLVED'];
export const MARKET_CATEGORIES: MarketCategory[] = [
  'SPORTS',
  'CRYPTO',
  'POLITICS',
  'ECONOMICS',
  'CULTURE',
];

export class MarketDto {
  @ApiProperty({ example: 'mkt_3f1c2b9a7d6e5f4a3b2c' })
  id: string;

  @ApiProperty({ example: 'btc-above-150k-2027-06-30' })
  slug: string;

  @ApiProperty()
  title: string;

  @ApiProperty()
  description: string;

  @ApiProperty({ enum: MARKET_CATEGORIES })
  category: MarketCategory;

  @ApiProperty({ enum: MARKET_STATUSES })
  status: MarketStatus;

  @ApiProperty({ enum: ['YES', 'NO'], nullable: true, type: 'string' })
  outcome: Outcome | null;

  @ApiProperty({ format: 'date-time' })
  close_time: string;

  @ApiProperty({
    type: 'string',
    nullable: true,
    example: 'BTC-USD',
    description:
      'Crypto markets: the reference index (GET /crypto/prices) the market resolves from at close_time; null for other markets',
  })
  index: string | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    pattern: '^\\d+\\.\\d{2}$',
    example: '150000.00',
    description:
      'Crypto markets: the strike in USD (2 decimals). At close_time the market resolves YES when the index is strictly above it, else NO; null for other markets',
  })
  strike: string | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Best bid, YES cents 1..99' })
  best_bid: number | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Best ask, YES cents 1..99' })
  best_ask: number | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Last trade, YES cents 1..99' })
  last_price: number | null;

  @ApiProperty({ type: 'integer', description: 'Contracts traded' })
  volume: number;

  @ApiProperty({
    type: 'string',
    nullable: true,
    example: 'spe_4c1f0b2a9e8d7c6b5a43',
    description: 'The sports event this market is about (GET /sports/events/{id}); null for others',
  })
  event_id: string | null;

  @ApiProperty({ enum: ['live', 'test'], description: 'Engine whose prices these are' })
  environment: 'live' | 'test';
}

export class MarketPageDto {
  @ApiProperty({ type: [MarketDto] })
  data: MarketDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}

export class ListMarketsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: MARKET_STATUSES })
  @OptionalField()
  @IsIn(MARKET_STATUSES)
  status?: MarketStatus;

  @ApiPropertyOptional({ enum: MARKET_CATEGORIES })
  @OptionalField()
  @IsIn(MARKET_CATEGORIES)
  category?: MarketCategory;
}
