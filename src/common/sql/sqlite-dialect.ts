import BetterSqlite3 from 'better-sqlite3';
import type { SqlConnection } from './sql-connection.js';

// Every better-sqlite3 connection says which engine it is, read like PgSyncConnection's field:
// one property on the prototype, so a Database is a SqlConnection as it is (no wrapper).
if (!Object.prototype.hasOwnProperty.call(BetterSqlite3.prototype, 'dialect')) {
  Object.defineProperty(BetterSqlite3.prototype, 'dialect', { value: 'sqlite', enumerable: false });
}

/** A better-sqlite3 connection seen through the port (a type change only: the same object). */
export function sqliteConnection(db: BetterSqlite3.Database): SqlConnection {
  return db as unknown as SqlConnection;
}

/** Compile-time proof that better-sqlite3's Database has every member of the port. */
export const satisfiesPort = (db: BetterSqlite3.Database): SqlConnection => db;

/**
 * The database file of a SQLite connection (what a worker thread opens read-only to build an
 * export), or '' on PostgreSQL, which has no file: there the export thread has nothing to open.
 */
export function sqliteFileOf(db: SqlConnection): string {
  return db.dialect === 'postgres' ? '' : (db as unknown as BetterSqlite3.Database).name;
}
