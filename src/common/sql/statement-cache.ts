import type { SqlConnection, SqlStatement } from './sql-connection.js';

/**
 * Statements whose SQL depends on which filters a query has: each combination is prepared on
 * first use and kept, so a page read is one cached statement, never a fresh prepare.
 */
export class StatementCache {
  private readonly byKey = new Map<string, SqlStatement>();

  constructor(private readonly db: SqlConnection) {}

  /** The statement of `key`, prepared from `sql()` the first time. */
  get(key: string, sql: () => string): SqlStatement {
    let stmt = this.byKey.get(key);
    if (stmt === undefined) {
      stmt = this.db.prepare(sql());
      this.byKey.set(key, stmt);
    }
    return stmt;
  }
}
