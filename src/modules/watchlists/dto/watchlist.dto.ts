import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsString, Matches } from 'class-validator';
import { MARKET_ID_SOURCE } from '../../../common/ids/id-patterns.js';
import { MARKET_ID } from '../../../common/ids/id-patterns.js';
import { CodePointLength, OptionalField, PlainText } from '../../../common/validation/fields.js';
import { MARKET_STATUSES } from '../../markets/dto/market.dto.js';
import type { MarketStatus } from '../../markets/entities/market.entity.js';
import { MAX_NAME_LENGTH, MAX_WATCHLIST_MARKETS } from '../watchlist-rules.js';

const NAME_TEXT = `1..${MAX_NAME_LENGTH} characters of one line of visible text (no control characters, line or paragraph separators U+2028/U+2029, bidirectional overrides or byte order mark U+FEFF; something that shows), unique among your watchlists of this world ignoring case (Unicode-aware: compared after NFC normalization and lower-casing). Returned exactly as sent.`;

const MARKET_IDS_TEXT = `Market ids of the credential's world, in the order to keep; no id twice (400 VALIDATION_FAILED naming market_ids), each shaped mkt_... (else 400 naming market_ids[i]). More than ${MAX_WATCHLIST_MARKETS} is 422 WATCHLIST_LIMIT_REACHED (details.limit ${MAX_WATCHLIST_MARKETS}); an unknown market 404 NOT_FOUND (details.market_id).`;

/** Each id of market_ids, as checkedMarketIds refuses it (400 naming market_ids[i]). */
const MARKET_ID_ITEM = { type: 'string', pattern: MARKET_ID_SOURCE } as const;

export class CreateWatchlistDto {
  @ApiProperty({
    minLength: 1,
    maxLength: MAX_NAME_LENGTH,
    example: 'Crypto',
    description: NAME_TEXT,
  })
  @IsString()
  @CodePointLength(1, MAX_NAME_LENGTH)
  @PlainText()
  name: string;

  @ApiPropertyOptional({
    type: 'array',
    items: MARKET_ID_ITEM,
    maxItems: MAX_WATCHLIST_MARKETS,
    uniqueItems: true,
    example: ['mkt_3f1c2b9a7d6e5f4a3b2c'],
    description: `${MARKET_IDS_TEXT} Omitted: an empty list.`,
  })
  @OptionalField()
  @IsArray()
  @IsString({ each: true })
  market_ids?: string[];
}

export class UpdateWatchlistDto {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: MAX_NAME_LENGTH,
    example: 'Crypto majors',
    description: NAME_TEXT,
  })
  @OptionalField()
  @IsString()
  @CodePointLength(1, MAX_NAME_LENGTH)
  @PlainText()
  name?: string;

  @ApiPropertyOptional({
    type: 'array',
    items: MARKET_ID_ITEM,
    maxItems: MAX_WATCHLIST_MARKETS,
    uniqueItems: true,
    description: `Replaces the list's markets with exactly these, in this order ([] empties it). ${MARKET_IDS_TEXT}`,
  })
  @OptionalField()
  @IsArray()
  @IsString({ each: true })
  market_ids?: string[];
}

export class AddWatchlistMarketDto {
  @ApiProperty({
    pattern: MARKET_ID_SOURCE,
    example: 'mkt_3f1c2b9a7d6e5f4a3b2c',
    description:
      "A market of the credential's world (404 NOT_FOUND, details.market_id, if it has none such)",
  })
  @IsString()
  @Matches(MARKET_ID, { message: 'market_id must be a market id (mkt_ followed by a-z, 0-9)' })
  market_id: string;
}

/** A market of a watchlist, priced by the engine of the caller's world. */
export class WatchlistMarketDto {
  @ApiProperty({ example: 'mkt_3f1c2b9a7d6e5f4a3b2c' })
  id: string;

  @ApiProperty({ example: 'btc-above-150k-2027-06-30' })
  slug: string;

  @ApiProperty()
  title: string;

  @ApiProperty({ enum: MARKET_STATUSES })
  status: MarketStatus;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Last trade, YES cents 1..99' })
  last_price: number | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Best bid, YES cents 1..99' })
  best_bid: number | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Best ask, YES cents 1..99' })
  best_ask: number | null;
}

export class WatchlistDto {
  @ApiProperty({ example: 'wl_01jd3x000000000000abcd' })
  id: string;

  @ApiProperty({ example: 'Crypto' })
  name: string;

  @ApiProperty({
    type: [WatchlistMarketDto],
    description: "In the list's order, with the prices of your world's engine",
  })
  markets: WatchlistMarketDto[];

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({
    format: 'date-time',
    description: 'Last change of the name or the markets',
  })
  updated_at: string;

  @ApiProperty({
    enum: ['live', 'test'],
    description: 'The world the list belongs to: test for test keys (paper), live otherwise',
  })
  environment: 'live' | 'test';
}

export class WatchlistPageDto {
  @ApiProperty({ type: [WatchlistDto], description: 'Oldest first (creation order)' })
  data: WatchlistDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}
