import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { Environment } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { paginate, paginateAsync, type Page } from '../../common/pagination/paginate.js';
import { ENGINE_DB } from '../../database/databases.js';
import type { MarketSummary } from '../../engine/index.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import {
  DEFAULT_BOOK_DEPTH,
  type MarketTradeDto,
  type MarketTradesQueryDto,
  type OrderBookDto,
} from './dto/book.dto.js';
import type { ListMarketsQueryDto, MarketDto } from './dto/market.dto.js';
import { MarketEntity } from './entities/market.entity.js';
import { marketSummary } from './market-summary.js';
import { MARKET_ID } from '../../common/ids/id-patterns.js';

@Injectable()
export class MarketsService {
  constructor(
    @InjectDataSource(ENGINE_DB.live) private readonly live: DataSource,
    @InjectDataSource(ENGINE_DB.test) private readonly paper: DataSource,
    private readonly engines: EngineRegistry,
  ) {}

  /** Book top, last price and volume of a market in the environment's engine. */
  private summary(env: Environment, id: string): MarketSummary | undefined {
    return this.engines.get(env).engine.marketSummary(id);
  }

  private repo(env: Environment) {
    return (env === 'live' ? this.live : this.paper).getRepository(MarketEntity);
  }

  /** Markets ordered by close time, then id; keyset-paginated on that pair. */
  async list(env: Environment, q: ListMarketsQueryDto): Promise<Page<MarketDto>> {
    // A market whose close time has come reads CLOSED at once, not at the next timer round.
    this.engines.get(env).closeDue();
    return paginateAsync({
      list: 'markets',
      keys: ['time', 'id'],
      query: q,
      fetch: (after, take) => {
        const qb = this.repo(env).createQueryBuilder('m');
        if (q.status !== undefined) qb.andWhere('m.status = :status', { status: q.status });
        if (q.category !== undefined)
          qb.andWhere('m.category = :category', { category: q.category });
        if (after !== undefined) {
          const [ct, id] = after;
          qb.andWhere('(m.close_time > :ct OR (m.close_time = :ct AND m.id > :id))', { ct, id });
        }
        return qb.orderBy('m.close_time', 'ASC').addOrderBy('m.id', 'ASC').take(take).getMany();
      },
      keyOf: (m) => [m.closeTime, m.id],
      map: (m) => toDto(m, env, this.summary(env, m.id)),
    });
  }

  async get(env: Environment, id: string): Promise<MarketDto> {
    this.engines.get(env).closeDue();
    const m = MARKET_ID.test(id) ? await this.repo(env).findOneBy({ id }) : null;
    if (m === null) throw new DomainError('NOT_FOUND', `No market ${id}`, { market_id: id });
    return toDto(m, env, this.summary(env, id));
  }

  /** The environment engine's aggregated book, YES cents, best levels first. */
  orderbook(env: Environment, id: string, depth = DEFAULT_BOOK_DEPTH): OrderBookDto {
    const d = MARKET_ID.test(id)
      ? this.engines.get(env).committedEngine().depth(id, depth)
      : undefined;
    if (d === undefined) throw new DomainError('NOT_FOUND', `No market ${id}`, { market_id: id });
    return {
      market_id: id,
      environment: env,
      bids: d.bids.map((l) => ({ price: l.price, quantity: l.quantity })),
      asks: d.asks.map((l) => ({ price: l.price, quantity: l.quantity })),
    };
  }

  /** The environment's trades of a market, newest first, keyset on the trade id. */
  trades(env: Environment, id: string, q: MarketTradesQueryDto): Page<MarketTradeDto> {
    if (!MARKET_ID.test(id) || this.summary(env, id) === undefined) {
      throw new DomainError('NOT_FOUND', `No market ${id}`, { market_id: id });
    }
    const repo = this.engines.get(env).repo;
    return paginate({
      list: `trades:${env}:${id}`,
      keys: ['id'],
      query: q,
      fetch: (after, take) => repo.tradesOfMarket(id, after?.[0] ?? null, take),
      keyOf: (t) => [t.id],
      map: (t) => ({
        id: t.id,
        market_id: t.market_id,
        price: t.price,
        no_price: 100 - t.price,
        quantity: t.quantity,
        taker_side: t.taker_book_side === 'BID' ? 'YES' : 'NO',
        source: t.source,
        created_at: t.created_at,
      }),
    });
  }
}

function toDto(m: MarketEntity, env: Environment, s: MarketSummary | undefined): MarketDto {
  return { ...marketSummary(m, s), event_id: m.eventId ?? null, environment: env };
}
