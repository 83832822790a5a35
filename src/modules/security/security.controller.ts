import { Body, Controller, Get, Post } from '@nestjs/common';
import { ApiProperty, ApiTags } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { TermsService, type TermsStatus } from '../auth/terms.service.js';
import { MfaService } from './mfa.service.js';

export class StepUpDto {
  @ApiProperty({ example: '123456', description: 'Current 6-digit TOTP code' })
  @IsString()
  @Matches(/^\d{6}$/, { message: 'code must be 6 digits' })
  code: string;
}

export class AcceptTermsDto {
  @ApiProperty({ example: '2026-07-17' })
  @IsString()
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'version must be a date like 2026-07-17' })
  version: string;
}

class EnrollDto {
  @ApiProperty({ description: 'Base32 TOTP seed (shown once)' })
  secret: string;

  @ApiProperty({ example: 'otpauth://totp/...' })
  otpauth_url: string;
}

class StepUpResultDto {
  @ApiProperty({ format: 'date-time' })
  stepped_up_until: string;
}

class TermsStatusDto {
  @ApiProperty({ example: '2026-07-17' })
  version: string;

  @ApiProperty({ description: 'DEVELOPER_TERMS_REQUIRED' })
  required: boolean;

  @ApiProperty()
  accepted: boolean;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  accepted_at: string | null;

  @ApiProperty({ description: 'Always false: the terms are a draft pending legal review' })
  binding: boolean;

  @ApiProperty()
  note: string;
}

@ApiTags('Developer')
@Controller()
export class SecurityController {
  constructor(
    private readonly mfa: MfaService,
    private readonly terms: TermsService,
  ) {}

  @Post('security/mfa/enroll')
  @Endpoint({
    summary: 'Enrol TOTP MFA (RFC 6238)',
    description:
      'The first enrolment needs only the session. Replacing an enrolled authenticator needs a step-up with the current one within the step-up window (else 403 MFA_STEP_UP_REQUIRED) and is refused while step-up is locked (429 MFA_LOCKED); the new seed ends the step-up.',
    auth: 'session',
    status: 201,
    type: EnrollDto,
    errors: [403, 429],
  })
  enroll(@Cred() c: Credential): Promise<EnrollDto> {
    return this.mfa.enroll(c.userId);
  }

  @Post('security/mfa/step-up')
  @Endpoint({
    summary: 'MFA step-up: cached server-side for MFA_STEP_UP_TTL_SECONDS (300)',
    description:
      "Withdrawals inside the window proceed. A code is accepted once. 5 wrong codes lock step-up for 900 s (429 MFA_LOCKED with Retry-After) for the kind of credential that sent them: the user's API keys together, or the user's sessions together. A locked key does not lock the sessions out, and new keys get no fresh attempts.",
    auth: 'key',
    type: StepUpResultDto,
    errors: [400, 409, 422],
  })
  stepUp(@Cred() c: Credential, @Body() body: StepUpDto): Promise<StepUpResultDto> {
    return this.mfa.stepUp(c, body.code);
  }

  @Get('developer-terms')
  @Endpoint({
    summary: 'Developer terms: current version and your acceptance',
    auth: 'session',
    type: TermsStatusDto,
  })
  termsStatus(@Cred() c: Credential): Promise<TermsStatus> {
    return this.terms.status(c.userId);
  }

  @Post('developer-terms/accept')
  @Endpoint({
    summary: 'Accept the current developer terms version',
    auth: 'session',
    type: TermsStatusDto,
    errors: [400, 422],
    codes: { 422: ['TERMS_VERSION_NOT_CURRENT'] },
  })
  acceptTerms(@Cred() c: Credential, @Body() body: AcceptTermsDto): Promise<TermsStatus> {
    return this.terms.accept(c.userId, body.version);
  }
}
