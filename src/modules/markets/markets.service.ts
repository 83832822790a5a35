import { Injectable } from '@nestjs/common';
import type { SqlConnection, SqlStatement } from '../../common/sql/sql-connection.js';
import { environmentOf, type WorldName } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { paginate, paginateAsync, type Page } from '../../common/pagination/paginate.js';
import type { MarketSummary } from '../../engine/index.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import {
  DEFAULT_BOOK_DEPTH,
  type MarketTradeDto,
  type MarketTradesQueryDto,
  type OrderBookDto,
} from './dto/book.dto.js';
import type { ListMarketsQueryDto, MarketDto } from './dto/market.dto.js';
import type { MarketEntity } from './entities/market.entity.js';
import { marketSummary } from './market-summary.js';
import { MARKET_ID } from '../../common/ids/id-patterns.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import type { WorldScoped } from '../worlds/world-scoped.js';

/** A market row as the engine database stores it. */
type MarketRow = Pick<
  MarketEntity,
  | 'id'
  | 'slug'
  | 'title'
  | 'description'
  | 'category'
  | 'status'
  | 'outcome'
  | 'closeTime'
  | 'lastPrice'
  | 'volume'
  | 'indexSymbol'
  | 'strikeCents'
  | 'eventId'
>;

const COLUMNS = `id, slug, title, description, category, status, outcome, close_time AS "closeTime",
  last_price AS "lastPrice", volume, index_symbol AS "indexSymbol", strike_cents AS "strikeCents",
  event_id AS "eventId"`;

/** The markets of one world's database, read with prepared statements on its connection. */
class MarketReader {
  private readonly pageStmt: SqlStatement;
  private readonly oneStmt: SqlStatement;

  constructor(db: SqlConnection) {
    this.pageStmt = db.prepare(
      `SELECT ${COLUMNS} FROM markets
       WHERE (CAST(@status AS TEXT) IS NULL OR status = @status)
         AND (CAST(@category AS TEXT) IS NULL OR category = @category)
         AND (CAST(@ct AS TEXT) IS NULL OR close_time > @ct OR (close_time = @ct AND id > @id))
       ORDER BY close_time, id LIMIT @take`,
    );
    this.oneStmt = db.prepare(`SELECT ${COLUMNS} FROM markets WHERE id = ?`);
  }

  page(
    f: { status?: string; category?: string },
    after: string[] | undefined,
    take: number,
  ): MarketRow[] {
    return this.pageStmt.all({
      status: f.status ?? null,
      category: f.category ?? null,
      ct: after?.[0] ?? null,
      id: after?.[1] ?? null,
      take,
    }) as MarketRow[];
  }

  one(id: string): MarketRow | undefined {
    return this.oneStmt.get(id) as MarketRow | undefined;
  }
}

@Injectable()
export class MarketsService {
  private readonly readers: WorldScoped<MarketReader>;

  constructor(
    private readonly engines: EngineRegistry,
    worlds: WorldDatabases,
  ) {
    this.readers = worlds.perWorld((db) => new MarketReader(db));
  }

  /** Book top, last price and volume of a market in the environment's engine. */
  private summary(env: WorldName, id: string): MarketSummary | undefined {
    return this.engines.get(env).marketSummary(id);
  }

  /** Markets ordered by close time, then id; keyset-paginated on that pair. */
  async list(env: WorldName, q: ListMarketsQueryDto): Promise<Page<MarketDto>> {
    // A market whose close time has come reads CLOSED at once, not at the next timer round.
    this.engines.get(env).closeDue();
    return paginateAsync({
      list: 'markets',
      keys: ['time', 'id'],
      query: q,
      fetch: (after, take) => Promise.resolve(this.readers.get(env).page(q, after, take)),
      keyOf: (m) => [m.closeTime, m.id],
      map: (m) => toDto(m, env, this.summary(env, m.id)),
    });
  }

  get(env: WorldName, id: string): Promise<MarketDto> {
    this.engines.get(env).closeDue();
    const m = MARKET_ID.test(id) ? this.readers.get(env).one(id) : undefined;
    if (m === undefined) throw new DomainError('NOT_FOUND', `No market ${id}`, { market_id: id });
    return Promise.resolve(toDto(m, env, this.summary(env, id)));
  }

  /** The environment engine's aggregated book, YES cents, best levels first. */
  orderbook(env: WorldName, id: string, depth = DEFAULT_BOOK_DEPTH): OrderBookDto {
    const d = MARKET_ID.test(id)
      ? this.engines.get(env).committedReads().depth(id, depth)
      : undefined;
    if (d === undefined) throw new DomainError('NOT_FOUND', `No market ${id}`, { market_id: id });
    return {
      market_id: id,
      environment: environmentOf(env),
      bids: d.bids.map((l) => ({ price: l.price, quantity: l.quantity })),
      asks: d.asks.map((l) => ({ price: l.price, quantity: l.quantity })),
    };
  }

  /** The environment's trades of a market, newest first, keyset on the trade id. */
  trades(env: WorldName, id: string, q: MarketTradesQueryDto): Page<MarketTradeDto> {
    if (!MARKET_ID.test(id) || this.summary(env, id) === undefined) {
      throw new DomainError('NOT_FOUND', `No market ${id}`, { market_id: id });
    }
    const rt = this.engines.get(env);
    return paginate({
      list: `trades:${env}:${id}`,
      keys: ['id'],
      query: q,
      fetch: (after, take) => rt.marketTrades(id, after?.[0] ?? null, take),
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

function toDto(m: MarketRow, env: WorldName, s: MarketSummary | undefined): MarketDto {
  return { ...marketSummary(m, s), event_id: m.eventId ?? null, environment: environmentOf(env) };
}
