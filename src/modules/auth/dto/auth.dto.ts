import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length, MaxLength } from 'class-validator';
import { Email } from '../../../common/validation/fields.js';

export class RegisterDto {
  @ApiProperty({ example: 'dev@example.com', format: 'email', maxLength: 320 })
  @IsString()
  @Email()
  @MaxLength(320)
  email: string;

  @ApiProperty({ minLength: 10, maxLength: 200, description: 'At least 10 characters' })
  @IsString()
  @Length(10, 200)
  password: string;
}

export class LoginDto {
  @ApiProperty({ example: 'trader@sandbox.test', format: 'email', maxLength: 320 })
  @IsString()
  @Email()
  @MaxLength(320)
  email: string;

  @ApiProperty({ example: 'sandbox-password', minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  password: string;
}

export class VerifyEmailDto {
  @ApiProperty({
    minLength: 10,
    maxLength: 200,
    description: 'The token from the verification email',
  })
  @IsString()
  @Length(10, 200)
  token: string;
}

export class VerificationSentDto {
  @ApiProperty({ description: 'Where the new verification email went' })
  email: string;

  @ApiProperty({ format: 'date-time', description: 'When the new token expires (48 hours)' })
  expires_at: string;
}

export class UserDto {
  @ApiProperty({ example: 'usr_01jd3x000000000000abcd' })
  id: string;

  @ApiProperty()
  email: string;

  @ApiProperty()
  email_verified: boolean;

  @ApiProperty({
    example: 'user_4f2a9c1e',
    description: 'Generated at sign-up; change it with PATCH /api/v1/users/me',
  })
  username: string;

  @ApiProperty({ type: [String], enum: ['ADMIN', 'SUPER_ADMIN', 'CREATOR'] })
  roles: string[];
}

export class SessionDto {
  @ApiProperty({ description: 'First-party session JWT; send as Authorization: Bearer <token>' })
  token: string;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;
}

export class CredentialDto {
  @ApiProperty({ enum: ['API_KEY', 'SESSION'] })
  type: 'API_KEY' | 'SESSION';

  @ApiProperty({ type: 'string', nullable: true })
  key_id: string | null;

  @ApiProperty({ enum: ['live', 'test'] })
  environment: 'live' | 'test';

  @ApiProperty({ type: [String] })
  scopes: string[];

  @ApiProperty({ enum: ['FREE', 'PRO', 'ENTERPRISE'] })
  tier: 'FREE' | 'PRO' | 'ENTERPRISE';
}

export class MeDto {
  @ApiProperty({ type: UserDto })
  user: UserDto;

  @ApiProperty({ type: CredentialDto })
  credential: CredentialDto;
}
