import { Controller, Get } from '@nestjs/common';
import { ApiProperty, ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { LimitsService, type UsageSnapshot } from './limits.service.js';

class UsageWindowDto {
  @ApiProperty({ type: 'integer' })
  limit: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'null when the usage store is unavailable or the window is not metered',
  })
  used: number | null;

  @ApiProperty({ format: 'date-time' })
  resets_at: string;
}

class ExportUsageDto {
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description:
      'Rows of historical data exports charged this UTC calendar month (charged when an export is created, with the rows counted then); null when metering is off, for a session, or when the usage store is unavailable',
  })
  rows_month: number | null;

  @ApiProperty({
    type: 'integer',
    description:
      'Export rows the tier may charge a month: FREE 1,000,000, PRO 50,000,000, ENTERPRISE 1,000,000,000',
  })
  rows_month_limit: number;
}

class UsageDto {
  @ApiProperty({ type: 'string', nullable: true })
  key_id: string | null;

  @ApiProperty({ enum: ['FREE', 'PRO', 'ENTERPRISE'] })
  tier: string;

  @ApiProperty({
    description: 'DATA_API_USAGE_METERING_ENABLED: quotas are counted and enforced only while on',
  })
  metering_enabled: boolean;

  @ApiProperty({ type: UsageWindowDto })
  per_minute: UsageWindowDto;

  @ApiProperty({ type: UsageWindowDto, description: 'UTC day' })
  daily: UsageWindowDto;

  @ApiProperty({ type: UsageWindowDto, description: 'UTC calendar month' })
  monthly: UsageWindowDto;

  @ApiProperty({
    type: ExportUsageDto,
    description: 'Historical data exports (POST /data/exports)',
  })
  exports: ExportUsageDto;
}

@ApiTags('Data')
@Controller('usage')
export class UsageController {
  constructor(private readonly limits: LimitsService) {}

  @Get()
  @Endpoint({
    summary: "The calling key's usage: per-minute throughput and daily and monthly quotas",
    auth: 'key',
    scopes: ['data:read'],
    type: UsageDto,
  })
  usage(@Cred() c: Credential): Promise<UsageSnapshot> {
    return this.limits.usage(c);
  }
}
