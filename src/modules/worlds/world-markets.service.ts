import { Injectable } from '@nestjs/common';
import type { SqlConnection, SqlStatement } from '../../common/sql/sql-connection.js';
import type { WorldName } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { MARKET_ID } from '../../common/ids/id-patterns.js';
import { WorldDatabases } from './world-databases.service.js';
import type { WorldScoped } from './world-scoped.js';

/** What the world-scoped groups need of a market: its status and when it resolved. */
export interface MarketState {
  status: string;
  resolved_at: string | null;
}

/** The markets of one world's database, read on its connection (synchronous, so a caller's transaction holds). */
export class MarketLookup {
  private readonly stateStmt: SqlStatement;
  private readonly knownStmt: SqlStatement;

  constructor(db: SqlConnection) {
    this.stateStmt = db.prepare('SELECT status, resolved_at FROM markets WHERE id = ?');
    this.knownStmt = db.prepare(
      'SELECT id FROM markets WHERE id IN (SELECT value FROM json_each(?))',
    );
  }

  state(id: string): MarketState | undefined {
    return this.stateStmt.get(id) as MarketState | undefined;
  }

  /** Which of these ids the world has. */
  known(ids: readonly string[]): Set<string> {
    return new Set((this.knownStmt.all(JSON.stringify(ids)) as { id: string }[]).map((r) => r.id));
  }
}

/**
 * "Is this market in this world": the one answer of the world-scoped groups (comments,
 * watchlists). A malformed id is unknown; an unknown one is 404 NOT_FOUND naming it in
 * details.market_id.
 */
@Injectable()
export class WorldMarkets {
  private readonly lookups: WorldScoped<MarketLookup>;

  constructor(worlds: WorldDatabases) {
    this.lookups = worlds.perWorld((db) => new MarketLookup(db));
  }

  /** The market's state in the world, or 404 naming it. */
  require(world: WorldName, id: string): MarketState {
    const state = MARKET_ID.test(id) ? this.lookups.get(world).state(id) : undefined;
    if (state === undefined) throw unknownMarket(id);
    return state;
  }

  /** Refuses the first of `ids` the world does not have: 404 naming it. */
  requireAll(world: WorldName, ids: readonly string[]): void {
    if (ids.length === 0) return;
    const known = this.lookups.get(world).known(ids);
    const unknown = ids.find((id) => !known.has(id));
    if (unknown !== undefined) throw unknownMarket(unknown);
  }
}

function unknownMarket(id: string): DomainError {
  return new DomainError('NOT_FOUND', `No market ${id}`, { market_id: id });
}
