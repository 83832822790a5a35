import { Body, Controller, Delete, Get, Post } from '@nestjs/common';
import { ApiBody, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import {
  CancelOnDisconnectService,
  COD_DEFAULT_GRACE_SECONDS,
  COD_MAX_GRACE_SECONDS,
  type CodStatus,
} from './cancel-on-disconnect.service.js';
import { OptionalField } from '../../common/validation/fields.js';

export class EnableCodDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: COD_MAX_GRACE_SECONDS,
    default: COD_DEFAULT_GRACE_SECONDS,
  })
  @OptionalField()
  @IsInt()
  @Min(0)
  @Max(COD_MAX_GRACE_SECONDS)
  grace_seconds?: number;
}

class CodStatusDto {
  @ApiProperty()
  key_id: string;

  @ApiProperty()
  enabled: boolean;

  @ApiProperty({ type: 'integer', nullable: true })
  grace_seconds: number | null;

  @ApiProperty({ type: 'integer', description: 'Realtime connections open with this key now' })
  connections: number;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'When the open orders will be cancelled unless a connection returns',
  })
  cancels_at: string | null;
}

const DESCRIPTION =
  "While enabled for a key: when the last realtime connection authenticated with that key closes and none returns within grace_seconds, every open order placed with that key is cancelled (cancel_reason CANCEL_ON_DISCONNECT). After a server restart every enabled key is armed as if its connections had just closed (the safe direction): reconnect within the grace to keep the orders. A key without the websocket scope never holds a realtime connection, so its setting never fires, not at a restart either. With several instances on one Redis, connections counts the key's connections on every instance, the key is armed when the last of them closes (or when an instance holding the last ones stops for 5 s), and a connection returning to any instance keeps the orders; while Redis is away each instance counts its own.";

/** SPEC.md Limits: "POST and DELETE /orders/cancel-on-disconnect | 60", one budget for both. */
const COD_LIMIT_GROUP = 'POST,DELETE /api/v1/orders/cancel-on-disconnect';

@ApiTags('Orders')
@Controller('orders/cancel-on-disconnect')
export class CancelOnDisconnectController {
  constructor(private readonly cod: CancelOnDisconnectService) {}

  // The body is optional (CONTRACT: {grace_seconds?}); without it grace_seconds is 5.
  @ApiBody({ type: EnableCodDto, required: false })
  @Post()
  @Endpoint({
    summary: 'Enable cancel-on-disconnect for the calling key',
    description: DESCRIPTION,
    auth: 'key',
    apiKeyOnly: true,
    scopes: ['orders:write'],
    routeLimitPerMinute: 60,
    routeLimitGroup: COD_LIMIT_GROUP,
    status: 200,
    type: CodStatusDto,
    errors: [400],
  })
  enable(@Cred() c: Credential, @Body() body: EnableCodDto): Promise<CodStatus> {
    return this.cod.enable(c, body.grace_seconds ?? COD_DEFAULT_GRACE_SECONDS);
  }

  @Get()
  @Endpoint({
    summary: 'Cancel-on-disconnect status of the calling key',
    description: DESCRIPTION,
    auth: 'key',
    apiKeyOnly: true,
    scopes: ['orders:read'],
    type: CodStatusDto,
  })
  status(@Cred() c: Credential): Promise<CodStatus> {
    return this.cod.status(c);
  }

  @Delete()
  @Endpoint({
    summary: 'Disable cancel-on-disconnect for the calling key',
    auth: 'key',
    apiKeyOnly: true,
    scopes: ['orders:write'],
    routeLimitPerMinute: 60,
    routeLimitGroup: COD_LIMIT_GROUP,
    type: CodStatusDto,
  })
  disable(@Cred() c: Credential): Promise<CodStatus> {
    return this.cod.disable(c);
  }
}
