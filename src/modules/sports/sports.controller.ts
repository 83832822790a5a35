import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import type { WorldName } from '../../common/environment.js';
import { World } from '../worlds/world.decorator.js';
import {
  ListSportsEventsQueryDto,
  SportListDto,
  SportsEventDto,
  SportsEventPageDto,
} from './dto/sports.dto.js';
import { SportsService } from './sports.service.js';

export const SPORTS_WORLD =
  "Readable without a key, like GET /api/v1/markets (a key needs sports:read). Each world has its own events: a test key (or a key holding env:paper) reads the paper world's, without a key, with a live key or a session the live world's. Status follows the service clock: SCHEDULED before start_time, LIVE from start_time, FINAL once a final score is recorded. Paper events end through POST /api/v1/sandbox/sports/events/{id}/final; live events have no operator path yet, so a live event past its start stays LIVE.";

@ApiTags('Sports')
@Controller('sports')
export class SportsController {
  constructor(private readonly sports: SportsService) {}

  @Get()
  @Endpoint({
    summary: 'Sports and their leagues, with event and market counts',
    description: `${SPORTS_WORLD} One entry per sport (ordered by sport), each with its leagues (ordered by league): event_count counts the league's events whatever their status, market_count the markets linked to them. Not paged (a few dozen entries at most): wrapped in data like GET /api/v1/indices.`,
    auth: 'optional',
    scopes: ['sports:read'],
    type: SportListDto,
  })
  list(@World() world: WorldName): SportListDto {
    return this.sports.sports(world);
  }

  @Get('events')
  @Endpoint({
    summary: 'Sports events by start time (keyset cursor)',
    description: `${SPORTS_WORLD} Ordered by start_time, then id. Filters combine (AND): sport (lower case, as GET /sports names it), league (exact name), status (evaluated on the service clock at the request). market_ids: the event's linked markets in this world. A cursor belongs to the list of its world; another list's cursor is 400 VALIDATION_FAILED.`,
    auth: 'optional',
    scopes: ['sports:read'],
    type: SportsEventPageDto,
    errors: [400],
  })
  events(@World() world: WorldName, @Query() q: ListSportsEventsQueryDto): SportsEventPageDto {
    return this.sports.list(world, q);
  }

  @Get('events/:id')
  @Endpoint({
    summary: 'Get a sports event',
    description: `${SPORTS_WORLD} An unknown or malformed id, or an id of nothing in this world, is 404 NOT_FOUND (details.event_id).`,
    auth: 'optional',
    scopes: ['sports:read'],
    type: SportsEventDto,
    errors: [404],
    codes: { 404: ['NOT_FOUND (details.event_id): no such event in this world'] },
  })
  event(@World() world: WorldName, @Param('id') id: string): SportsEventDto {
    return this.sports.get(world, id);
  }
}
