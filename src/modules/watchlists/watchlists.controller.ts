import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import type { WorldName } from '../../common/environment.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { World } from '../worlds/world.decorator.js';
import {
  AddWatchlistMarketDto,
  CreateWatchlistDto,
  UpdateWatchlistDto,
  WatchlistDto,
  WatchlistPageDto,
} from './dto/watchlist.dto.js';
import { MAX_WATCHLIST_MARKETS, MAX_WATCHLISTS } from './watchlist-rules.js';
import { WatchlistsService } from './watchlists.service.js';

const WORLD =
  "Watchlists belong to the world of the credential: a test key (or a key holding env:paper) sees and changes its paper watchlists, a world key (POST /sandbox/worlds) those of its ephemeral world, a live key or a session its live ones; a list of the other world, or another user's, is 404 NOT_FOUND (details.watchlist_id). Markets are that world's, priced by its engine. A sandbox reset deletes your paper watchlists.";
const NOT_FOUND_LIST = 'NOT_FOUND (details.watchlist_id): no such watchlist of yours in this world';
const NOT_FOUND_MARKET = 'NOT_FOUND (details.market_id): no such market in this world';
const LIMITS = `WATCHLIST_LIMIT_REACHED (details.limit): at most ${MAX_WATCHLISTS} watchlists per user and world, ${MAX_WATCHLIST_MARKETS} markets per list`;

@ApiTags('Watchlists')
@Controller('watchlists')
export class WatchlistsController {
  constructor(private readonly watchlists: WatchlistsService) {}

  @Get()
  @Endpoint({
    summary: 'Your watchlists, oldest first (keyset cursor)',
    description: `${WORLD} Ordered by creation; lists created while you page appear on a later page, never twice.`,
    auth: 'key',
    scopes: ['watchlist:read'],
    type: WatchlistPageDto,
    errors: [400],
  })
  list(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Query() q: PageQueryDto,
  ): WatchlistPageDto {
    return this.watchlists.list(world, c.userId, q);
  }

  @Post()
  @Endpoint({
    summary: 'Create a watchlist',
    description: `${WORLD} name is unique per user and world ignoring case (409 WATCHLIST_NAME_TAKEN); market_ids, in the order to keep, must all exist (404, and nothing is created).`,
    auth: 'key',
    scopes: ['watchlist:write'],
    status: 201,
    type: WatchlistDto,
    errors: [400, 404, 409, 422],
    codes: { 404: [NOT_FOUND_MARKET], 409: ['WATCHLIST_NAME_TAKEN'], 422: [LIMITS] },
  })
  create(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Body() body: CreateWatchlistDto,
  ): WatchlistDto {
    return this.watchlists.create(world, c.userId, body);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get a watchlist',
    description: WORLD,
    auth: 'key',
    scopes: ['watchlist:read'],
    type: WatchlistDto,
    errors: [404],
    codes: { 404: [NOT_FOUND_LIST] },
  })
  get(@Cred() c: Credential, @World() world: WorldName, @Param('id') id: string): WatchlistDto {
    return this.watchlists.get(world, c.userId, id);
  }

  @Patch(':id')
  @Endpoint({
    summary: 'Rename a watchlist and/or replace its markets',
    description: `${WORLD} market_ids replaces the whole list, in the order given. All or nothing: a refused request (an unknown market, a name taken) changes neither the name nor the markets. An empty body changes nothing.`,
    auth: 'key',
    scopes: ['watchlist:write'],
    type: WatchlistDto,
    errors: [400, 404, 409, 422],
    codes: {
      404: [NOT_FOUND_LIST, NOT_FOUND_MARKET],
      409: ['WATCHLIST_NAME_TAKEN'],
      422: [LIMITS],
    },
  })
  update(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Param('id') id: string,
    @Body() body: UpdateWatchlistDto,
  ): WatchlistDto {
    return this.watchlists.update(world, c.userId, id, body);
  }

  @Delete(':id')
  @Endpoint({
    summary: 'Delete a watchlist',
    description: `${WORLD} The watchlist is deleted outright, with its markets: nothing of it stays. A second DELETE of the same id (a retry whose first answer was lost, say) answers 404 NOT_FOUND like an id that never existed, so a client retrying a DELETE treats that 404 as done. (A comment's DELETE differs: its tombstone stays, and deleting it again answers 204.)`,
    auth: 'key',
    scopes: ['watchlist:write'],
    status: 204,
    responseDescription: 'Deleted (a second DELETE of the id is 404)',
    errors: [404],
    codes: { 404: [`${NOT_FOUND_LIST}, or deleted already`] },
  })
  remove(@Cred() c: Credential, @World() world: WorldName, @Param('id') id: string): void {
    this.watchlists.remove(world, c.userId, id);
  }

  @Post(':id/markets')
  @Endpoint({
    summary: 'Append a market to a watchlist',
    description: `${WORLD} The market goes last. Answers 200 with the watchlist whether the market was added or already in it (then nothing changes, updated_at included), so a retried request answers the same.`,
    auth: 'key',
    scopes: ['watchlist:write'],
    status: 200,
    type: WatchlistDto,
    errors: [400, 404, 422],
    codes: { 404: [NOT_FOUND_LIST, NOT_FOUND_MARKET], 422: [LIMITS] },
  })
  addMarket(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Param('id') id: string,
    @Body() body: AddWatchlistMarketDto,
  ): WatchlistDto {
    return this.watchlists.addMarket(world, c.userId, id, body.market_id);
  }

  @Delete(':id/markets/:market_id')
  @Endpoint({
    summary: 'Remove a market from a watchlist',
    description: `${WORLD} A market that is not in the list is 404 NOT_FOUND (details.market_id), so a client learns its copy was stale; the list is unchanged then.`,
    auth: 'key',
    scopes: ['watchlist:write'],
    status: 204,
    errors: [404],
    codes: {
      404: [NOT_FOUND_LIST, 'NOT_FOUND (details.market_id): the market is not in the list'],
    },
  })
  removeMarket(
    @Cred() c: Credential,
    @World() world: WorldName,
    @Param('id') id: string,
    @Param('market_id') marketId: string,
  ): void {
    this.watchlists.removeMarket(world, c.userId, id, marketId);
  }
}
