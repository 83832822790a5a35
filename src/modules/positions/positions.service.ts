import { Injectable } from '@nestjs/common';
import type { Credential } from '../../common/http/request-context.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import type { ListPositionsQueryDto, PositionDto } from './dto/position.dto.js';
import { markPrice, positionDto } from './position-mapper.js';

/**
 * Netted positions of the caller in the engine of its credential: holdings, cost and realized
 * P&L from the engine database (what was committed), marked at the engine's current prices.
 */
@Injectable()
export class PositionsService {
  constructor(private readonly engines: EngineRegistry) {}

  list(c: Credential, q: ListPositionsQueryDto): Page<PositionDto> {
    const rt = this.engines.forCredential(c);
    return paginate({
      list: `positions:${c.environment}`,
      keys: ['id'],
      query: q,
      fetch: (after, take) =>
        rt.positionsPage(c.userId, {
          afterMarketId: after?.[0],
          includeFlat: q.include_closed === 'true',
          limit: take,
        }),
      keyOf: (r) => [r.market_id],
      map: (r) => positionDto(r, markPrice(rt.marketSummary(r.market_id))),
    });
  }
}
