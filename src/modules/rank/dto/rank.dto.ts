import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInstant } from '../../../common/validation/instant.js';
import { PageQueryDto } from '../../../common/pagination/page-query.dto.js';
import { OptionalField } from '../../../common/validation/fields.js';

export class RankPointDto {
  @ApiProperty({
    format: 'date-time',
    example: '2026-11-23T00:00:00.000Z',
    description: 'The sampled boundary: a multiple of RANK_SAMPLE_INTERVAL_MS (default 00:00 UTC)',
  })
  time: string;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description:
      '1 + the number of participants with a strictly greater realized P&L (ties share a rank: 1, 1, 3)',
  })
  rank: number;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description:
      'Accounts on the leaderboard of this engine at that time: those holding at least one position (traded or placed an order in some market); the house is never one',
  })
  participants: number;

  @ApiProperty({
    type: 'integer',
    description:
      'Your realized P&L at that time, summed over your positions of this engine, in cents (the score)',
  })
  realized_pnl_cents: number;
}

export class RankHistoryPageDto {
  @ApiProperty({ type: [RankPointDto], description: 'Oldest first' })
  data: RankPointDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}

export class RankHistoryQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    format: 'date-time',
    description:
      'Only points at or after this instant (ISO 8601: a date, or a date-time with Z or an offset)',
  })
  @OptionalField()
  @IsInstant()
  from?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'Only points before this instant (ISO 8601; exclusive)',
  })
  @OptionalField()
  @IsInstant()
  to?: string;
}
