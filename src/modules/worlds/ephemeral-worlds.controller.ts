import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { CreateWorldDto, CreatedWorldDto, WorldDto, WorldPageDto } from './dto/world.dto.js';
import { EphemeralWorldsService } from './ephemeral-worlds.service.js';

const NOT_FOUND = 'NOT_FOUND (details.world_id): no such world of yours';

@ApiTags('Sandbox')
@Controller('sandbox/worlds')
export class EphemeralWorldsController {
  constructor(private readonly worlds: EphemeralWorldsService) {}

  @Post()
  @ApiBody({ type: CreateWorldDto })
  @Endpoint({
    summary: 'Create an ephemeral world: a private paper world with its own key',
    description: `A private paper world: its own books, house liquidity and price feed (seeded by \`seed\`: the same seed and the same requests give the same fills and prices), accounts, markets, clock, scenarios and webhook endpoints, in its own file copied from a migrated template. The answer holds the world key (full, this once): it reaches this world only, with the scopes of the calling key, and does not count against MAX_API_KEYS_PER_USER. The world is deleted at expires_at (ttl_seconds 60..86400, default 3600 on the service clock). At most 20 live worlds per user (422 WORLD_LIMIT_REACHED). Inside a world the price feed moves only when its clock is advanced (POST /sandbox/clock with the world key), and comments, watchlists, notifications, rank (leaderboard and history), indices, sports events, crypto indices (seeded from \`seed\`, stepped only when the world's clock is advanced; POST /sandbox/crypto/{symbol}/price sets the world's own), market creation (POST /markets, PATCH /markets/{id}, POST /markets/{id}/resolve), RFQ (requests, quotes, the house responder, accepts trading in the world's engine, expiry on the world's clock) and data exports (jobs, files and /data reads of the world's own file; expiry on the world's clock) serve the world's own records (deleted with it): every group works inside a world. Scope orders:write.`,
    auth: 'key',
    scopes: ['orders:write'],
    environment: 'sandbox-only',
    status: 201,
    type: CreatedWorldDto,
    errors: [400, 422],
    codes: {
      400: ['VALIDATION_FAILED naming ttl_seconds, seed, starting_balance_cents, name'],
      422: ['WORLD_LIMIT_REACHED (details.limit, details.live)'],
    },
  })
  create(@Cred() c: Credential, @Body() body: CreateWorldDto): Promise<CreatedWorldDto> {
    return this.worlds.create(c, body);
  }

  @Get()
  @Endpoint({
    summary: 'Your live worlds, oldest first (keyset cursor)',
    description: `Scope orders:read.`,
    auth: 'key',
    scopes: ['orders:read'],
    environment: 'sandbox-only',
    type: WorldPageDto,
    errors: [400],
  })
  list(@Cred() c: Credential, @Query() q: PageQueryDto): WorldPageDto {
    return this.worlds.list(c, q);
  }

  @Get(':id')
  @Endpoint({
    summary: 'One of your worlds',
    description: `${NOT_FOUND}. Scope orders:read.`,
    auth: 'key',
    scopes: ['orders:read'],
    environment: 'sandbox-only',
    type: WorldDto,
    errors: [404],
    codes: { 404: [NOT_FOUND] },
  })
  get(@Cred() c: Credential, @Param('id') id: string): WorldDto {
    return this.worlds.get(c, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @Endpoint({
    summary: 'Delete a world',
    description: `Its key is revoked at once (then 401 API_KEY_REVOKED), its realtime connections close, its engine stops and its file is removed. ${NOT_FOUND}. Scope orders:write.`,
    auth: 'key',
    scopes: ['orders:write'],
    environment: 'sandbox-only',
    status: 204,
    errors: [404],
    codes: { 404: [NOT_FOUND] },
  })
  delete(@Cred() c: Credential, @Param('id') id: string): Promise<void> {
    return this.worlds.delete(c, id);
  }
}
