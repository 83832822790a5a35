import {
  runDeferred,
  type SqlConnection,
  type SqlStatement,
} from '../../../common/sql/sql-connection.js';
import type { PositionChangedEvent, PositionSettledEvent } from '../../../engine/index.js';
import { StatementCache } from '../../../common/sql/statement-cache.js';

/** A position as stored (`positions`). */
export interface PositionRow {
  user_id: string;
  market_id: string;
  yes_qty: number;
  no_qty: number;
  yes_cost: number;
  no_cost: number;
  realized_pnl: number;
  updated_at: string;
}

/**
 * Positions in one engine database, mirrored from position events inside the command's
 * transaction; read by the positions API and a restore.
 */
export class PositionStore {
  private readonly upsert: SqlStatement<
    [string, string, number, number, number, number, number, string]
  >;
  private readonly deleteOfUser: SqlStatement<[string]>;
  private readonly everyPosition: SqlStatement<[], PositionRow>;
  private readonly pages: StatementCache;

  constructor(db: SqlConnection) {
    this.pages = new StatementCache(db);
    this.upsert = db.prepare(`INSERT INTO positions (user_id, market_id, yes_qty, no_qty,
      yes_cost, no_cost, realized_pnl, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (user_id, market_id) DO UPDATE SET yes_qty = excluded.yes_qty,
      no_qty = excluded.no_qty, yes_cost = excluded.yes_cost, no_cost = excluded.no_cost,
      realized_pnl = excluded.realized_pnl, updated_at = excluded.updated_at`);
    this.deleteOfUser = db.prepare('DELETE FROM positions WHERE user_id = ?');
    // Every position, closed ones included, as the engine held them before the restart: a
    // closed position traded again goes on from its realized P&L instead of a fresh 0, and a
    // sandbox reset names every market the account was in.
    this.everyPosition = db.prepare('SELECT * FROM positions');
  }

  changed(e: PositionChangedEvent, at: string): void {
    runDeferred(
      this.upsert,
      e.accountId,
      e.marketId,
      e.yes,
      e.no,
      e.yesCost,
      e.noCost,
      e.realizedPnl,
      at,
    );
  }

  /** A settled position is flat, its realized P&L kept. */
  settled(e: PositionSettledEvent, at: string): void {
    runDeferred(this.upsert, e.accountId, e.marketId, 0, 0, 0, 0, e.realizedPnl, at);
  }

  /** A sandbox reset: the user's positions are gone (deferred, as the orders' delete). */
  removeOfUser(userId: string): void {
    runDeferred(this.deleteOfUser, userId);
  }

  /** Every stored position (a restore). */
  all(): PositionRow[] {
    return this.everyPosition.all();
  }

  /**
   * A user's positions by market id after `afterMarketId`; flat ones only when asked. Each
   * filter combination is one statement, a range scan of the index (user_id, market_id).
   */
  page(
    userId: string,
    f: { afterMarketId?: string; includeFlat: boolean; limit: number },
  ): PositionRow[] {
    const key = `${f.afterMarketId !== undefined}${f.includeFlat}`;
    const stmt = this.pages.get(key, () => {
      const where = ['user_id = @userId'];
      if (f.afterMarketId !== undefined) where.push('market_id > @afterMarketId');
      if (!f.includeFlat) where.push('(yes_qty > 0 OR no_qty > 0)');
      return `SELECT * FROM positions WHERE ${where.join(' AND ')} ORDER BY market_id LIMIT @limit`;
    });
    return stmt.all({ userId, afterMarketId: f.afterMarketId, limit: f.limit }) as PositionRow[];
  }
}
