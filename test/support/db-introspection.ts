import { dialectOf } from '../../src/common/sql/sql-connection.js';
import { openDatabaseOf } from './test-database.js';

export interface IndexInfo {
  name: string;
  unique: boolean;
  /** Its columns, in order. */
  columns: string[];
}

/**
 * The indexes of `table` in database `name` ('platform', 'live', 'paper', a world id) of the app
 * booted on `dataDir`, read from the engine's catalogue: sqlite_master and PRAGMA index_info on
 * SQLite, pg_index in the database's schema on PostgreSQL.
 */
export function indexesOf(dataDir: string, name: string, table: string): IndexInfo[] {
  const db = openDatabaseOf(dataDir, name, { readonly: true });
  try {
    if (dialectOf(db) === 'postgres') {
      const rows = db
        .prepare(
          `SELECT i.relname AS name, x.indisunique AS is_unique, a.attname AS col, k.ord AS ord
           FROM pg_index x
           JOIN pg_class t ON t.oid = x.indrelid
           JOIN pg_class i ON i.oid = x.indexrelid
           JOIN pg_namespace n ON n.oid = t.relnamespace
           CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, ord)
           JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
           WHERE t.relname = ? AND n.nspname = current_schema()
           ORDER BY i.relname, k.ord`,
        )
        .all(table) as { name: string; is_unique: boolean | number; col: string }[];
      const byName = new Map<string, IndexInfo>();
      for (const r of rows) {
        const info = byName.get(r.name) ?? {
          name: r.name,
          unique: Boolean(r.is_unique),
          columns: [],
        };
        info.columns.push(r.col);
        byName.set(r.name, info);
      }
      return [...byName.values()];
    }
    const list = db.prepare(`PRAGMA index_list("${table}")`).all() as {
      name: string;
      unique: number;
    }[];
    return list.map((l) => ({
      name: l.name,
      unique: l.unique === 1,
      columns: (db.prepare(`PRAGMA index_info("${l.name}")`).all() as { name: string }[]).map(
        (c) => c.name,
      ),
    }));
  } finally {
    db.close();
  }
}

/**
 * How the engine plans `sql` (no parameters) in that database: EXPLAIN QUERY PLAN's details on
 * SQLite ("SEARCH api_keys USING INDEX ..."), EXPLAIN's lines on PostgreSQL ("Index Scan using
 * ... on api_keys"), joined by newlines.
 */
export function queryPlan(dataDir: string, name: string, sql: string): string {
  const db = openDatabaseOf(dataDir, name, { readonly: true });
  try {
    if (dialectOf(db) === 'postgres') {
      const rows = db.prepare(`EXPLAIN ${sql}`).all() as Record<string, string>[];
      return rows.map((r) => Object.values(r)[0]).join('\n');
    }
    const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[];
    return rows.map((r) => r.detail).join('\n');
  } finally {
    db.close();
  }
}

/**
 * An ORDER BY expression for the order rows of an insert-only table of database `name` were
 * inserted in: the rowid on SQLite; on PostgreSQL the row's place in the heap (ctid), which
 * follows insertion order as long as no row of the table was ever updated or deleted (nothing
 * frees space an insert could reuse). Only for tables the service only inserts into.
 */
export function insertionOrder(dataDir: string, name: string): 'rowid' | 'ctid' {
  const db = openDatabaseOf(dataDir, name, { readonly: true });
  try {
    return dialectOf(db) === 'postgres' ? 'ctid' : 'rowid';
  } finally {
    db.close();
  }
}
