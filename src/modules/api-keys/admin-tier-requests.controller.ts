import { Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { ApiKeysService } from './api-keys.service.js';
import { TierRequestDto, TierRequestPageDto } from './dto/api-key.dto.js';
import { OptionalField } from '../../common/validation/fields.js';

export class TierRequestQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: ['PENDING', 'APPROVED', 'DENIED'] })
  @OptionalField()
  @IsIn(['PENDING', 'APPROVED', 'DENIED'])
  status?: 'PENDING' | 'APPROVED' | 'DENIED';
}

/** Admin review of tier requests (an admin's session). */
@ApiTags('Developer')
@Controller('admin/tier-requests')
export class AdminTierRequestsController {
  constructor(private readonly keys: ApiKeysService) {}

  @Get()
  @Endpoint({
    summary: 'List tier requests (admin)',
    auth: 'session',
    scopes: ['admin:read'],
    type: TierRequestPageDto,
    errors: [400],
  })
  list(@Cred() c: Credential, @Query() q: TierRequestQueryDto): Promise<TierRequestPageDto> {
    return this.keys.listTierRequests(c, q.status, q);
  }

  @Post(':id/approve')
  @Endpoint({
    summary: "Approve a tier request: the key's tier changes (admin)",
    auth: 'session',
    scopes: ['admin:write'],
    type: TierRequestDto,
    errors: [404, 409],
    codes: { 409: ['TIER_REQUEST_NOT_PENDING', 'API_KEY_NOT_ACTIVE (revoked or expired since)'] },
  })
  approve(@Cred() c: Credential, @Param('id') id: string): Promise<TierRequestDto> {
    return this.keys.decideTier(c, id, true);
  }

  @Post(':id/deny')
  @Endpoint({
    summary: 'Deny a tier request (admin)',
    auth: 'session',
    scopes: ['admin:write'],
    type: TierRequestDto,
    errors: [404, 409],
    codes: { 409: ['TIER_REQUEST_NOT_PENDING'] },
  })
  deny(@Cred() c: Credential, @Param('id') id: string): Promise<TierRequestDto> {
    return this.keys.decideTier(c, id, false);
  }
}
