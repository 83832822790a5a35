import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto.js';
import { OptionalField } from '../../../common/validation/fields.js';
import { AuthorDto } from '../../users/dto/author.dto.js';
import { LEADERBOARD_PERIODS, type LeaderboardPeriod } from '../leaderboard-math.js';

export class LeaderboardQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    enum: LEADERBOARD_PERIODS,
    default: 'ALL',
    description:
      'DAY: since 00:00 UTC today; WEEK: since Monday 00:00 UTC; MONTH: since the 1st 00:00 UTC; ALL: everything',
  })
  @OptionalField()
  @IsString()
  @IsIn(LEADERBOARD_PERIODS, { message: `period must be one of ${LEADERBOARD_PERIODS.join(', ')}` })
  period?: LeaderboardPeriod;
}

export class LeaderboardEntryDto {
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description:
      '1 + the number of listed (PUBLIC) participants with a strictly greater realized P&L over the period (ties share a rank: 1, 2, 2, 4)',
  })
  rank: number;

  @ApiProperty({ type: AuthorDto })
  user: AuthorDto;

  @ApiProperty({ type: 'integer', description: 'Realized P&L over the period, in cents' })
  realized_pnl_cents: number;
}

export class LeaderboardPageDto {
  @ApiProperty({ enum: LEADERBOARD_PERIODS })
  period: LeaderboardPeriod;

  @ApiProperty({ format: 'date-time', description: 'The service time the board was computed at' })
  as_of: string;

  @ApiProperty({ type: [LeaderboardEntryDto], description: 'Best first; ties by user id' })
  data: LeaderboardEntryDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}
