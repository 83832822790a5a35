import { Injectable } from '@nestjs/common';
import type { WorldName } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { SPORTS_EVENT_ID } from '../../common/ids/id-patterns.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import { SandboxControlsService } from '../sandbox/sandbox-controls.service.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import type { WorldScoped } from '../worlds/world-scoped.js';
import type {
  FinalResultDto,
  ListSportsEventsQueryDto,
  ResolvedMarketDto,
  SportListDto,
  SportsEventDto,
} from './dto/sports.dto.js';
import { outcomeOf, parseRule, winnerOf, type EventRule } from './event-rule.js';
import { SportsRepository, type EventStatus, type SportsEventRow } from './sports.repository.js';

/** A linked market without a rule of its own resolves by the seeded one. */
const DEFAULT_RULE: EventRule = 'HOME_WINS';

/**
 * Sports events of each world (its engine database). Reads answer the credential's world; the
 * sandbox final ends an event of a paper world (the shared one or an ephemeral one) and resolves its linked paper markets through the sandbox's
 * one resolution path. Every status is read against the injected clock.
 */
@Injectable()
export class SportsService {
  /** Each world's events: an ephemeral world's are in its own file (copied from the seeded template). */
  private readonly repos: WorldScoped<SportsRepository>;

  constructor(
    worlds: WorldDatabases,
    private readonly engines: EngineRegistry,
    private readonly sandbox: SandboxControlsService,
  ) {
    this.repos = worlds.perWorld((db) => new SportsRepository(db));
  }

  private repo(world: WorldName): SportsRepository {
    return this.repos.get(world);
  }

  /** Now on the world's clock: an ephemeral world's events start and go LIVE by its own clock. */
  private now(world: WorldName): string {
    return this.engines.clockOf(world).nowDate().toISOString();
  }

  /** Sports and their leagues with event and linked-market counts, by sport then league. */
  sports(world: WorldName): SportListDto {
    const bySport = new Map<string, SportListDto['data'][number]>();
    for (const r of this.repo(world).leagues()) {
      let sport = bySport.get(r.sport);
      if (sport === undefined) {
        sport = { sport: r.sport, leagues: [] };
        bySport.set(r.sport, sport);
      }
      sport.leagues.push({
        league: r.league,
        event_count: r.event_count,
        market_count: r.market_count,
      });
    }
    return { data: [...bySport.values()] };
  }

  /** Events by start_time, then id; keyset-paginated on that pair. */
  list(world: WorldName, q: ListSportsEventsQueryDto): Page<SportsEventDto> {
    const repo = this.repo(world);
    const now = this.now(world);
    return paginate({
      list: `sports-events:${world}`,
      keys: ['time', 'id'],
      query: q,
      fetch: (after, take) => repo.page(q, now, after, take),
      keyOf: (e) => [e.start_time, e.id],
      mapPage: (rows) => {
        const markets = repo.marketIds(rows.map((e) => e.id));
        return rows.map((e) => toDto(e, now, markets.get(e.id) ?? []));
      },
    });
  }

  get(world: WorldName, id: string): SportsEventDto {
    const repo = this.repo(world);
    const e = this.event(repo, id);
    return toDto(e, this.now(world), repo.marketIds([id]).get(id) ?? []);
  }

  /**
   * Ends a paper event with its final score and resolves its linked paper markets by their
   * rules. Markets first, each committed by the engine; the event last. A failure midway leaves
   * the event unfinished with some markets resolved: the retry skips those (already RESOLVED)
   * and completes the rest, so no answer ever shows a FINAL event with open linked markets.
   * Synchronous from the first read to the last write, so two finals never interleave.
   */
  final(
    id: string,
    home: number,
    away: number,
    payeeId: string,
    world: WorldName = 'test',
  ): FinalResultDto {
    const repo = this.repo(world);
    const e = this.event(repo, id);
    const now = this.now(world);
    if (e.final_at !== null) {
      throw new DomainError('SPORTS_EVENT_FINAL', `Event ${id} is already final`, {
        event_id: id,
        score: { home: e.home_score, away: e.away_score },
      });
    }
    if (e.start_time > now) {
      throw new DomainError('SPORTS_EVENT_NOT_STARTED', `Event ${id} has not started`, {
        event_id: id,
        start_time: e.start_time,
      });
    }
    const markets: ResolvedMarketDto[] = [];
    for (const m of repo.linkedMarkets(id)) {
      const rule = parseRule(m.event_rule) ?? DEFAULT_RULE;
      if (this.sandbox.isResolved(m.id, world)) {
        markets.push(skipped(m.id, rule, m.outcome === 'YES' ? 'YES' : 'NO'));
        continue;
      }
      const r = this.sandbox.resolveMarket(m.id, outcomeOf(rule, home, away), payeeId, world);
      markets.push({ ...r, rule, resolved_now: true });
    }
    if (!repo.finish(id, home, away, now)) {
      // Cannot happen while final() runs synchronously; said rather than answered as success.
      throw new DomainError('SPORTS_EVENT_FINAL', `Event ${id} is already final`, { event_id: id });
    }
    const ended = this.event(repo, id);
    return {
      event: toDto(
        ended,
        now,
        markets.map((m) => m.market_id),
      ),
      markets,
    };
  }

  /** The stored event; 404 NOT_FOUND (details.event_id) for a malformed or unknown id. */
  private event(repo: SportsRepository, id: string): SportsEventRow {
    const e = SPORTS_EVENT_ID.test(id) ? repo.one(id) : undefined;
    if (e === undefined) {
      throw new DomainError('NOT_FOUND', `No sports event ${id}`, { event_id: id });
    }
    return e;
  }
}

function statusOf(e: SportsEventRow, now: string): EventStatus {
  if (e.final_at !== null) return 'FINAL';
  return e.start_time <= now ? 'LIVE' : 'SCHEDULED';
}

function toDto(e: SportsEventRow, now: string, marketIds: string[]): SportsEventDto {
  const final = e.final_at !== null && e.home_score !== null && e.away_score !== null;
  return {
    id: e.id,
    sport: e.sport,
    league: e.league,
    title: e.title,
    home: e.home,
    away: e.away,
    start_time: e.start_time,
    status: statusOf(e, now),
    score: final ? { home: e.home_score!, away: e.away_score! } : null,
    winner: final ? winnerOf(e.home_score!, e.away_score!) : null,
    market_ids: marketIds,
  };
}

function skipped(marketId: string, rule: EventRule, outcome: 'YES' | 'NO'): ResolvedMarketDto {
  return {
    market_id: marketId,
    status: 'RESOLVED',
    outcome,
    cancelled_orders: 0,
    settled_positions: 0,
    payout_cents: 0,
    your_payout_cents: 0,
    rule,
    resolved_now: false,
  };
}
