import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto.js';
import { OptionalField } from '../../../common/validation/fields.js';

export class PositionDto {
  @ApiProperty({ example: 'mkt_3f1c2b9a7d6e5f4a3b2c' })
  market_id: string;

  @ApiProperty({
    type: 'string',
    enum: ['YES', 'NO'],
    nullable: true,
    description:
      'The contract held. Positions are netted: holding YES and buying NO redeems pairs, so at most one side is held. null only for a closed position (include_closed=true).',
  })
  side: 'YES' | 'NO' | null;

  @ApiProperty({ type: 'integer', description: 'Contracts held (0 for a closed position)' })
  quantity: number;

  @ApiProperty({
    type: 'number',
    nullable: true,
    description:
      "cost_basis_cents / quantity in the held side's own cents (may be fractional); null when closed",
  })
  average_price: number | null;

  @ApiProperty({
    type: 'integer',
    description: "What the held contracts cost, in the held side's own cents",
  })
  cost_basis_cents: number;

  @ApiProperty({
    type: 'integer',
    description:
      'Closed proceeds minus their cost basis, settlement payouts included, in this market since the account opened (or was last reset)',
  })
  realized_pnl_cents: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description:
      "quantity x mark (in the held side's terms: mark_price for YES, 100 - mark_price for NO) - cost_basis_cents, rounded half up to a whole cent; 0 when closed; null when the market has no mark price",
  })
  unrealized_pnl_cents: number | null;

  @ApiProperty({
    type: 'number',
    nullable: true,
    description:
      'Mark price in YES cents from the engine of your credential: the mid of the best bid and best ask when both exist (may end in .5), else the last trade price, else null',
  })
  mark_price: number | null;
}

export class PositionPageDto {
  @ApiProperty({ type: [PositionDto], description: 'Ordered by market_id' })
  data: PositionDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}

export class ListPositionsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    default: 'false',
    description: 'Also list closed (flat) positions of markets you traded, for their realized P&L',
  })
  @OptionalField()
  @IsIn(['true', 'false'])
  include_closed?: 'true' | 'false';
}
