import type pg from 'pg';
import { pgDriver } from '../../common/sql/pg-driver.js';
import { quoteIdent } from '../../common/sql/pg-sync-connection.js';
import { toPostgres, type PostgresSql } from '../../common/sql/postgres-dialect.js';
import {
  readerParams,
  readerSql,
  withMarkets,
  type Cell,
  type ExportScope,
  type RowSource,
} from './datasets.js';

/** How long one page or count may run before PostgreSQL cancels it (the job then fails). */
const STATEMENT_TIMEOUT_MS = 60_000;

/** int8 and numeric as numbers, as the service's own connections read them (never rounded). */
function exact(text: string): number {
  const n = Number(text);
  if (/^-?\d+$/.test(text) && !Number.isSafeInteger(n)) {
    throw new RangeError(`value ${text} is beyond 2^53: refused rather than rounded`);
  }
  return n;
}
const INT8 = 20;
const NUMERIC = 1700;
const types = {
  getTypeParser(oid: number, format?: string): (text: string) => unknown {
    if (format !== 'binary' && (oid === INT8 || oid === NUMERIC)) return exact;
    return pgDriver().types.getTypeParser(oid, format as 'text');
  },
};

/**
 * The session settings of an export worker's client: read-only, on the world's schema, each
 * statement bounded, and `enable_sort=off`. A page (`... WHERE row_seq > @lo AND row_seq <= @hi
 * AND <scope> ORDER BY row_seq LIMIT @limit`) must walk the `row_seq` index from `lo` and stop
 * after `limit` rows in scope, as SQLite walks the rowid. A table just filled faster than
 * autovacuum analyses it (no statistics yet: 200,000 trades seeded in one statement, a busy
 * world) made the planner take the range `(lo, hi]` for a few hundred rows and plan a bitmap
 * scan of all of it, then a top-N sort: each page read every row after `lo`, a 20,000-row job
 * at 10 rows a page read 200 million rows (0.3 s a page here) and a 200,000-row one never
 * finished. Without a sort the only plan left is the index walk in `row_seq` order, which every
 * exported table has (migration 1763769600031). The session runs nothing but these pages and
 * counts (which sort nothing), so the setting touches no other statement.
 */
export const PG_READER_OPTIONS = (schema: string): string =>
  [
    `-c search_path=${quoteIdent(schema)}`,
    '-c default_transaction_read_only=on',
    `-c statement_timeout=${STATEMENT_TIMEOUT_MS}`,
    '-c enable_sort=off',
  ].join(' ');

/**
 * An export job's rows on PostgreSQL, read by its worker thread through a `pg` client of its own
 * (the service's connections belong to the main thread): the reader's statements
 * ({@link readerSql}) in keyset pages on `row_seq`, each a named prepared statement of this
 * client, in a session set by {@link PG_READER_OPTIONS}.
 */
export class PgRowSource implements RowSource {
  private readonly texts = new Map<string, PostgresSql>();

  private constructor(private readonly client: pg.Client) {}

  static async open(url: string, schema: string): Promise<PgRowSource> {
    const client = new (pgDriver().Client)({
      connectionString: url,
      options: PG_READER_OPTIONS(schema),
    });
    // A lost connection fails the query under way; the idle client's error event needs a listener.
    client.on('error', () => undefined);
    await client.connect();
    return new PgRowSource(client);
  }

  async countRange(s: ExportScope, lo: number, hi: number): Promise<number> {
    const rows = await this.query('count', s, readerParams(s, lo, hi));
    return Number(rows[0][0]);
  }

  page(s: ExportScope, lo: number, hi: number, limit: number): Promise<Cell[][]> {
    return this.query('page', s, { ...readerParams(s, lo, hi), limit });
  }

  async close(): Promise<void> {
    await this.client.end();
  }

  private async query(
    kind: 'count' | 'page',
    s: ExportScope,
    params: Record<string, string | number>,
  ): Promise<Cell[][]> {
    const name = `export_${kind}_${s.def.dataset}_${withMarkets(s) ? 1 : 0}`;
    let sql = this.texts.get(name);
    if (sql === undefined) {
      sql = toPostgres(readerSql('postgres', kind, s.def, withMarkets(s)));
      this.texts.set(name, sql);
    }
    const values = (sql.names ?? []).map((n) => params[n]);
    const r = await this.client.query<Cell[]>({
      name,
      text: sql.text,
      values,
      rowMode: 'array',
      types,
    });
    return r.rows;
  }
}
