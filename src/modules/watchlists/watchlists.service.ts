import { marketBrief } from '../markets/market-summary.js';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../common/clock/clock.js';
import { environmentOf, type WorldName } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { IdGenerator } from '../../common/ids/id-generator.js';
import { WATCHLIST_ID } from '../../common/ids/id-patterns.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import type { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { PaperWorldRecords } from '../worlds/paper-world-records.service.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import { WorldMarkets } from '../worlds/world-markets.service.js';
import type {
  CreateWatchlistDto,
  UpdateWatchlistDto,
  WatchlistDto,
  WatchlistMarketDto,
} from './dto/watchlist.dto.js';
import {
  checkedMarketIds,
  limitReached,
  MAX_WATCHLIST_MARKETS,
  MAX_WATCHLISTS,
  nameKey,
} from './watchlist-rules.js';
import { WatchlistsRepository, type WatchlistRow } from './watchlists.repository.js';
import type { WorldScoped } from '../worlds/world-scoped.js';

/**
 * A user's watchlists in one world: stored in that world's database, holding markets of that world
 * only, priced by that world's engine. Each write checks and changes in one synchronous
 * transaction, so a refused request changes nothing and the caps hold under concurrent requests.
 */
@Injectable()
export class WatchlistsService implements OnModuleInit {
  private readonly repos: WorldScoped<WatchlistsRepository>;

  constructor(
    worlds: WorldDatabases,
    private readonly engines: EngineRegistry,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly paperRecords: PaperWorldRecords,
    private readonly markets: WorldMarkets,
  ) {
    this.repos = worlds.perWorld((db) => new WatchlistsRepository(db));
  }

  /** A sandbox reset deletes the user's paper watchlists; the live ones stay. */
  onModuleInit(): void {
    this.paperRecords.registerStaged('watchlists', (userId, world) =>
      this.repos.get(world).stageDeleteAll(userId),
    );
  }

  /** The user's lists of this world, oldest first, keyset on the id. */
  list(world: WorldName, userId: string, q: PageQueryDto): Page<WatchlistDto> {
    return paginate({
      list: `watchlists:${world}`,
      keys: ['id'],
      query: q,
      fetch: (after, take) => this.repos.get(world).page(userId, after?.[0] ?? '', take),
      keyOf: (row) => [row.id],
      mapPage: (rows) => this.views(world, rows),
    });
  }

  get(world: WorldName, userId: string, id: string): WatchlistDto {
    return this.views(world, [this.owned(world, userId, id)])[0];
  }

  create(world: WorldName, userId: string, body: CreateWatchlistDto): WatchlistDto {
    const marketIds = checkedMarketIds(body.market_ids ?? []);
    const repo = this.repos.get(world);
    const now = this.now();
    const row: WatchlistRow = {
      id: this.ids.next('wl'),
      name: body.name,
      created_at: now,
      updated_at: now,
    };
    repo.transaction(() => {
      if (repo.count(userId) >= MAX_WATCHLISTS) {
        throw limitReached(
          MAX_WATCHLISTS,
          `You have ${MAX_WATCHLISTS} watchlists in this world, the most allowed`,
        );
      }
      this.markets.requireAll(world, marketIds);
      this.assertNameFree(world, userId, body.name, null);
      repo.insert(userId, row, nameKey(body.name));
      repo.replaceMarkets(row.id, marketIds);
    });
    return this.views(world, [row])[0];
  }

  /** Renames and/or replaces the markets; an empty body changes nothing. */
  update(world: WorldName, userId: string, id: string, body: UpdateWatchlistDto): WatchlistDto {
    const marketIds = body.market_ids === undefined ? undefined : checkedMarketIds(body.market_ids);
    const repo = this.repos.get(world);
    repo.transaction(() => {
      this.owned(world, userId, id);
      if (body.name === undefined && marketIds === undefined) return;
      if (marketIds !== undefined) this.markets.requireAll(world, marketIds);
      const now = this.now();
      if (body.name !== undefined) {
        this.assertNameFree(world, userId, body.name, id);
        repo.rename(id, body.name, nameKey(body.name), now);
      } else {
        repo.touch(id, now);
      }
      if (marketIds !== undefined) repo.replaceMarkets(id, marketIds);
    });
    return this.get(world, userId, id);
  }

  remove(world: WorldName, userId: string, id: string): void {
    if (!WATCHLIST_ID.test(id) || !this.repos.get(world).delete(userId, id)) throw notFound(id);
  }

  /** Appends a market; one already in the list leaves the list as it is (same updated_at). */
  addMarket(world: WorldName, userId: string, id: string, marketId: string): WatchlistDto {
    const repo = this.repos.get(world);
    repo.transaction(() => {
      this.owned(world, userId, id);
      const members = repo.memberIds(id);
      if (members.includes(marketId)) return;
      this.markets.requireAll(world, [marketId]);
      if (members.length >= MAX_WATCHLIST_MARKETS) {
        throw limitReached(
          MAX_WATCHLIST_MARKETS,
          `The watchlist holds ${MAX_WATCHLIST_MARKETS} markets, the most allowed`,
        );
      }
      repo.appendMarket(id, marketId);
      repo.touch(id, this.now());
    });
    return this.get(world, userId, id);
  }

  /** Takes a market out of the list; one not in it is 404 (details.market_id). */
  removeMarket(world: WorldName, userId: string, id: string, marketId: string): void {
    const repo = this.repos.get(world);
    repo.transaction(() => {
      this.owned(world, userId, id);
      if (!repo.removeMarket(id, marketId)) {
        throw new DomainError('NOT_FOUND', `Market ${marketId} is not in watchlist ${id}`, {
          watchlist_id: id,
          market_id: marketId,
        });
      }
      repo.touch(id, this.now());
    });
  }

  /** The user's list in this world; another user's, another world's or no list is 404 alike. */
  private owned(world: WorldName, userId: string, id: string): WatchlistRow {
    const row = WATCHLIST_ID.test(id) ? this.repos.get(world).one(userId, id) : undefined;
    if (row === undefined) throw notFound(id);
    return row;
  }

  private assertNameFree(
    world: WorldName,
    userId: string,
    name: string,
    self: string | null,
  ): void {
    const holder = this.repos.get(world).nameOwner(userId, nameKey(name));
    if (holder !== undefined && holder !== self) {
      throw new DomainError(
        'WATCHLIST_NAME_TAKEN',
        `You already have a watchlist named like ${JSON.stringify(name)} in this world`,
        {
          watchlist_id: holder,
        },
      );
    }
  }

  /** The lists with their markets, priced by the world's engine as it is now. */
  private views(world: WorldName, rows: readonly WatchlistRow[]): WatchlistDto[] {
    const runtime = this.engines.get(world);
    // A market whose close time has come reads CLOSED at once, as in the markets list.
    runtime.closeDue();
    const byList = new Map<string, WatchlistMarketDto[]>(rows.map((r) => [r.id, []]));
    for (const m of this.repos.get(world).listed(rows.map((r) => r.id))) {
      byList.get(m.watchlist_id)?.push(marketBrief(m, runtime.marketSummary(m.id)));
    }
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      markets: byList.get(r.id) ?? [],
      created_at: r.created_at,
      updated_at: r.updated_at,
      environment: environmentOf(world),
    }));
  }

  private now(): string {
    return this.clock.nowDate().toISOString();
  }
}

function notFound(id: string): DomainError {
  return new DomainError('NOT_FOUND', `No watchlist ${id}`, { watchlist_id: id });
}
