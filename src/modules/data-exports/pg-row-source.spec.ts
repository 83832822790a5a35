import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startServices, type Services } from '../../../test/support/services.js';
import { toPostgres } from '../../common/sql/postgres-dialect.js';
import {
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  openDatabase,
  postgresOptions,
} from '../../database/databases.js';
import { DATASET_DEFS, readerParams, readerSql, type ExportScope } from './datasets.js';
import { countAndSampleInThread } from './export-thread.js';
import { PG_READER_OPTIONS, PgRowSource } from './pg-row-source.js';

/**
 * An export worker's pages on PostgreSQL walk the `row_seq` index from the last row read, even
 * on a table filled faster than autovacuum analyses it: with no statistics the planner took the
 * page's range for a few rows and planned a bitmap scan of all of it plus a top-N sort, so each
 * page read every row after it (the PostgreSQL pass's export jobs stalled on 20,000 and 200,000
 * seeded trades). A throwaway cluster (`npm run services`), the paper schema migrated, 50,000
 * trades inserted in one statement and never analysed.
 */
const ROWS = 50_000;
let services: Services;
let admin: pg.Client;

beforeAll(async () => {
  services = await startServices();
  const paper = await openDatabase(
    postgresOptions('paper', services.databaseUrl, ENGINE_ENTITIES, ENGINE_MIGRATIONS),
  );
  await paper.destroy();
  admin = new pg.Client({ connectionString: services.databaseUrl });
  await admin.connect();
  await admin.query(
    `INSERT INTO paper.trades (id, market_id, price, quantity, maker_order_id, taker_order_id,
       maker_user_id, taker_user_id, taker_book_side, created_at)
     SELECT 'fil_' || lpad(CAST(i AS text), 9, '0'), CASE WHEN i < $1 / 10 THEN 'mkt_a' ELSE 'mkt_b' END,
       1 + i % 99, 1, 'ord_m', 'ord_t', 'usr_m', 'usr_t', 'BID', '2026-11-22T11:00:00.000Z'
     FROM generate_series(0, $1 - 1) AS g(i)`,
    [ROWS],
  );
}, 120_000);

afterAll(async () => {
  await admin?.end();
  await services?.stop();
}, 60_000);

const scope = (marketIds: string[] | null): ExportScope => ({
  def: DATASET_DEFS.TRADES,
  userId: 'usr_t',
  start: '2026-01-01T00:00:00Z',
  end: '2026-12-31T00:00:00Z',
  marketIds,
});

describe('export pages on PostgreSQL', () => {
  it('an estimate of a large table counts and samples in the worker thread’s session', async () => {
    const job = {
      count: true as const,
      source: { postgresUrl: services.databaseUrl, schema: 'paper' },
      dataset: 'TRADES' as const,
      userId: 'usr_t',
      start: '2026-01-01T00:00:00Z',
      end: '2026-12-31T00:00:00Z',
      marketIds: ['mkt_b'],
      hi: ROWS,
      stopAbove: Number.MAX_SAFE_INTEGER,
      sample: 'CSV' as const,
    };
    const got = await countAndSampleInThread(job);
    expect(got.count).toBe(ROWS - ROWS / 10);
    expect(got.sample?.rows).toBe(100);
    expect(got.sample?.bytes).toBeGreaterThan(100 * 20);
  });

  it('a page walks the row_seq index and sorts nothing, on a table with no statistics', async () => {
    const stats = await admin.query(
      `SELECT count(*) AS n FROM pg_stats WHERE schemaname = 'paper' AND tablename = 'trades'`,
    );
    // Not analysed yet (else the planner would choose well anyway and this would prove nothing).
    expect(Number(stats.rows[0].n)).toBe(0);
    const client = new pg.Client({
      connectionString: services.databaseUrl,
      options: PG_READER_OPTIONS('paper'),
    });
    await client.connect();
    try {
      // A job's page, and an estimate's sample (the first 100 rows: export-writer sampleSize).
      for (const [markets, lo, limit] of [
        [null, 100, 10],
        [['mkt_b'], 100, 10],
        [null, 0, 100],
        [['mkt_b'], 0, 100],
      ] as const) {
        const s = scope(markets === null ? null : [...markets]);
        const sql = toPostgres(readerSql('postgres', 'page', s.def, markets !== null));
        const params = { ...readerParams(s, lo, ROWS), limit };
        const plan = await client.query<{ 'QUERY PLAN': string }>({
          text: `EXPLAIN ${sql.text}`,
          values: (sql.names ?? []).map((n) => params[n as keyof typeof params]),
        });
        const lines = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(lines).toMatch(/Index Scan using idx_trades_row_seq/);
        expect(lines).not.toMatch(/Sort|Bitmap/);
      }
    } finally {
      await client.end();
    }
  });

  it('reads the rows in row_seq order, a page after the last row read, through the bound', async () => {
    const source = await PgRowSource.open(services.databaseUrl, 'paper');
    try {
      const s = scope(['mkt_b']);
      // mkt_a holds the first tenth of the rows: the first page of mkt_b starts after them.
      const first = await source.page(s, 0, ROWS, 10);
      expect(first.map((r) => Number(r[0]))).toEqual(
        Array.from({ length: 10 }, (_, i) => ROWS / 10 + 1 + i),
      );
      const next = await source.page(s, Number(first[9][0]), ROWS, 10);
      expect(Number(next[0][0])).toBe(ROWS / 10 + 11);
      expect(await source.page(s, ROWS - 3, ROWS, 10)).toHaveLength(3);
      expect(await source.countRange(s, 0, ROWS)).toBe(ROWS - ROWS / 10);
    } finally {
      await source.close();
    }
  });
});
