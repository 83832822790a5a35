import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { ApiKeysService } from './api-keys.service.js';
import {
  ApiKeyDto,
  ApiKeyPageDto,
  CreateApiKeyDto,
  CreatedApiKeyDto,
  RotateApiKeyDto,
  TierRequestBodyDto,
  TierRequestDto,
} from './dto/api-key.dto.js';

@ApiTags('Developer')
@Controller('api-keys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @Endpoint({
    summary: 'Create an API key (the full key is returned once)',
    description:
      'environment fixes the prefix (svc_live_ / svc_test_). Default scopes are read-only; write scopes need acknowledge_write_scopes: true and a verified email (422 WRITE_SCOPES_NOT_ACKNOWLEDGED, 403 EMAIL_NOT_VERIFIED); admin scopes are refused (403 ADMIN_SCOPE_FORBIDDEN); test keys need the sandbox (403 SANDBOX_DISABLED) and carry env:paper; with DEVELOPER_TERMS_REQUIRED the current terms must be accepted (403 TERMS_ACCEPTANCE_REQUIRED). signing_secret (svc_sign_) is returned once when signing_required.',
    auth: 'session',
    status: 201,
    type: CreatedApiKeyDto,
    errors: [400, 422],
    codes: {
      403: ['EMAIL_NOT_VERIFIED', 'ADMIN_SCOPE_FORBIDDEN', 'TERMS_ACCEPTANCE_REQUIRED'],
      422: [
        'WRITE_SCOPES_NOT_ACKNOWLEDGED',
        'API_KEY_LIMIT_REACHED (MAX_API_KEYS_PER_USER active keys already; details.limit, details.active)',
      ],
    },
  })
  create(@Cred() c: Credential, @Body() body: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    return this.keys.create(c.userId, body);
  }

  @Get()
  @Endpoint({
    summary: 'List your API keys (never the secrets)',
    auth: 'session',
    type: ApiKeyPageDto,
    errors: [400],
  })
  list(@Cred() c: Credential, @Query() q: PageQueryDto): Promise<ApiKeyPageDto> {
    return this.keys.list(c.userId, q);
  }

  @Post(':id/rotate')
  // The body is optional: without it the signing secret stays.
  @ApiBody({ type: RotateApiKeyDto, required: false })
  @Endpoint({
    summary: 'Rotate: a new secret for the same key id and settings',
    description:
      'The old secret is refused from the next request on; the signing secret of a signing-required key stays, unless rotate_signing_secret is true (then a new signing_secret, svc_sign_, is returned this once and the old one stops signing at once). A security email shows the prefix only.',
    auth: 'session',
    type: CreatedApiKeyDto,
    errors: [400, 404, 409],
    codes: {
      409: [
        'API_KEY_NOT_ACTIVE (revoked or expired)',
        'API_KEY_HAS_NO_SIGNING_SECRET: rotate_signing_secret true on a key without signing_required',
      ],
    },
  })
  rotate(
    @Cred() c: Credential,
    @Param('id') id: string,
    // The class itself (not a union with undefined, which the validation pipe cannot see
    // through) so that the body is validated like every other: a mistyped flag is a 400, not a
    // rotation that quietly keeps the signing secret. No body arrives as undefined.
    @Body() body: RotateApiKeyDto,
  ): Promise<CreatedApiKeyDto> {
    return this.keys.rotate(c.userId, id, body?.rotate_signing_secret === true);
  }

  @Post(':id/revoke')
  @Endpoint({
    summary: 'Revoke a key immediately',
    description: 'Refused from the next request on with 401 API_KEY_REVOKED.',
    auth: 'session',
    type: ApiKeyDto,
    errors: [404],
  })
  revoke(@Cred() c: Credential, @Param('id') id: string): Promise<ApiKeyDto> {
    return this.keys.revoke(c.userId, id);
  }

  @Post(':id/tier-request')
  @Endpoint({
    summary: 'Request a rate-limit tier change (admin-reviewed)',
    auth: 'session',
    status: 202,
    type: TierRequestDto,
    errors: [400, 404, 409],
    description:
      'One request per key waits for review at a time. Asking for the tier the key already has, ' +
      'or asking again while a request is pending, is refused with 409.',
    codes: {
      409: [
        'API_KEY_NOT_ACTIVE (revoked or expired)',
        'TIER_REQUEST_PENDING (details.request_id names the waiting request)',
        'TIER_UNCHANGED (the key already has this tier)',
      ],
    },
  })
  tierRequest(
    @Cred() c: Credential,
    @Param('id') id: string,
    @Body() body: TierRequestBodyDto,
  ): Promise<TierRequestDto> {
    return this.keys.requestTier(c.userId, id, body.tier, body.reason ?? '');
  }
}
