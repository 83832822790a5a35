import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { CodePointLength, OptionalField, PlainText } from '../../../common/validation/fields.js';
import { IsInstant } from '../../../common/validation/instant.js';
import { CRYPTO_SYMBOLS } from '../../crypto/crypto-symbols.js';
import { USD_PATTERN } from '../../crypto/usd.js';
import { MARKET_CATEGORIES } from '../../markets/dto/market.dto.js';
import type { MarketCategory } from '../../markets/entities/market.entity.js';
import {
  DEFAULT_REFERENCE_PRICE,
  MAX_DESCRIPTION_LENGTH,
  MAX_TITLE_LENGTH,
  SLUG_PATTERN,
} from '../market-rules.js';

const TITLE = `1..${MAX_TITLE_LENGTH} characters of one line of visible text.`;
const DESCRIPTION = `Up to ${MAX_DESCRIPTION_LENGTH} characters of visible text (line breaks allowed).`;
const CLOSE_TIME = `When trading stops: an ISO 8601 date-time with Z or an offset, after now on the service clock (else 422 MARKET_RULE_VIOLATED, details.field close_time). Stored in UTC to the millisecond.`;

export class CreateMarketDto {
  @ApiProperty({ minLength: 1, maxLength: MAX_TITLE_LENGTH, description: TITLE })
  @IsString()
  @CodePointLength(1, MAX_TITLE_LENGTH)
  @PlainText()
  title: string;

  @ApiProperty({
    pattern: SLUG_PATTERN.source,
    example: 'rain-in-paris-2027-07-14',
    description:
      "Lower-case letters, digits and hyphens, 3..80 (else 400). Unique among the markets of the credential's world, seeded ones included (409 SLUG_TAKEN); the other world may use it too.",
  })
  @IsString()
  @Matches(SLUG_PATTERN, { message: 'slug must be 3..80 of a-z, 0-9 and -' })
  slug: string;

  @ApiProperty({ enum: MARKET_CATEGORIES })
  @IsIn(MARKET_CATEGORIES, { message: `category must be one of ${MARKET_CATEGORIES.join(', ')}` })
  category: MarketCategory;

  @ApiProperty({ format: 'date-time', description: CLOSE_TIME })
  @IsString()
  @IsInstant()
  close_time: string;

  @ApiPropertyOptional({
    maxLength: MAX_DESCRIPTION_LENGTH,
    description: `${DESCRIPTION} Omitted: empty.`,
  })
  @OptionalField()
  @IsString()
  @MaxLength(MAX_DESCRIPTION_LENGTH)
  @PlainText({ multiline: true })
  description?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 99,
    default: DEFAULT_REFERENCE_PRICE,
    description:
      'Paper world only (a live key: 422 MARKET_RULE_VIOLATED): the YES probability in cents the house starts quoting at; the price feed moves it from there.',
  })
  @OptionalField()
  @IsInt()
  @Min(1)
  @Max(99)
  reference_price?: number;

  @ApiPropertyOptional({
    example: 'spe_3f1c2b9a7d6e5f4a3b2c',
    description:
      "A sports event of the credential's world the market is about (unknown: 404 NOT_FOUND, details.event_id). Links the market to the event; the event's final resolves it as it does the event's own market (YES on a home win), unless its creator resolved it first.",
  })
  @OptionalField()
  @IsString()
  @MaxLength(40)
  event_id?: string;

  @ApiPropertyOptional({
    enum: CRYPTO_SYMBOLS,
    description:
      'The crypto index a CRYPTO market settles on at close_time (YES when the index is strictly above strike); needs strike and category CRYPTO (else 422 MARKET_RULE_VIOLATED). Another value: 400.',
  })
  @OptionalField()
  @IsIn(CRYPTO_SYMBOLS, { message: `index must be one of ${CRYPTO_SYMBOLS.join(', ')}` })
  index?: string;

  @ApiPropertyOptional({
    type: 'string',
    pattern: USD_PATTERN.source,
    example: '150000.00',
    description:
      'USD, up to 2 decimals, above 0; only with category CRYPTO and an index (else 422 MARKET_RULE_VIOLATED).',
  })
  @OptionalField()
  @IsString({ message: 'strike must be a decimal string such as "150000.00"' })
  @Matches(USD_PATTERN, { message: 'strike must be a decimal string such as "150000.00"' })
  strike?: string;
}

export class UpdateMarketDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: MAX_TITLE_LENGTH, description: TITLE })
  @OptionalField()
  @IsString()
  @CodePointLength(1, MAX_TITLE_LENGTH)
  @PlainText()
  title?: string;

  @ApiPropertyOptional({ maxLength: MAX_DESCRIPTION_LENGTH, description: DESCRIPTION })
  @OptionalField()
  @IsString()
  @MaxLength(MAX_DESCRIPTION_LENGTH)
  @PlainText({ multiline: true })
  description?: string;

  @ApiPropertyOptional({ format: 'date-time', description: CLOSE_TIME })
  @OptionalField()
  @IsString()
  @IsInstant()
  close_time?: string;

  @ApiPropertyOptional({
    enum: ['OPEN', 'HALTED'],
    description:
      'HALTED: the market takes no new orders (MARKET_NOT_OPEN), resting ones stay and can be cancelled, the house withdraws; OPEN reopens a halted market. A CLOSED or RESOLVED market: 422 MARKET_NOT_OPEN.',
  })
  @OptionalField()
  @IsIn(['OPEN', 'HALTED'], { message: 'status must be OPEN or HALTED' })
  status?: 'OPEN' | 'HALTED';
}
