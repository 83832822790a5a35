import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import type { Lifecycle } from '../../common/api/lifecycle.js';
import { Cred } from '../../common/http/credential.decorator.js';
import type { Credential } from '../../common/http/request-context.js';
import { ListPositionsQueryDto, PositionPageDto } from './dto/position.dto.js';
import { PositionsService } from './positions.service.js';

/** SPEC.md, Deprecated operations: no sunset scheduled; the successor is the cursor variant. */
export const WALLET_POSITIONS_LIFECYCLE: Lifecycle = {
  state: 'DEPRECATED',
  deprecatedOn: '2026-05-08',
  successor: '/api/v1/positions/cursor',
};

const POSITIONS_TEXT =
  'Your netted positions in the engine of your credential (test key: paper; live key or session: live), one per market, ordered by market_id. Open positions only unless include_closed=true. unrealized_pnl_cents marks the holding at mark_price: the mid of the best bid and ask when both exist, else the last trade price. Scope wallet:read (positions belong to the wallet area, like their deprecated path /wallet/positions).';

@ApiTags('Positions')
@Controller()
export class PositionsController {
  constructor(private readonly positions: PositionsService) {}

  @Get('positions/cursor')
  @Endpoint({
    summary: 'Your positions (keyset cursor on market_id)',
    description: POSITIONS_TEXT,
    auth: 'key',
    scopes: ['wallet:read'],
    type: PositionPageDto,
    errors: [400],
  })
  list(@Cred() c: Credential, @Query() q: ListPositionsQueryDto): PositionPageDto {
    return this.positions.list(c, q);
  }

  @Get('wallet/positions')
  @Endpoint({
    summary: 'Your positions (deprecated: use GET /api/v1/positions/cursor)',
    description: `Deprecated on 2026-05-08, no sunset scheduled. Answers exactly what GET /api/v1/positions/cursor answers, with Deprecation and Link (successor-version) headers. ${POSITIONS_TEXT}`,
    auth: 'key',
    scopes: ['wallet:read'],
    lifecycle: WALLET_POSITIONS_LIFECYCLE,
    type: PositionPageDto,
    errors: [400],
  })
  legacyList(@Cred() c: Credential, @Query() q: ListPositionsQueryDto): PositionPageDto {
    return this.positions.list(c, q);
  }
}
