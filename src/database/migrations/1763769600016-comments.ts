import { Table, TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per world): market comments and their reports, and the time a market
 * was resolved (the 30-day comment rule reads it; `updated_at` moves with every price change).
 * `comments.reply_count` and `report_count` are kept by the writes that change them, so a page
 * needs no counting. Markets resolved before this migration take their `updated_at` as the best
 * record of it. Schema API only, so it ports to PostgreSQL.
 */
export class Comments1763769600016 implements MigrationInterface {
  name = 'Comments1763769600016';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'comments',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'market_id', type: 'varchar', length: '40' },
          { name: 'parent_id', type: 'varchar', length: '40', isNullable: true },
          { name: 'user_id', type: 'varchar', length: '40' },
          // null once the author deletes it
          { name: 'body', type: 'text', isNullable: true },
          { name: 'status', type: 'varchar', length: '10', default: "'VISIBLE'" },
          { name: 'reply_count', type: 'integer', default: 0 },
          { name: 'report_count', type: 'integer', default: 0 },
          { name: 'created_at', type: 'varchar', length: '30' },
          { name: 'edited_at', type: 'varchar', length: '30', isNullable: true },
        ],
      }),
    );
    // A market's top-level comments newest first, keyset on id.
    await q.createIndex(
      'comments',
      new TableIndex({
        name: 'idx_comments_market',
        columnNames: ['market_id', 'parent_id', 'id'],
      }),
    );
    // One thread's replies oldest first.
    await q.createIndex(
      'comments',
      new TableIndex({ name: 'idx_comments_parent', columnNames: ['parent_id', 'id'] }),
    );
    // The sandbox reset's clean-up of one user's comments.
    await q.createIndex(
      'comments',
      new TableIndex({ name: 'idx_comments_user', columnNames: ['user_id'] }),
    );
    await q.createTable(
      new Table({
        name: 'comment_reports',
        columns: [
          { name: 'comment_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'reason', type: 'varchar', length: '12' },
          { name: 'note', type: 'text', isNullable: true },
          { name: 'created_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.addColumn(
      'markets',
      new TableColumn({ name: 'resolved_at', type: 'varchar', length: '30', isNullable: true }),
    );
    // Plain SQL (the query builder would map markets to MarketEntity, which lacks the column).
    await q.query(`UPDATE markets SET resolved_at = updated_at WHERE status = 'RESOLVED'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('markets', 'resolved_at');
    await q.dropTable('comment_reports');
    await q.dropTable('comments');
  }
}
