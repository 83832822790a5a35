import { Injectable } from '@nestjs/common';
import type { Credential } from '../../common/http/request-context.js';
import { decodeCursor, encodeCursor, type Page } from '../../common/pagination/cursor.js';
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
    const limit = q.limit ?? 50;
    const afterMarketId =
      q.cursor === undefined
        ? undefined
        : decodeCursor(q.cursor, `positions:${c.environment}`, ['id'])[0];
    const rows = rt.repo.positionsPage(c.userId, {
      afterMarketId,
      includeFlat: q.include_closed === 'true',
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      data: page.map((r) => positionDto(r, markPrice(rt.engine.marketSummary(r.market_id)))),
      next_cursor:
        rows.length > limit
          ? encodeCursor(`positions:${c.environment}`, [page[page.length - 1].market_id])
          : null,
    };
  }
}
