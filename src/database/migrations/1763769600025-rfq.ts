import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per world): requests for quote and their quotes. They live beside the
 * world's markets, orders and ledger, so an accept commits the RFQ, the quote and the trade in
 * one transaction of one file, and a sandbox reset touches the paper file only. A quote's
 * `hold_id` names the engine reservation that backs it (released when the quote ends). Indexes
 * serve the lists (a user's RFQs by id; the OPEN ones of a world), the OPEN cap, and the expiry
 * sweep (OPEN rows by expires_at). Schema API only, so it ports to PostgreSQL.
 */
export class Rfq1763769600025 implements MigrationInterface {
  name = 'Rfq1763769600025';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'rfqs',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '40' },
          { name: 'market_id', type: 'varchar', length: '40' },
          { name: 'quantity', type: 'integer' },
          { name: 'status', type: 'varchar', length: '16' },
          { name: 'expires_at', type: 'varchar', length: '30' },
          { name: 'accepted_quote_id', type: 'varchar', length: '40', isNullable: true },
          { name: 'trade_id', type: 'varchar', length: '40', isNullable: true },
          { name: 'created_at', type: 'varchar', length: '30' },
          { name: 'updated_at', type: 'varchar', length: '30' },
        ],
        foreignKeys: [
          {
            columnNames: ['market_id'],
            referencedTableName: 'markets',
            referencedColumnNames: ['id'],
          },
        ],
      }),
    );
    await q.createIndex(
      'rfqs',
      new TableIndex({ name: 'idx_rfqs_user_id', columnNames: ['user_id', 'id'] }),
    );
    await q.createIndex(
      'rfqs',
      new TableIndex({ name: 'idx_rfqs_status_expiry', columnNames: ['status', 'expires_at'] }),
    );
    await q.createIndex(
      'rfqs',
      new TableIndex({ name: 'idx_rfqs_status_id', columnNames: ['status', 'id'] }),
    );
    await q.createTable(
      new Table({
        name: 'rfq_quotes',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'rfq_id', type: 'varchar', length: '40' },
          { name: 'responder_id', type: 'varchar', length: '40' },
          { name: 'bid', type: 'integer', isNullable: true },
          { name: 'ask', type: 'integer', isNullable: true },
          { name: 'quantity', type: 'integer' },
          { name: 'status', type: 'varchar', length: '16' },
          { name: 'hold_id', type: 'varchar', length: '48' },
          { name: 'hold_cents', type: 'integer' },
          { name: 'expires_at', type: 'varchar', length: '30' },
          { name: 'created_at', type: 'varchar', length: '30' },
          { name: 'updated_at', type: 'varchar', length: '30' },
        ],
        foreignKeys: [
          { columnNames: ['rfq_id'], referencedTableName: 'rfqs', referencedColumnNames: ['id'] },
        ],
      }),
    );
    await q.createIndex(
      'rfq_quotes',
      new TableIndex({ name: 'idx_rfq_quotes_rfq', columnNames: ['rfq_id', 'status', 'id'] }),
    );
    await q.createIndex(
      'rfq_quotes',
      new TableIndex({
        name: 'idx_rfq_quotes_status_expiry',
        columnNames: ['status', 'expires_at'],
      }),
    );
    await q.createIndex(
      'rfq_quotes',
      new TableIndex({ name: 'idx_rfq_quotes_responder', columnNames: ['responder_id', 'status'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('rfq_quotes');
    await q.dropTable('rfqs');
  }
}
