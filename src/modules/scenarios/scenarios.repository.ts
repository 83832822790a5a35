import {
  runDeferred,
  type SqlConnection,
  type SqlStatement,
} from '../../common/sql/sql-connection.js';
import type { ScenarioEffect, ScenarioMatch } from './scenario-rules.js';

/** A stored scenario. */
export interface ScenarioRow {
  id: string;
  operation: string;
  market_id: string | null;
  client_order_id_prefix: string | null;
  effect: string;
  times: number;
  remaining: number;
  created_at: string;
}

/** What a request offers a scenario to match: its market(s) and client order id(s). */
export interface MatchFacts {
  marketIds: readonly string[];
  clientOrderIds: readonly string[];
}

/** A scenario that just fired for a request. */
export interface FiredScenario {
  id: string;
  effect: ScenarioEffect;
}

/**
 * The scenarios of one world's database (plain SQL on its connection; the schema is migration
 * Scenarios1763769600027's). Every read and write is scoped to the owner, so another user's
 * scenario reads as absent.
 */
export class ScenariosRepository {
  private readonly pageStmt: SqlStatement<[string, string, number], ScenarioRow>;
  private readonly oneStmt: SqlStatement<[string, string], ScenarioRow>;
  private readonly insertStmt: SqlStatement;
  private readonly deleteStmt: SqlStatement<[string, string]>;
  private readonly deleteAllStmt: SqlStatement<[string]>;
  private readonly liveStmt: SqlStatement<[string, string], ScenarioRow>;
  private readonly spendStmt: SqlStatement<[string]>;
  /**
   * Users who may hold a live scenario (loaded at boot, added to on create, dropped by a reset):
   * every other paper request is let through without reading the table. A spent scenario leaves
   * its user here, which costs only the read.
   */
  private readonly holders: Set<string>;

  constructor(db: SqlConnection) {
    const columns =
      'id, operation, market_id, client_order_id_prefix, effect, times, remaining, created_at';
    this.pageStmt = db.prepare(
      `SELECT ${columns} FROM scenarios WHERE user_id = ? AND id > ? ORDER BY id LIMIT ?`,
    );
    this.oneStmt = db.prepare(`SELECT ${columns} FROM scenarios WHERE id = ? AND user_id = ?`);
    this.insertStmt = db.prepare(
      `INSERT INTO scenarios (id, user_id, operation, market_id, client_order_id_prefix, effect, times, remaining, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.deleteStmt = db.prepare('DELETE FROM scenarios WHERE id = ? AND user_id = ?');
    this.deleteAllStmt = db.prepare('DELETE FROM scenarios WHERE user_id = ?');
    this.liveStmt = db.prepare(
      `SELECT ${columns} FROM scenarios
       WHERE user_id = ? AND operation = ? AND remaining > 0 ORDER BY id`,
    );
    this.spendStmt = db.prepare(
      'UPDATE scenarios SET remaining = remaining - 1 WHERE id = ? AND remaining > 0',
    );
    this.holders = new Set(
      db
        .prepare<[], { user_id: string }>(
          'SELECT DISTINCT user_id FROM scenarios WHERE remaining > 0',
        )
        .all()
        .map((r) => r.user_id),
    );
  }

  page(userId: string, afterId: string, take: number): ScenarioRow[] {
    return this.pageStmt.all(userId, afterId, take);
  }

  one(userId: string, id: string): ScenarioRow | undefined {
    return this.oneStmt.get(id, userId);
  }

  insert(userId: string, row: ScenarioRow): void {
    this.holders.add(userId);
    this.insertStmt.run(
      row.id,
      userId,
      row.operation,
      row.market_id,
      row.client_order_id_prefix,
      row.effect,
      row.times,
      row.remaining,
      row.created_at,
    );
  }

  delete(userId: string, id: string): boolean {
    return this.deleteStmt.run(id, userId).changes > 0;
  }

  deleteAll(userId: string): number {
    this.holders.delete(userId);
    return this.deleteAllStmt.run(userId).changes;
  }

  /**
   * {@link deleteAll} inside the caller's transaction, deferred (runDeferred): answers what to run
   * once it has committed (the user leaves the holders then; a rolled-back reset keeps them),
   * which answers the count.
   */
  stageDeleteAll(userId: string): () => number {
    const deleted = runDeferred(this.deleteAllStmt, userId);
    return () => {
      this.holders.delete(userId);
      return deleted.changes;
    };
  }

  /**
   * The oldest live scenario of the user matching the request, spent once; null if none. The
   * look-up and the count-down run synchronously, one after the other, and the count-down only
   * takes a firing that is left: two requests can never both spend a scenario's last firing.
   * Most requests match nothing: one indexed read, no transaction.
   */
  take(
    userId: string,
    operation: string,
    /** What the request is about, or how to read it: read only when the user holds scenarios. */
    facts: MatchFacts | (() => MatchFacts),
  ): FiredScenario | null {
    if (!this.holders.has(userId)) return null;
    const known = typeof facts === 'function' ? facts() : facts;
    for (const row of this.liveStmt.all(userId, operation)) {
      if (!matches(row, known)) continue;
      if (this.spendStmt.run(row.id).changes === 0) continue;
      return { id: row.id, effect: JSON.parse(row.effect) as ScenarioEffect };
    }
    return null;
  }
}

/** A scenario's optional market and client_order_id prefix against what the request carries. */
function matches(
  row: Pick<ScenarioMatch, 'market_id' | 'client_order_id_prefix'>,
  facts: MatchFacts,
): boolean {
  if (row.market_id !== null && !facts.marketIds.includes(row.market_id)) return false;
  const prefix = row.client_order_id_prefix;
  return prefix === null || facts.clientOrderIds.some((id) => id.startsWith(prefix));
}
