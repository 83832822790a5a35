import { Body, Controller, Get, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { AuthService } from './auth.service.js';
import {
  LoginDto,
  MeDto,
  RegisterDto,
  SessionDto,
  UserDto,
  VerificationSentDto,
  VerifyEmailDto,
} from './dto/auth.dto.js';

@ApiTags('Developer')
@Controller('auth')
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  @Post('register')
  @Endpoint({
    summary: 'Create an account',
    description:
      'Sends a verification email (outbox, and SMTP when configured). Write scopes need a verified email.',
    auth: 'public',
    status: 201,
    type: UserDto,
    errors: [400, 409],
    codes: { 409: ['EMAIL_TAKEN'] },
  })
  register(@Body() body: RegisterDto): Promise<UserDto> {
    return this.auth.register(body.email, body.password);
  }

  @Post('verify-email')
  @Endpoint({
    summary: 'Verify an email address with the mailed token',
    auth: 'public',
    type: UserDto,
    errors: [400, 422],
    codes: { 422: ['VERIFICATION_TOKEN_INVALID'] },
  })
  verify(@Body() body: VerifyEmailDto): Promise<UserDto> {
    return this.auth.verifyEmail(body.token);
  }

  @Post('verify-email/resend')
  @Endpoint({
    summary: 'Send a new verification email to the caller (session token)',
    description:
      "For an account whose verification email was lost or whose token expired: log in (an unverified account gets a read-only session) and call this. A new token goes out (48 hours); earlier unused ones stop working. At most 3 a minute, and 10 verification emails in any 24 hours (the registration's included): more is 429 QUOTA_EXCEEDED (details.period: day) with Retry-After.",
    auth: 'session',
    status: 202,
    type: VerificationSentDto,
    routeLimitPerMinute: 3,
    errors: [409, 429],
    codes: { 409: ['EMAIL_ALREADY_VERIFIED'] },
  })
  resendVerification(@Cred() c: Credential): Promise<VerificationSentDto> {
    return this.auth.resendVerification(c);
  }

  @Post('login')
  @Endpoint({
    summary: 'Log in: returns a first-party session token (12 hours)',
    description:
      "Session tokens are for the service's own web and mobile apps and for managing API keys; integrations use API keys.",
    auth: 'public',
    type: SessionDto,
    errors: [400, 401],
    codes: { 401: ['INVALID_CREDENTIALS'] },
  })
  login(@Body() body: LoginDto): Promise<SessionDto> {
    return this.auth.login(body.email, body.password);
  }

  @Get('me')
  @Endpoint({
    summary: 'The caller: user and credential (key or session)',
    auth: 'key',
    type: MeDto,
  })
  me(@Cred() c: Credential): Promise<MeDto> {
    return this.auth.me(c);
  }
}
