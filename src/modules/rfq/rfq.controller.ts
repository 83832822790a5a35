import { Body, Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import type { WorldName } from '../../common/environment.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { World } from '../worlds/world.decorator.js';
import { CreateRfqDto, ListRfqQueryDto, RfqDto, RfqPageDto } from './dto/rfq.dto.js';
import { MAX_OPEN_RFQS } from './rfq-rules.js';
import { RfqService } from './rfq.service.js';

export const RFQ_WORLD =
  "RFQs and quotes belong to the world of the credential: a test key (or a key holding env:paper) asks and quotes in the shared paper world, an ephemeral world's key (POST /sandbox/worlds) in that world, a live key or a session in the live world; no other world sees them (404). Expiry follows the world's clock (an ephemeral world's moves with POST /sandbox/clock and its key).";
export const NOT_FOUND_RFQ = 'NOT_FOUND (details.rfq_id): no such RFQ of yours in this world';

@ApiTags('RFQ')
@Controller('rfq')
export class RfqController {
  constructor(private readonly rfqs: RfqService) {}

  @Post()
  @Endpoint({
    summary: 'Request a quote',
    description: `${RFQ_WORLD} Asks approved responders for a two-way price on quantity contracts of an OPEN market, without saying which way you will trade. expires_in_seconds 10..3600 (default 300). In the shared paper world and in an ephemeral world the house responder quotes it within a second, around that world's reference price. At most ${MAX_OPEN_RFQS} OPEN RFQs per user and world.`,
    auth: 'key',
    scopes: ['orders:write'],
    status: 201,
    type: RfqDto,
    errors: [400, 404, 422],
    codes: {
      404: ['NOT_FOUND (details.market_id): no such market in this world'],
      422: [
        `RFQ_LIMIT_REACHED (details.limit ${MAX_OPEN_RFQS}): that many OPEN RFQs already`,
        'MARKET_NOT_OPEN',
      ],
    },
  })
  create(@Cred() c: Credential, @World() world: WorldName, @Body() body: CreateRfqDto): RfqDto {
    return this.rfqs.create(world, c, body);
  }

  @Get()
  @Endpoint({
    summary: 'Your RFQs, newest first (keyset cursor)',
    description: `${RFQ_WORLD} ?status filters (OPEN, FILLED, CANCELLED, EXPIRED).`,
    auth: 'key',
    scopes: ['orders:read'],
    type: RfqPageDto,
    errors: [400],
  })
  list(@Cred() c: Credential, @World() world: WorldName, @Query() q: ListRfqQueryDto): RfqPageDto {
    return this.rfqs.list(world, c, q);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get one of your RFQs',
    description: `${RFQ_WORLD} Another user's RFQ is 404, as an unknown id.`,
    auth: 'key',
    scopes: ['orders:read'],
    type: RfqDto,
    errors: [404],
    codes: { 404: [NOT_FOUND_RFQ] },
  })
  get(@Cred() c: Credential, @World() world: WorldName, @Param('id') id: string): RfqDto {
    return this.rfqs.get(world, c, id);
  }

  @Delete(':id')
  @Endpoint({
    summary: 'Cancel an OPEN RFQ',
    description: `${RFQ_WORLD} The RFQ and its OPEN quotes end CANCELLED; the responders' holds are released. Answers the RFQ.`,
    auth: 'key',
    scopes: ['orders:write'],
    status: 200,
    type: RfqDto,
    errors: [404, 409],
    codes: {
      404: [NOT_FOUND_RFQ],
      409: ['RFQ_NOT_OPEN (details.status): already FILLED, CANCELLED or EXPIRED'],
    },
  })
  cancel(@Cred() c: Credential, @World() world: WorldName, @Param('id') id: string): RfqDto {
    return this.rfqs.cancel(world, c, id);
  }
}
