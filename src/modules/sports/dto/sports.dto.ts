import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { PageQueryDto } from '../../../common/pagination/page-query.dto.js';
import { OptionalField } from '../../../common/validation/fields.js';
import { ResolveResultDto } from '../../sandbox/dto/sandbox.dto.js';
import type { EventStatus } from '../sports.repository.js';

export const EVENT_STATUSES: EventStatus[] = ['SCHEDULED', 'LIVE', 'FINAL'];
export const MAX_SCORE = 999;

export class LeagueCountDto {
  @ApiProperty({ example: 'NBA' })
  league: string;

  @ApiProperty({ type: 'integer', description: 'Events of this league, whatever their status' })
  event_count: number;

  @ApiProperty({ type: 'integer', description: 'Markets linked to those events' })
  market_count: number;
}

export class SportDto {
  @ApiProperty({ example: 'basketball', description: 'Lower case, words joined by _' })
  sport: string;

  @ApiProperty({ type: [LeagueCountDto], description: 'Ordered by league' })
  leagues: LeagueCountDto[];
}

export class SportListDto {
  @ApiProperty({ type: [SportDto], description: 'Ordered by sport' })
  data: SportDto[];
}

export class ScoreDto {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: MAX_SCORE })
  home: number;

  @ApiProperty({ type: 'integer', minimum: 0, maximum: MAX_SCORE })
  away: number;
}

export class SportsEventDto {
  @ApiProperty({ example: 'spe_4c1f0b2a9e8d7c6b5a43' })
  id: string;

  @ApiProperty({ example: 'basketball' })
  sport: string;

  @ApiProperty({ example: 'NBA' })
  league: string;

  @ApiProperty({ example: 'Boston Celtics vs Los Angeles Lakers' })
  title: string;

  @ApiProperty({ example: 'Boston Celtics' })
  home: string;

  @ApiProperty({ example: 'Los Angeles Lakers' })
  away: string;

  @ApiProperty({ format: 'date-time' })
  start_time: string;

  @ApiProperty({
    enum: EVENT_STATUSES,
    description:
      'On the service clock: SCHEDULED before start_time, LIVE from start_time, FINAL once a final score is recorded',
  })
  status: EventStatus;

  @ApiProperty({ type: ScoreDto, nullable: true, description: 'The final score; null until FINAL' })
  score: ScoreDto | null;

  @ApiProperty({ enum: ['HOME', 'AWAY', 'DRAW'], nullable: true, type: 'string' })
  winner: 'HOME' | 'AWAY' | 'DRAW' | null;

  @ApiProperty({
    type: [String],
    description: 'Linked markets of this world (GET /markets/{id}), by id',
  })
  market_ids: string[];
}

export class SportsEventPageDto {
  @ApiProperty({ type: [SportsEventDto] })
  data: SportsEventDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}

export class ListSportsEventsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ example: 'soccer', description: 'A sport as GET /sports names it' })
  @OptionalField()
  @IsString()
  @Matches(/^[a-z][a-z_]{0,39}$/, { message: 'sport must be lower case letters and _ (1..40)' })
  sport?: string;

  @ApiPropertyOptional({ example: 'Premier League', description: 'A league, exactly as named' })
  @OptionalField()
  @IsString()
  @MinLength(1)
  @MaxLength(60)
  league?: string;

  @ApiPropertyOptional({ enum: EVENT_STATUSES })
  @OptionalField()
  @IsIn(EVENT_STATUSES)
  status?: EventStatus;
}

export class FinalScoreDto {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: MAX_SCORE, example: 3 })
  @IsInt({ message: 'home_score must be an integer' })
  @Min(0, { message: 'home_score must be at least 0' })
  @Max(MAX_SCORE, { message: `home_score must be at most ${MAX_SCORE}` })
  home_score: number;

  @ApiProperty({ type: 'integer', minimum: 0, maximum: MAX_SCORE, example: 1 })
  @IsInt({ message: 'away_score must be an integer' })
  @Min(0, { message: 'away_score must be at least 0' })
  @Max(MAX_SCORE, { message: `away_score must be at most ${MAX_SCORE}` })
  away_score: number;
}

export class ResolvedMarketDto extends ResolveResultDto {
  @ApiProperty({ example: 'HOME_WINS', description: 'HOME_WINS, AWAY_WINS or OVER_<n>' })
  rule: string;

  @ApiProperty({
    description:
      'false: the market was already RESOLVED before this final and was left as it was (outcome is its own; the counts are 0)',
  })
  resolved_now: boolean;
}

export class FinalResultDto {
  @ApiProperty({ type: SportsEventDto, description: 'The event, now FINAL' })
  event: SportsEventDto;

  @ApiProperty({ type: [ResolvedMarketDto], description: 'Each linked market, by id' })
  markets: ResolvedMarketDto[];
}
