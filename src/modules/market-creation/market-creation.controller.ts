import { Body, Controller, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import type { WorldName } from '../../common/environment.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { MarketDto } from '../markets/dto/market.dto.js';
import { ResolveDto, ResolveResultDto } from '../sandbox/dto/sandbox.dto.js';
import { World } from '../worlds/world.decorator.js';
import { CreateMarketDto, UpdateMarketDto } from './dto/create-market.dto.js';
import { MarketCreationService } from './market-creation.service.js';
import { MAX_OPEN_PAPER_MARKETS } from './market-rules.js';

const WORLD =
  "The market lives in the credential's world: a test key creates a paper market (the house quotes it at once, at reference_price, and the price feed moves it like a seeded one), a live key or a session a live one (no house). Either way its book, trades, ticker and realtime channels work like a seeded market's, and the other world never sees it (404).";
const NOT_FOUND = 'NOT_FOUND (details.market_id): no such market in this world';
const NOT_CREATOR =
  "NOT_MARKET_CREATOR (details.market_id): the market is not one you created (seeded markets are nobody's)";

@ApiTags('Markets')
@Controller('markets')
export class MarketCreationController {
  constructor(private readonly creation: MarketCreationService) {}

  @Post()
  @Endpoint({
    summary: 'Create a market',
    description: `${WORLD} Live world: only accounts with the CREATOR role (CREATOR_EMAILS). Paper world: any verified user, at most ${MAX_OPEN_PAPER_MARKETS} open (OPEN or HALTED) markets each. A create that fails leaves no market behind, in the engine or the database.`,
    auth: 'key',
    scopes: ['markets:write'],
    status: 201,
    type: MarketDto,
    errors: [400, 403, 404, 409, 422],
    codes: {
      403: ['CREATOR_ROLE_REQUIRED: a live market needs the CREATOR role', 'EMAIL_NOT_VERIFIED'],
      404: ['NOT_FOUND (details.event_id): no such sports event in this world'],
      409: ['SLUG_TAKEN (details.slug): a market of this world has the slug'],
      422: [
        `MARKET_LIMIT_REACHED (details.limit ${MAX_OPEN_PAPER_MARKETS}): paper markets open at once per user`,
        'MARKET_RULE_VIOLATED (details.field): close_time not in the future; index or strike without the other or off a CRYPTO market; a strike of 0; reference_price on a live market',
      ],
    },
  })
  create(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Body() body: CreateMarketDto,
  ): Promise<MarketDto> {
    return this.creation.create(c, world, body);
  }

  @Patch(':id')
  @Endpoint({
    summary: 'Edit a market you created',
    description: `Title, description, close_time (in the future) and status OPEN/HALTED of a market you created in the credential's world; every field optional, all applied or none. A halted market takes no new orders (422 MARKET_NOT_OPEN), its resting orders stay and can be cancelled, the house withdraws until it reopens; it still closes at close_time.`,
    auth: 'key',
    scopes: ['markets:write'],
    type: MarketDto,
    errors: [400, 403, 404, 422],
    codes: {
      403: [NOT_CREATOR],
      404: [NOT_FOUND],
      422: [
        'MARKET_NOT_OPEN (details.status): the market is CLOSED or RESOLVED',
        'MARKET_RULE_VIOLATED (details.field close_time): close_time not in the future',
      ],
    },
  })
  update(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Param('id') id: string,
    @Body() body: UpdateMarketDto,
  ): Promise<MarketDto> {
    return this.creation.update(c, world, id, body);
  }

  @Post(':id/resolve')
  @Endpoint({
    summary: 'Resolve a market you created',
    description:
      "Settles a market you created in the credential's world, through the same path as the sandbox resolve: the house withdraws, every resting order is cancelled (MARKET_RESOLVED), each holder is paid 100 cents per winning contract, and the market is RESOLVED for good. Allowed before close_time too.",
    auth: 'key',
    scopes: ['markets:write'],
    type: ResolveResultDto,
    errors: [400, 403, 404, 409],
    codes: {
      403: [NOT_CREATOR],
      404: [NOT_FOUND],
      409: ['MARKET_ALREADY_RESOLVED (details.market_id)'],
    },
  })
  resolve(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Param('id') id: string,
    @Body() body: ResolveDto,
  ): ResolveResultDto {
    return this.creation.resolve(c, world, id, body.outcome);
  }
}
