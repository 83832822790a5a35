import type { DataSource } from 'typeorm';
import { toPostgres } from './postgres-dialect.js';

/**
 * SQL written for SQLite with positional `?` parameters, as the data source's driver takes it
 * through TypeORM's own `query()` (seeds, health checks): unchanged on SQLite, carried over by
 * toPostgres on PostgreSQL.
 */
export function sqlFor(ds: DataSource, sql: string): string {
  if (ds.options.type !== 'postgres') return sql;
  const { text, names } = toPostgres(sql);
  if (names !== null) throw new Error(`sqlFor takes positional ? parameters only: ${sql}`);
  return text;
}
