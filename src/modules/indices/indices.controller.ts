import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import type { Lifecycle } from '../../common/api/lifecycle.js';
import { Ctx, type RequestContext } from '../../common/http/request-context.js';
import { IndexHistoryPageDto, IndexHistoryQueryDto, IndexListDto } from './dto/index.dto.js';
import { IndicesService } from './indices.service.js';

/** SPEC.md, Deprecated operations: no sunset scheduled; the successors are the /indices reads. */
export const DATA_EXPORTS_INDICES_LIFECYCLE: Lifecycle = {
  state: 'DEPRECATED',
  deprecatedOn: '2026-05-08',
  successor: '/api/v1/indices',
};
export const DATA_EXPORTS_INDEX_HISTORY_LIFECYCLE: Lifecycle = {
  state: 'DEPRECATED',
  deprecatedOn: '2026-05-08',
  successor: '/api/v1/indices/{slug}/history',
};

const ENGINE_TEXT =
  "Readable without a key, like GET /api/v1/markets (a key needs markets:read). With a test key the paper engine's markets and prices; without a key, with a live key or a session, the live engine's.";

const INDICES_TEXT = `${ENGINE_TEXT} One index per market category present among the markets (slug: the category in lower case, e.g. sports) plus all (every market). value: the mean, over the index's OPEN or HALTED markets, of each market's mark price in YES cents (the mid of the best bid and best ask when both exist, else the last trade price; a market with neither is left out), rounded to 2 decimals; market_count: the markets included; value null when none is. Ordered by slug; as_of is the service clock time.`;

const HISTORY_TEXT = `${ENGINE_TEXT} The recorded points of one index, oldest first: each environment records every index into its own database at every multiple of INDEX_SAMPLE_INTERVAL_MS (default 60000) on the service clock, with the values read when the boundary is sampled (a timer about once a second, and the start of every indices read). At most one point per boundary; boundaries passed while nothing sampled (the service down, a clock jump) are not back-filled: only the latest one passed is recorded. Points older than INDEX_HISTORY_DAYS (default 30) are deleted. from (inclusive) and to (exclusive) narrow the points by time: a date or a date-time with Z or an offset. Keyset cursor on the point time. An unknown slug is 404 NOT_FOUND (details.slug).`;

@ApiTags('Indices')
@Controller()
export class IndicesController {
  constructor(private readonly indices: IndicesService) {}

  @Get('indices')
  @Endpoint({
    summary: 'Market indices: mean mark price per category, and over all markets',
    description: INDICES_TEXT,
    auth: 'optional',
    scopes: ['markets:read'],
    type: IndexListDto,
  })
  list(@Ctx() ctx: RequestContext): IndexListDto {
    return this.indices.list(ctx.world);
  }

  @Get('indices/:slug/history')
  @Endpoint({
    summary: 'History of an index, oldest first (keyset cursor)',
    description: HISTORY_TEXT,
    auth: 'optional',
    scopes: ['markets:read'],
    type: IndexHistoryPageDto,
    errors: [400, 404],
  })
  history(
    @Ctx() ctx: RequestContext,
    @Param('slug') slug: string,
    @Query() q: IndexHistoryQueryDto,
  ): IndexHistoryPageDto {
    return this.indices.history(ctx.world, slug, q);
  }

  @Get('data-exports/indices')
  @Endpoint({
    summary: 'Market indices (deprecated: use GET /api/v1/indices)',
    description: `Deprecated on 2026-05-08, no sunset scheduled. Answers exactly what GET /api/v1/indices answers, with Deprecation and Link (successor-version) headers. ${INDICES_TEXT}`,
    auth: 'optional',
    scopes: ['markets:read'],
    lifecycle: DATA_EXPORTS_INDICES_LIFECYCLE,
    type: IndexListDto,
  })
  legacyList(@Ctx() ctx: RequestContext): IndexListDto {
    return this.indices.list(ctx.world);
  }

  @Get('data-exports/indices/:slug/history')
  @Endpoint({
    summary: 'History of an index (deprecated: use GET /api/v1/indices/{slug}/history)',
    description: `Deprecated on 2026-05-08, no sunset scheduled. Answers exactly what GET /api/v1/indices/{slug}/history answers (the same parameters and page), with Deprecation and Link (successor-version, naming the same slug) headers. ${HISTORY_TEXT}`,
    auth: 'optional',
    scopes: ['markets:read'],
    lifecycle: DATA_EXPORTS_INDEX_HISTORY_LIFECYCLE,
    type: IndexHistoryPageDto,
    errors: [400, 404],
  })
  legacyHistory(
    @Ctx() ctx: RequestContext,
    @Param('slug') slug: string,
    @Query() q: IndexHistoryQueryDto,
  ): IndexHistoryPageDto {
    return this.indices.history(ctx.world, slug, q);
  }
}
