import type { StoredBrief } from '../markets/market-summary.js';
import {
  runDeferred,
  type SqlConnection,
  type SqlStatement,
} from '../../common/sql/sql-connection.js';

/** A stored watchlist (its markets apart). */
export interface WatchlistRow {
  id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

/** A market of a list, as the world's markets table has it, in the list's order. */
export interface ListedMarketRow extends StoredBrief {
  watchlist_id: string;
}

/**
 * The watchlists of one world's database (plain SQL on its connection; the schema is migration
 * Watchlists1763769600017's). Every read and write is scoped to the owner, so another user's list
 * reads as absent. Sets of ids travel as one JSON array parameter (json_each), so each statement
 * is prepared once whatever the number of ids.
 */
export class WatchlistsRepository {
  private readonly pageStmt: SqlStatement;
  private readonly oneStmt: SqlStatement;
  private readonly countStmt: SqlStatement;
  private readonly nameOwnerStmt: SqlStatement;
  private readonly insertStmt: SqlStatement;
  private readonly renameStmt: SqlStatement;
  private readonly touchStmt: SqlStatement;
  private readonly deleteStmt: SqlStatement;
  private readonly deleteAllStmt: SqlStatement;
  private readonly listedStmt: SqlStatement;
  private readonly memberIdsStmt: SqlStatement;
  private readonly clearMarketsStmt: SqlStatement;
  private readonly insertMarketStmt: SqlStatement;
  private readonly appendMarketStmt: SqlStatement;
  private readonly removeMarketStmt: SqlStatement;

  constructor(private readonly db: SqlConnection) {
    this.pageStmt = db.prepare(
      'SELECT id, name, created_at, updated_at FROM watchlists WHERE user_id = ? AND id > ? ORDER BY id LIMIT ?',
    );
    this.oneStmt = db.prepare(
      'SELECT id, name, created_at, updated_at FROM watchlists WHERE id = ? AND user_id = ?',
    );
    this.countStmt = db.prepare('SELECT COUNT(*) AS n FROM watchlists WHERE user_id = ?');
    this.nameOwnerStmt = db.prepare('SELECT id FROM watchlists WHERE user_id = ? AND name_key = ?');
    this.insertStmt = db.prepare(
      'INSERT INTO watchlists (id, user_id, name, name_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.renameStmt = db.prepare(
      'UPDATE watchlists SET name = ?, name_key = ?, updated_at = ? WHERE id = ?',
    );
    this.touchStmt = db.prepare('UPDATE watchlists SET updated_at = ? WHERE id = ?');
    this.deleteStmt = db.prepare('DELETE FROM watchlists WHERE id = ? AND user_id = ?');
    this.deleteAllStmt = db.prepare('DELETE FROM watchlists WHERE user_id = ?');
    this.listedStmt = db.prepare(
      `SELECT wm.watchlist_id, m.id, m.slug, m.title, m.status, m.last_price AS "lastPrice", m.volume
       FROM watchlist_markets wm JOIN markets m ON m.id = wm.market_id
       WHERE wm.watchlist_id IN (SELECT value FROM json_each(?))
       ORDER BY wm.watchlist_id, wm.position`,
    );
    this.memberIdsStmt = db.prepare(
      'SELECT market_id FROM watchlist_markets WHERE watchlist_id = ? ORDER BY position',
    );
    this.clearMarketsStmt = db.prepare('DELETE FROM watchlist_markets WHERE watchlist_id = ?');
    this.insertMarketStmt = db.prepare(
      'INSERT INTO watchlist_markets (watchlist_id, market_id, position) VALUES (?, ?, ?)',
    );
    this.appendMarketStmt = db.prepare(
      `INSERT INTO watchlist_markets (watchlist_id, market_id, position)
       SELECT ?, ?, COALESCE(MAX(position), -1) + 1 FROM watchlist_markets WHERE watchlist_id = ?`,
    );
    this.removeMarketStmt = db.prepare(
      'DELETE FROM watchlist_markets WHERE watchlist_id = ? AND market_id = ?',
    );
  }

  /** Runs `work` as one transaction: its checks and writes stand or fall together. */
  transaction<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }

  /** The owner's lists after `afterId`, in id (creation) order. */
  page(userId: string, afterId: string, limit: number): WatchlistRow[] {
    return this.pageStmt.all(userId, afterId, limit) as WatchlistRow[];
  }

  one(userId: string, id: string): WatchlistRow | undefined {
    return this.oneStmt.get(id, userId) as WatchlistRow | undefined;
  }

  count(userId: string): number {
    return (this.countStmt.get(userId) as { n: number }).n;
  }

  /** The id of the owner's list with this name key, if any. */
  nameOwner(userId: string, key: string): string | undefined {
    return (this.nameOwnerStmt.get(userId, key) as { id: string } | undefined)?.id;
  }

  insert(userId: string, row: WatchlistRow, key: string): void {
    runDeferred(this.insertStmt, row.id, userId, row.name, key, row.created_at, row.updated_at);
  }

  rename(id: string, name: string, key: string, at: string): void {
    runDeferred(this.renameStmt, name, key, at, id);
  }

  touch(id: string, at: string): void {
    runDeferred(this.touchStmt, at, id);
  }

  /** Deletes one of the owner's lists (its markets go with it); false if there was none. */
  delete(userId: string, id: string): boolean {
    return this.deleteStmt.run(id, userId).changes === 1;
  }

  /** Deletes all of the owner's lists; answers how many. */
  deleteAll(userId: string): number {
    return this.deleteAllStmt.run(userId).changes;
  }

  /**
   * {@link deleteAll} inside the caller's transaction, deferred (runDeferred): answers the count,
   * to read once the transaction's next round trip has answered (after its COMMIT).
   */
  stageDeleteAll(userId: string): () => number {
    const deleted = runDeferred(this.deleteAllStmt, userId);
    return () => deleted.changes;
  }

  /** The markets of these lists, each list's in its order. */
  listed(watchlistIds: readonly string[]): ListedMarketRow[] {
    return this.listedStmt.all(JSON.stringify(watchlistIds)) as ListedMarketRow[];
  }

  memberIds(watchlistId: string): string[] {
    return (this.memberIdsStmt.all(watchlistId) as { market_id: string }[]).map((r) => r.market_id);
  }

  /** The list's markets become exactly `marketIds`, in that order. */
  replaceMarkets(watchlistId: string, marketIds: readonly string[]): void {
    runDeferred(this.clearMarketsStmt, watchlistId);
    marketIds.forEach((m, i) => runDeferred(this.insertMarketStmt, watchlistId, m, i));
  }

  /** Puts a market last in the list. */
  appendMarket(watchlistId: string, marketId: string): void {
    runDeferred(this.appendMarketStmt, watchlistId, marketId, watchlistId);
  }

  /** Takes a market out of the list; false if it was not in it. */
  removeMarket(watchlistId: string, marketId: string): boolean {
    return this.removeMarketStmt.run(watchlistId, marketId).changes === 1;
  }
}
