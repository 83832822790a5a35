import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  Length,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { ALL_SCOPES, type Scope } from '../../../common/api/scopes.js';
import { TIERS, type Tier } from '../entities/api-key.entity.js';
import { OptionalField, PlainText } from '../../../common/validation/fields.js';

export class CreateApiKeyDto {
  @ApiProperty({
    maxLength: 100,
    example: 'ci-bot',
    description:
      'One line of visible text: no control characters, line or paragraph separators (U+2028, U+2029), bidirectional overrides or byte order mark (U+FEFF), and at least one character that shows',
  })
  @IsString()
  @Length(1, 100)
  @PlainText()
  name: string;

  @ApiProperty({ enum: ['live', 'test'], description: 'Fixes the prefix: svc_live_ or svc_test_' })
  @IsIn(['live', 'test'])
  environment: 'live' | 'test';

  @ApiPropertyOptional({
    type: [String],
    enum: ALL_SCOPES,
    description:
      'Default: the read-only scopes. Write scopes need acknowledge_write_scopes and a verified email; admin scopes are never granted.',
  })
  @OptionalField()
  @IsArray()
  @ArrayUnique()
  @ArrayMaxSize(40)
  @IsIn(ALL_SCOPES, { each: true })
  scopes?: Scope[];

  @ApiPropertyOptional({ description: 'Must be true when write scopes are requested' })
  @OptionalField()
  @IsBoolean()
  acknowledge_write_scopes?: boolean;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 365,
    description: 'Omitted: no expiry',
  })
  @OptionalField()
  @IsInt()
  @Min(1)
  @Max(365)
  expires_in_days?: number;

  @ApiPropertyOptional({ description: 'When true every request must be HMAC-signed' })
  @OptionalField()
  @IsBoolean()
  signing_required?: boolean;
}

export class ApiKeyDto {
  @ApiProperty({ example: 'key_01jd3x000000000000abcd' })
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty({ enum: ['live', 'test'] })
  environment: 'live' | 'test';

  @ApiProperty({
    description: 'First characters of the key, safe to display',
    example: 'svc_test_Ab12',
  })
  prefix: string;

  @ApiProperty({ type: [String] })
  scopes: string[];

  @ApiProperty({ enum: TIERS })
  tier: Tier;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  expires_at: string | null;

  @ApiProperty()
  signing_required: boolean;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  last_used_at: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  revoked_at: string | null;
}

/** POST /api-keys/{id}/rotate: the body is optional. */
export class RotateApiKeyDto {
  @ApiPropertyOptional({
    description:
      'Also replace the signing secret of a signing-required key (after a leak, say): the new one is returned once as signing_secret and the old one stops signing at once. Default false: the signing secret stays. On a key without signing_required (it has no signing secret to replace) 409 API_KEY_HAS_NO_SIGNING_SECRET, and nothing is rotated.',
    default: false,
  })
  @OptionalField()
  @IsBoolean()
  rotate_signing_secret?: boolean;
}

export class CreatedApiKeyDto extends ApiKeyDto {
  @ApiProperty({
    description: 'The full key. Shown this once; store it now.',
    example: 'svc_test_...',
  })
  key: string;

  @ApiPropertyOptional({
    description:
      'svc_sign_...: at creation when signing_required, and by a rotation with rotate_signing_secret; shown this once',
  })
  signing_secret?: string;
}

export class ApiKeyPageDto {
  @ApiProperty({ type: [ApiKeyDto] })
  data: ApiKeyDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}

export class TierRequestBodyDto {
  @ApiProperty({ enum: TIERS })
  @IsIn(TIERS)
  tier: Tier;

  @ApiPropertyOptional({
    maxLength: 1000,
    description: 'Visible text (line breaks allowed): no other control characters',
  })
  @OptionalField()
  @IsString()
  @MaxLength(1000)
  @PlainText({ multiline: true })
  reason?: string;
}

export class TierRequestDto {
  @ApiProperty({ example: 'tier_01jd3x000000000000abcd' })
  id: string;

  @ApiProperty()
  key_id: string;

  @ApiProperty({ enum: TIERS })
  tier: Tier;

  @ApiProperty()
  reason: string;

  @ApiProperty({ enum: ['PENDING', 'APPROVED', 'DENIED'] })
  status: 'PENDING' | 'APPROVED' | 'DENIED';

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  decided_at: string | null;
}

export class TierRequestPageDto {
  @ApiProperty({ type: [TierRequestDto] })
  data: TierRequestDto[];

  @ApiProperty({ type: 'string', nullable: true })
  next_cursor: string | null;
}
