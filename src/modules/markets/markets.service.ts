import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { Environment } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { decodeCursor, encodeCursor, type Page } from '../../common/pagination/cursor.js';
import { ENGINE_DB } from '../../database/databases.js';
import type { ListMarketsQueryDto, MarketDto } from './dto/market.dto.js';
import { MarketEntity } from './entities/market.entity.js';

const MARKET_ID = /^mkt_[a-z0-9]{1,36}$/;

@Injectable()
export class MarketsService {
  constructor(
    @InjectDataSource(ENGINE_DB.live) private readonly live: DataSource,
    @InjectDataSource(ENGINE_DB.test) private readonly paper: DataSource,
  ) {}

  private repo(env: Environment) {
    return (env === 'live' ? this.live : this.paper).getRepository(MarketEntity);
  }

  /** Markets ordered by close time, then id; keyset-paginated on that pair. */
  async list(env: Environment, q: ListMarketsQueryDto): Promise<Page<MarketDto>> {
    const limit = q.limit ?? 50;
    const qb = this.repo(env).createQueryBuilder('m');
    if (q.status !== undefined) qb.andWhere('m.status = :status', { status: q.status });
    if (q.category !== undefined) qb.andWhere('m.category = :category', { category: q.category });
    if (q.cursor !== undefined) {
      const [closeTime, id] = decodeCursor(q.cursor, 2);
      qb.andWhere('(m.close_time > :ct OR (m.close_time = :ct AND m.id > :id))', {
        ct: String(closeTime),
        id: String(id),
      });
    }
    const rows = await qb
      .orderBy('m.close_time', 'ASC')
      .addOrderBy('m.id', 'ASC')
      .take(limit + 1)
      .getMany();
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: page.map((m) => toDto(m, env)),
      next_cursor: rows.length > limit ? encodeCursor([last.closeTime, last.id]) : null,
    };
  }

  async get(env: Environment, id: string): Promise<MarketDto> {
    const m = MARKET_ID.test(id) ? await this.repo(env).findOneBy({ id }) : null;
    if (m === null) throw new DomainError('NOT_FOUND', `No market ${id}`, { market_id: id });
    return toDto(m, env);
  }
}

function toDto(m: MarketEntity, env: Environment): MarketDto {
  return {
    id: m.id,
    slug: m.slug,
    title: m.title,
    description: m.description,
    category: m.category,
    status: m.status,
    outcome: m.outcome,
    close_time: m.closeTime,
    // No book exists until the engine serves this environment; then these come from it.
    best_bid: null,
    best_ask: null,
    last_price: m.lastPrice,
    volume: m.volume,
    environment: env,
  };
}
