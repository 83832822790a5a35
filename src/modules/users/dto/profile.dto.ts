import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, IsUrl, Matches, MaxLength } from 'class-validator';
import {
  CodePointLength,
  NullableField,
  OptionalField,
  PlainText,
} from '../../../common/validation/fields.js';
import type { ProfileVisibility } from '../entities/user.entity.js';
import { RESERVED_USERNAME_PREFIX, USERNAME_PATTERN } from '../username.js';

/** Any text not starting with the account-id prefix. */
const NOT_RESERVED = new RegExp(`^(?!${RESERVED_USERNAME_PREFIX})`);

export const PROFILE_VISIBILITIES: readonly ProfileVisibility[] = ['PUBLIC', 'PRIVATE'];

/** What anyone may see of a PUBLIC account: never the email or the roles. */
export class PublicProfileDto {
  @ApiProperty({ example: 'usr_01jd3x000000000000abcd' })
  id: string;

  @ApiProperty({ example: 'user_4f2a9c1e', pattern: USERNAME_PATTERN.source })
  username: string;

  @ApiProperty({ type: 'string', nullable: true, maxLength: 50, example: 'Ada' })
  display_name: string | null;

  @ApiProperty({ type: 'string', nullable: true, maxLength: 500 })
  bio: string | null;

  @ApiProperty({ type: 'string', format: 'uri', nullable: true, maxLength: 500 })
  avatar_url: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

/** The caller's own account: the public profile plus what only its owner sees. */
export class OwnProfileDto extends PublicProfileDto {
  @ApiProperty({ format: 'email' })
  email: string;

  @ApiProperty()
  email_verified: boolean;

  @ApiProperty({
    enum: PROFILE_VISIBILITIES,
    description: 'PRIVATE: GET /users/{id_or_username} answers 404 and no leaderboard lists you',
  })
  profile_visibility: ProfileVisibility;

  @ApiProperty({ type: [String], enum: ['ADMIN', 'SUPER_ADMIN', 'CREATOR'] })
  roles: string[];
}

/**
 * PATCH /users/me: every field optional, all applied or none. null clears display_name, bio and
 * avatar_url; username and profile_visibility always have a value, so null is refused for them.
 */
export class UpdateProfileDto {
  @ApiPropertyOptional({
    pattern: USERNAME_PATTERN.source,
    minLength: 3,
    maxLength: 30,
    description: `3..30 of lower-case letters, digits and underscores; unique; not starting with \`${RESERVED_USERNAME_PREFIX}\` (account ids do, and GET /users/{id_or_username} matches an id first)`,
  })
  @OptionalField()
  @IsString()
  @Matches(USERNAME_PATTERN, {
    message: 'username must be 3..30 of lower-case letters, digits and underscores ([a-z0-9_])',
  })
  @Matches(NOT_RESERVED, {
    message: `username must not start with ${RESERVED_USERNAME_PREFIX}: account ids do, and /users/{id_or_username} would find that account instead`,
  })
  username?: string;

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    minLength: 1,
    maxLength: 50,
    description:
      'One line of visible text: no control characters, line or paragraph separators (U+2028, U+2029), bidirectional overrides or byte order mark (U+FEFF); null clears it',
  })
  @NullableField()
  @IsString()
  @CodePointLength(1, 50)
  @PlainText()
  display_name?: string | null;

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    maxLength: 500,
    description:
      'Up to 500 characters; line breaks and tabs allowed, no other control characters, bidirectional overrides or byte order mark (U+FEFF); empty, or showing something; null clears it',
  })
  @NullableField()
  @IsString()
  @CodePointLength(0, 500)
  @PlainText({ multiline: true, showsUnlessEmpty: true })
  bio?: string | null;

  @ApiPropertyOptional({
    type: 'string',
    format: 'uri',
    nullable: true,
    maxLength: 500,
    description:
      'An https URL (no user or password in it) of at most 500 characters; null clears it',
  })
  @NullableField()
  @IsString()
  @MaxLength(500)
  @IsUrl(
    {
      protocols: ['https'],
      require_protocol: true,
      require_valid_protocol: true,
      disallow_auth: true,
    },
    { message: 'avatar_url must be an https URL' },
  )
  avatar_url?: string | null;

  @ApiPropertyOptional({ enum: PROFILE_VISIBILITIES })
  @OptionalField()
  @IsString()
  @IsIn(PROFILE_VISIBILITIES)
  profile_visibility?: ProfileVisibility;
}
