import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, Matches } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto.js';
import { OptionalField } from '../../../common/validation/fields.js';
import { IsInstant } from '../../../common/validation/instant.js';
import { CANDLE_INTERVAL_NAMES, CRYPTO_SYMBOLS, type CandleInterval } from '../crypto-symbols.js';
import { POSITIVE_USD_PATTERN } from '../usd.js';

const USD = {
  type: 'string',
  pattern: '^\\d+\\.\\d{2}$',
} as const;

export class CryptoPriceDto {
  @ApiProperty({ enum: CRYPTO_SYMBOLS, example: 'BTC-USD' })
  symbol: string;

  @ApiProperty({ ...USD, example: '95000.00', description: 'Index price in USD, 2 decimals' })
  price: string;

  @ApiProperty({
    format: 'date-time',
    description: 'Service clock time the price was set (a walk step or a sandbox set)',
  })
  as_of: string;
}

export class CryptoPriceListDto {
  @ApiProperty({ type: [CryptoPriceDto], description: 'BTC-USD, ETH-USD, SOL-USD, in that order' })
  data: CryptoPriceDto[];
}

export class CandleDto {
  @ApiProperty({
    format: 'date-time',
    description: 'Start of the bucket (a multiple of the interval since the Unix epoch, UTC)',
  })
  time: string;

  @ApiProperty({ ...USD, description: 'First price of the bucket, USD' })
  open: string;

  @ApiProperty({ ...USD, description: 'Highest price of the bucket, USD' })
  high: string;

  @ApiProperty({ ...USD, description: 'Lowest price of the bucket, USD' })
  low: string;

  @ApiProperty({ ...USD, description: 'Last price of the bucket, USD' })
  close: string;
}

export class CandlePageDto {
  @ApiProperty({ type: [CandleDto], description: 'Oldest first' })
  data: CandleDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}

export class CandleQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: CANDLE_INTERVAL_NAMES, default: '1m', description: 'Candle length' })
  @OptionalField()
  @IsIn(CANDLE_INTERVAL_NAMES, { message: 'interval must be one of 1m, 1h, 1d' })
  interval?: CandleInterval;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'Only candles starting at or after this instant (ISO 8601 with Z or an offset)',
  })
  @OptionalField()
  @IsInstant()
  from?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description:
      'Only candles starting before this instant (ISO 8601 with Z or an offset; exclusive). With from: after it, at most 366 days later',
  })
  @OptionalField()
  @IsInstant()
  to?: string;
}

export class SetCryptoPriceDto {
  @ApiProperty({
    type: 'string',
    pattern: POSITIVE_USD_PATTERN.source,
    example: '160000.00',
    description: 'New index price in USD: digits with at most 2 decimals, 0.01..9999999999.99',
  })
  @IsString({ message: 'price must be a decimal string such as "123.45"' })
  @Matches(POSITIVE_USD_PATTERN, {
    message: 'price must be a decimal string from 0.01 to 9999999999.99 such as "123.45"',
  })
  price: string;
}
