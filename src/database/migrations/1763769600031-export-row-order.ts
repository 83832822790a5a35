import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/** The tables a data export reads (src/modules/data-exports/datasets.ts). */
export const EXPORTED_TABLES = [
  'trades',
  'markets',
  'index_points',
  'crypto_candles',
  'orders',
  'ledger',
] as const;

/** The row-order column on PostgreSQL (SQLite's is the rowid): datasets.ts's ROW_ORDER_COLUMN. */
export const ROW_ORDER_COLUMN = 'row_seq';

/**
 * Engine database (one per world): a stable row order for data exports. An export reads its
 * dataset's rows in pages, in insertion order, up to a high-water mark fixed when the job was
 * created (`data_exports.last_rowid`), so a re-run after a crash writes the same rows. On SQLite
 * that order is the rowid, which every one of these tables has: nothing to add. PostgreSQL has no
 * rowid (ctid moves when a row is updated), so each exported table gets `row_seq`, a bigint
 * identity numbered in insertion order (existing rows are numbered when the column is added),
 * with a unique index for the reader's keyset pages. Rows are never written with it: the
 * identity's default fills it. Schema API only.
 */
export class ExportRowOrder1763769600031 implements MigrationInterface {
  name = 'ExportRowOrder1763769600031';

  async up(q: QueryRunner): Promise<void> {
    if (q.connection.options.type !== 'postgres') return;
    for (const table of EXPORTED_TABLES) {
      await q.addColumn(
        table,
        new TableColumn({
          name: ROW_ORDER_COLUMN,
          type: 'bigint',
          isGenerated: true,
          generationStrategy: 'identity',
          generatedIdentity: 'BY DEFAULT',
        }),
      );
      await q.createIndex(
        table,
        new TableIndex({
          name: `idx_${table}_${ROW_ORDER_COLUMN}`,
          columnNames: [ROW_ORDER_COLUMN],
          isUnique: true,
        }),
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    if (q.connection.options.type !== 'postgres') return;
    for (const table of EXPORTED_TABLES) {
      await q.dropIndex(table, `idx_${table}_${ROW_ORDER_COLUMN}`);
      await q.dropColumn(table, ROW_ORDER_COLUMN);
    }
  }
}
