import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { PlainText } from '../../../common/validation/fields.js';

export const MIN_TTL_SECONDS = 60;
export const MAX_TTL_SECONDS = 86_400;
export const DEFAULT_TTL_SECONDS = 3_600;

export class CreateWorldDto {
  @ApiPropertyOptional({ maxLength: 100, example: 'ci-job-4711' })
  @IsOptional()
  @IsString()
  @Length(1, 100)
  @PlainText()
  name?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: -2147483648,
    maximum: 2147483647,
    description: "The price feed's seed (default: random); the same seed gives the same price path",
  })
  @IsOptional()
  @IsInt()
  @Min(-2147483648)
  @Max(2147483647)
  seed?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: MIN_TTL_SECONDS,
    maximum: MAX_TTL_SECONDS,
    default: DEFAULT_TTL_SECONDS,
  })
  @IsOptional()
  @IsInt()
  @Min(MIN_TTL_SECONDS)
  @Max(MAX_TTL_SECONDS)
  ttl_seconds?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 1_000_000_000_000,
    description:
      "What the world's accounts open with, in cents (default SANDBOX_STARTING_BALANCE_CENTS)",
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(1_000_000_000_000)
  starting_balance_cents?: number;
}

export class WorldDto {
  @ApiProperty({ example: 'wld_01jd5x7k2m0000abcdefgh' }) id: string;
  @ApiProperty({ type: 'string', nullable: true }) name: string | null;
  @ApiProperty({ type: 'integer' }) seed: number;
  @ApiProperty({ type: 'integer' }) starting_balance_cents: number;
  @ApiProperty({ enum: ['READY'] }) status: string;
  @ApiProperty({ description: "The world key's id (revoked when the world is deleted)" })
  key_id: string;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class CreatedWorldDto extends WorldDto {
  @ApiProperty({
    description: 'The world key, shown this once: it reaches this world only (svc_test_...)',
  })
  key: string;
}

export class WorldPageDto {
  @ApiProperty({ type: [WorldDto] }) data: WorldDto[];
  @ApiProperty({ type: 'string', nullable: true }) next_cursor: string | null;
}
