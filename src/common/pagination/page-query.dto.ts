import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { DecimalIntegerQuery, OptionalField } from '../validation/fields.js';

/** `?limit=` (1..200, default 50) and `?cursor=` of every list. */
export class PageQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 200, default: 50 })
  @OptionalField()
  @DecimalIntegerQuery()
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;

  @ApiPropertyOptional({ description: 'Opaque cursor from a previous page (next_cursor)' })
  @OptionalField()
  @IsString()
  @MaxLength(500)
  cursor?: string;
}
