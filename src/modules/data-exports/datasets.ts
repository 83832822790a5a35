import {
  dialectOf,
  type SqlConnection,
  type SqlDialect,
  type SqlStatement,
} from '../../common/sql/sql-connection.js';
import { StatementCache } from '../../common/sql/statement-cache.js';
import { csvCell } from '../../common/csv/csv-cell.js';

export const DATASETS = [
  'TRADES',
  'MARKETS',
  'INDEX_POINTS',
  'CRYPTO_PRICES',
  'ORDERS',
  'FILLS',
  'LEDGER',
] as const;
export type Dataset = (typeof DATASETS)[number];
export const EXPORT_FORMATS = ['CSV', 'JSONL'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

interface Field {
  name: string;
  /** The SQL expression of the value (`@user` is the caller, for the own datasets). */
  sql: string;
  /** A 0/1 column written as a boolean (JSONL) or true/false (CSV). */
  bool?: boolean;
}

export interface DatasetDef {
  dataset: Dataset;
  description: string;
  /** The caller's own rows (ORDERS, FILLS, LEDGER) rather than the world's public data. */
  own: boolean;
  table: string;
  /** The column the [start, end) window applies to (ISO-8601 text). */
  time: string;
  /** The column market_ids narrows, when the dataset has markets. */
  market?: string;
  /** Which rows are the caller's (own datasets). */
  owner?: string;
  fields: Field[];
}

const f = (name: string, sql = name): Field => ({ name, sql });

/**
 * The one description of each dataset: its fields, the window's column, how market_ids and the
 * owner narrow it. The count and the row reader below are built from it, so what `estimate`
 * counts is what the job writes.
 */
export const DATASET_DEFS: Record<Dataset, DatasetDef> = {
  TRADES: {
    dataset: 'TRADES',
    description: "Every trade of the world's markets (no account disclosed); window on created_at.",
    own: false,
    table: 'trades',
    time: 'created_at',
    market: 'market_id',
    fields: [
      f('id'),
      f('market_id'),
      f('price'),
      f('quantity'),
      f('taker_side', "CASE taker_book_side WHEN 'BID' THEN 'YES' ELSE 'NO' END"),
      f('created_at'),
    ],
  },
  MARKETS: {
    dataset: 'MARKETS',
    description: "The world's markets as they are when read; window on created_at.",
    own: false,
    table: 'markets',
    time: 'created_at',
    market: 'id',
    fields: [
      f('id'),
      f('slug'),
      f('title'),
      f('category'),
      f('status'),
      f('outcome'),
      f('close_time'),
      f('reference_price'),
      f('last_price'),
      f('volume'),
      f('created_at'),
      f('updated_at'),
    ],
  },
  INDEX_POINTS: {
    dataset: 'INDEX_POINTS',
    description:
      'Sampled points of the market indices (value in hundredths of a cent); window on time.',
    own: false,
    table: 'index_points',
    time: 'time',
    fields: [f('index', 'slug'), f('time'), f('value_hundredths'), f('market_count')],
  },
  CRYPTO_PRICES: {
    dataset: 'CRYPTO_PRICES',
    description: 'Candles of the crypto reference prices (1m, 1h, 1d; cents); window on bucket.',
    own: false,
    table: 'crypto_candles',
    time: 'bucket',
    fields: [
      f('symbol'),
      f('interval'),
      f('bucket'),
      f('open_cents'),
      f('high_cents'),
      f('low_cents'),
      f('close_cents'),
    ],
  },
  ORDERS: {
    dataset: 'ORDERS',
    description: 'Your orders in this world, as they are when read; window on created_at.',
    own: true,
    table: 'orders',
    time: 'created_at',
    market: 'market_id',
    owner: 'user_id = @user',
    fields: [
      f('id'),
      f('client_order_id'),
      f('market_id'),
      f('action'),
      f('side'),
      f('type'),
      f('price'),
      f('quantity'),
      f('filled_quantity'),
      f('filled_cost_cents', 'fill_cost'),
      f('status'),
      f('cancel_reason'),
      f('time_in_force'),
      { name: 'post_only', sql: 'post_only', bool: true },
      f('self_trade_prevention'),
      f('created_at'),
      f('updated_at'),
    ],
  },
  FILLS: {
    dataset: 'FILLS',
    description:
      'Your fills (trades you were maker or taker of) in this world; window on created_at.',
    own: true,
    table: 'trades',
    time: 'created_at',
    market: 'market_id',
    owner: '(maker_user_id = @user OR taker_user_id = @user)',
    fields: [
      f('id'),
      f('market_id'),
      f('order_id', 'CASE WHEN taker_user_id = @user THEN taker_order_id ELSE maker_order_id END'),
      f('liquidity', "CASE WHEN taker_user_id = @user THEN 'TAKER' ELSE 'MAKER' END"),
      f('yes_price', 'price'),
      f('quantity'),
      f('created_at'),
    ],
  },
  LEDGER: {
    dataset: 'LEDGER',
    description: 'Your ledger (wallet transactions) in this world; window on created_at.',
    own: true,
    table: 'ledger',
    time: 'created_at',
    owner: 'user_id = @user',
    fields: [
      f('id'),
      f('type'),
      f('amount_cents'),
      f('balance_after_cents'),
      f('reference_id'),
      f('created_at'),
    ],
  },
};

/** What one export reads: the dataset, the window, the owner and the snapshot bound. */
export interface ExportScope {
  def: DatasetDef;
  userId: string;
  start: string;
  end: string;
  marketIds: string[] | null;
}

export type Cell = string | number | bigint | boolean | null;
type Params = Record<string, string | number>;

/**
 * What an export reads its rows through: {@link DatasetReader} on a synchronous connection (the
 * main thread's, and a SQLite job's worker on its read-only file), or a PostgreSQL job's worker
 * on a `pg` client of its own, whose answers are promises.
 */
export interface RowSource {
  /** Rows of the scope with a row order in (lo, hi]. */
  countRange(s: ExportScope, lo: number, hi: number): number | Promise<number>;
  /** Up to `limit` rows after row order `lo` through `hi`, each [row order, ...fields]. */
  page(s: ExportScope, lo: number, hi: number, limit: number): Cell[][] | Promise<Cell[][]>;
}

/** PostgreSQL's row-order column of each exported table, added by engine migration 1763769600031. */
export const ROW_ORDER_COLUMN = 'row_seq';

/**
 * The column an export orders and bounds its rows by. SQLite: the rowid, storage order, which for
 * these append-only tables is insertion order. PostgreSQL has no rowid (a ctid moves when its row
 * is updated): `row_seq`, the identity migration 1763769600031 adds to each exported table.
 */
export function rowOrderColumn(dialect: SqlDialect): string {
  return dialect === 'postgres' ? ROW_ORDER_COLUMN : 'rowid';
}

/** One of the reader's statements, written for `dialect` (see {@link DatasetReader}). */
export function readerSql(
  dialect: SqlDialect,
  kind: 'last' | 'count' | 'page',
  def: DatasetDef,
  withMarkets: boolean,
): string {
  const order = rowOrderColumn(dialect);
  if (kind === 'last') return `SELECT max(${order}) AS m FROM ${def.table}`;
  // SQLite: NOT INDEXED, so a page is a rowid range scan (an index on market_id or user_id
  // would make SQLite sort each page's candidates again, a whole scan per page). PostgreSQL
  // plans with the row_seq index itself.
  const from = dialect === 'sqlite' ? `${def.table} NOT INDEXED` : def.table;
  const where = whereOf(order, def, withMarkets);
  if (kind === 'count') return `SELECT COUNT(*) AS n FROM ${from} WHERE ${where}`;
  const cols = def.fields.map((x) => x.sql).join(', ');
  return `SELECT ${order}, ${cols} FROM ${from} WHERE ${where} ORDER BY ${order} LIMIT @limit`;
}

/**
 * Rows are read in row-order ranges ({@link rowOrderColumn}): a range needs no sort, and the
 * high-water mark fixed when a job is created (the largest row order then) bounds what it
 * exports. Counting (on the main thread) walks the same ranges a span at a time, so counting a
 * million rows does not hold the event loop for long; the pages are read by an export job's
 * worker thread on a connection of its own (export-worker.ts).
 */
export class DatasetReader implements RowSource {
  private readonly cache: StatementCache;
  private readonly dialect: SqlDialect;

  constructor(private readonly db: SqlConnection) {
    this.cache = new StatementCache(db);
    this.dialect = dialectOf(db);
  }

  /** The table's largest row order now: the snapshot bound of a new export. */
  lastRowid(def: DatasetDef): number {
    const r = this.db.prepare(readerSql(this.dialect, 'last', def, false)).get() as {
      m: number | null;
    };
    return r.m ?? 0;
  }

  countRange(s: ExportScope, lo: number, hi: number): number {
    const stmt = this.stmt('count', s);
    return (stmt.get(readerParams(s, lo, hi)) as { n: number }).n;
  }

  page(s: ExportScope, lo: number, hi: number, limit: number): Cell[][] {
    const stmt = this.stmt('page', s);
    return stmt.raw(true).all({ ...readerParams(s, lo, hi), limit }) as Cell[][];
  }

  private stmt(kind: 'count' | 'page', s: ExportScope): SqlStatement {
    const markets = withMarkets(s);
    const key = `${kind}:${s.def.dataset}:${markets ? 1 : 0}`;
    return this.cache.get(key, () => readerSql(this.dialect, kind, s.def, markets));
  }
}

/** Whether market_ids narrows the scope (a dataset with markets, a list given). */
export function withMarkets(s: ExportScope): boolean {
  return s.marketIds !== null && s.def.market !== undefined;
}

function whereOf(order: string, def: DatasetDef, markets: boolean): string {
  const parts = [
    `${order} > @lo`,
    `${order} <= @hi`,
    `${def.time} >= @start`,
    `${def.time} < @end`,
  ];
  if (def.owner !== undefined) parts.push(def.owner);
  if (markets) parts.push(`${def.market} IN (SELECT value FROM json_each(@markets))`);
  return parts.join(' AND ');
}

/** The named parameters of a count or page statement (a page adds `limit`). */
export function readerParams(s: ExportScope, lo: number, hi: number): Params {
  const p: Params = { lo, hi, start: s.start, end: s.end };
  if (s.def.owner !== undefined || s.def.fields.some((x) => x.sql.includes('@user'))) {
    p.user = s.userId;
  }
  if (withMarkets(s)) p.markets = JSON.stringify(s.marketIds);
  return p;
}

/** The header line of a CSV export (JSONL has none). */
export function headerOf(def: DatasetDef, format: ExportFormat): string {
  return format === 'CSV' ? def.fields.map((x) => x.name).join(',') + '\n' : '';
}

/**
 * Rows as read by {@link RowSource.page} (row order first), formatted: one line each. A flag is
 * 0/1 on SQLite and a boolean on PostgreSQL.
 */
export function formatRows(def: DatasetDef, format: ExportFormat, rows: Cell[][]): string {
  const fields = def.fields;
  let out = '';
  for (const row of rows) {
    if (format === 'CSV') {
      const cells: string[] = new Array<string>(fields.length);
      for (let i = 0; i < fields.length; i++) {
        const v = row[i + 1];
        cells[i] = fields[i].bool === true ? (isSet(v) ? 'true' : 'false') : csvCell(plain(v));
      }
      out += cells.join(',') + '\n';
    } else {
      const o: Record<string, unknown> = {};
      for (let i = 0; i < fields.length; i++) {
        const v = row[i + 1];
        o[fields[i].name] = fields[i].bool === true ? isSet(v) : plain(v);
      }
      out += JSON.stringify(o) + '\n';
    }
  }
  return out;
}

const isSet = (v: Cell): boolean => v === 1 || v === true;

function plain(v: Cell): string | number | null {
  if (typeof v === 'boolean') return v ? 1 : 0;
  return typeof v === 'bigint' ? Number(v) : v;
}
