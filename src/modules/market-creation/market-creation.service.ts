import { Injectable } from '@nestjs/common';
import { isPaperWorld, type WorldName } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { IdGenerator } from '../../common/ids/id-generator.js';
import { MARKET_ID } from '../../common/ids/id-patterns.js';
import type { Credential } from '../../common/http/request-context.js';
import { instant } from '../../common/validation/instant.js';
import type { Outcome } from '../../engine/index.js';
import { parseUsd } from '../crypto/usd.js';
import type { MarketDto } from '../markets/dto/market.dto.js';
import { MarketsService } from '../markets/markets.service.js';
import type { ResolveResultDto } from '../sandbox/dto/sandbox.dto.js';
import { SandboxControlsService } from '../sandbox/sandbox-controls.service.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { UsersService } from '../users/users.service.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import type { WorldScoped } from '../worlds/world-scoped.js';
import type { CreateMarketDto, UpdateMarketDto } from './dto/create-market.dto.js';
import { MarketCreationRepository, type OwnedMarketRow } from './market-creation.repository.js';
import { DEFAULT_REFERENCE_PRICE, MAX_OPEN_PAPER_MARKETS } from './market-rules.js';

/**
 * Markets users create (POST /markets), edit and resolve. Live world: the CREATOR role; paper
 * world: any verified user (the write scope needs one), at most MAX_OPEN_PAPER_MARKETS open.
 * The row and the engine's book are written in one commit (EngineRuntime.addMarket), and the
 * checks before it (slug, cap) run synchronously with that commit, so two requests never both
 * pass a check only one of them may.
 */
@Injectable()
export class MarketCreationService {
  /** Each world's markets table: an ephemeral world's is its own file, deleted with it. */
  private readonly repos: WorldScoped<MarketCreationRepository>;

  constructor(
    worlds: WorldDatabases,
    private readonly engines: EngineRegistry,
    private readonly markets: MarketsService,
    private readonly sandbox: SandboxControlsService,
    private readonly users: UsersService,
    private readonly ids: IdGenerator,
  ) {
    this.repos = worlds.perWorld((db) => new MarketCreationRepository(db));
  }

  async create(c: Credential, world: WorldName, body: CreateMarketDto): Promise<MarketDto> {
    if (world === 'live') await this.assertCreator(c.userId);
    const repo = this.repos.get(world);
    const closeTime = this.futureTime(world, body.close_time);
    const { indexSymbol, strikeCents } = crypto(body);
    if (body.reference_price !== undefined && world === 'live') {
      throw ruleViolated('reference_price', 'reference_price is for paper markets only');
    }
    if (body.event_id !== undefined && !repo.eventExists(body.event_id)) {
      throw new DomainError('NOT_FOUND', `No sports event ${body.event_id}`, {
        event_id: body.event_id,
      });
    }
    // From here to the commit nothing awaits: the checks and the insert see the same database.
    if (repo.slugTaken(body.slug)) {
      throw new DomainError('SLUG_TAKEN', `The slug ${body.slug} is taken`, { slug: body.slug });
    }
    if (isPaperWorld(world) && repo.openMarketsOf(c.userId) >= MAX_OPEN_PAPER_MARKETS) {
      throw new DomainError(
        'MARKET_LIMIT_REACHED',
        `At most ${MAX_OPEN_PAPER_MARKETS} open paper markets per user`,
        { limit: MAX_OPEN_PAPER_MARKETS },
      );
    }
    const id = this.ids.next('mkt');
    const referencePrice = body.reference_price ?? DEFAULT_REFERENCE_PRICE;
    const at = this.engines.clockOf(world).nowDate().toISOString();
    const r = this.engines
      .get(world)
      .addMarket({ id, closeAt: Date.parse(closeTime), referencePrice }, () =>
        repo.insert({
          id,
          slug: body.slug,
          title: body.title,
          description: body.description ?? '',
          category: body.category,
          closeTime,
          referencePrice,
          indexSymbol,
          strikeCents,
          eventId: body.event_id ?? null,
          creatorId: c.userId,
          at,
        }),
      );
    if (!r.ok) throw new DomainError('INTERNAL', 'Internal error');
    return this.markets.get(world, id);
  }

  async update(
    c: Credential,
    world: WorldName,
    id: string,
    body: UpdateMarketDto,
  ): Promise<MarketDto> {
    const row = this.owned(c, world, id);
    if (row.status === 'RESOLVED' || row.status === 'CLOSED') {
      throw new DomainError('MARKET_NOT_OPEN', `The market is ${row.status}`, {
        market_id: id,
        status: row.status,
      });
    }
    const closeTime =
      body.close_time === undefined ? undefined : this.futureTime(world, body.close_time);
    const rt = this.engines.get(world);
    const edits =
      body.title !== undefined || body.description !== undefined || closeTime !== undefined;
    const store = () => {
      if (!edits) return;
      this.repos.get(world).update(
        id,
        {
          title: body.title ?? row.title,
          description: body.description ?? row.description,
          closeTime: closeTime ?? row.close_time,
        },
        this.engines.clockOf(world).nowDate().toISOString(),
      );
    };
    // The status and the other fields commit together, or neither does.
    if (body.status !== undefined && body.status !== row.status) {
      const r = rt.setTradingStatus(id, body.status, row.reference_price, store);
      if (!r.ok) throw new DomainError('INTERNAL', 'Internal error');
    } else store();
    if (closeTime !== undefined) rt.setCloseTime(id, Date.parse(closeTime));
    return this.markets.get(world, id);
  }

  /** The one resolution path (the sandbox's), in the market's world; 409 when resolved. */
  resolve(c: Credential, world: WorldName, id: string, outcome: Outcome): ResolveResultDto {
    this.owned(c, world, id);
    return this.sandbox.resolveMarket(id, outcome, c.userId, world);
  }

  /** The market of this world the caller created: 404 if none, 403 if someone else's or seeded. */
  private owned(c: Credential, world: WorldName, id: string): OwnedMarketRow {
    this.engines.get(world).closeDue(); // a market past its close time reads CLOSED
    const row = MARKET_ID.test(id) ? this.repos.get(world).market(id) : undefined;
    if (row === undefined) throw new DomainError('NOT_FOUND', `No market ${id}`, { market_id: id });
    if (row.creator_id !== c.userId) {
      throw new DomainError('NOT_MARKET_CREATOR', "Only the market's creator may change it", {
        market_id: id,
      });
    }
    return row;
  }

  private async assertCreator(userId: string): Promise<void> {
    const user = await this.users.byId(userId);
    if (user === null || !this.users.isCreator(user)) {
      throw new DomainError(
        'CREATOR_ROLE_REQUIRED',
        'Creating live markets needs the CREATOR role',
      );
    }
  }

  /**
   * The time as stored (UTC, milliseconds), which must be after now on the world's clock (the
   * service clock, or an ephemeral world's own, which its markets close by).
   */
  private futureTime(world: WorldName, value: string): string {
    const t = instant(value, 'close_time')!;
    if (Date.parse(t) <= this.engines.clockOf(world).now()) {
      throw ruleViolated('close_time', 'close_time must be in the future');
    }
    return t;
  }
}

/** The index and strike of a self-resolving crypto market; both or neither, CRYPTO only. */
function crypto(body: CreateMarketDto): { indexSymbol: string | null; strikeCents: number | null } {
  if (body.index === undefined && body.strike === undefined) {
    return { indexSymbol: null, strikeCents: null };
  }
  if (body.category !== 'CRYPTO') {
    const field = body.strike !== undefined ? 'strike' : 'index';
    throw ruleViolated(field, `${field} is for CRYPTO markets only`);
  }
  if (body.index === undefined) throw ruleViolated('strike', 'strike needs an index');
  if (body.strike === undefined) throw ruleViolated('index', 'index needs a strike');
  const cents = parseUsd(body.strike);
  if (cents === null || cents <= 0) throw ruleViolated('strike', 'strike must be above 0');
  return { indexSymbol: body.index, strikeCents: cents };
}

function ruleViolated(field: string, message: string): DomainError {
  return new DomainError('MARKET_RULE_VIOLATED', message, { field });
}
