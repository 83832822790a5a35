import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInstant } from '../../../common/validation/instant.js';
import { PageQueryDto } from '../../../common/pagination/page-query.dto.js';
import { OptionalField } from '../../../common/validation/fields.js';

export class IndexDto {
  @ApiProperty({
    example: 'sports',
    description: 'A market category in lower case, or `all` (every category)',
  })
  slug: string;

  @ApiProperty({ example: 'Sports markets' })
  name: string;

  @ApiProperty({
    type: 'number',
    nullable: true,
    example: 47.25,
    description:
      'Mean mark price, YES cents rounded to 2 decimals, of the OPEN or HALTED markets of the index that have a mark (the mid of the best bid and ask when both exist, else the last trade price); null when none has',
  })
  value: number | null;

  @ApiProperty({ type: 'integer', description: 'Markets included in value' })
  market_count: number;

  @ApiProperty({ format: 'date-time', description: 'Service clock time of the values' })
  as_of: string;
}

export class IndexListDto {
  @ApiProperty({ type: [IndexDto], description: 'Ordered by slug' })
  data: IndexDto[];
}

export class IndexPointDto {
  @ApiProperty({
    format: 'date-time',
    description: 'The sampling boundary (a multiple of INDEX_SAMPLE_INTERVAL_MS)',
  })
  time: string;

  @ApiProperty({ type: 'number', nullable: true, example: 47.25, description: 'As IndexDto.value' })
  value: number | null;

  @ApiProperty({ type: 'integer' })
  market_count: number;
}

export class IndexHistoryPageDto {
  @ApiProperty({ type: [IndexPointDto], description: 'Oldest first' })
  data: IndexPointDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}

export class IndexHistoryQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    format: 'date-time',
    description: 'Only points at or after this instant (ISO 8601 with Z or an offset)',
  })
  @OptionalField()
  @IsInstant()
  from?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'Only points before this instant (ISO 8601 with Z or an offset; exclusive)',
  })
  @OptionalField()
  @IsInstant()
  to?: string;
}
