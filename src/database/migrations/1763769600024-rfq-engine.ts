import { Table, TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per world), request for quote (issue 20), engine side: RFQ orders name
 * their request (`orders.rfq_id`, null for book orders), trades say where they traded
 * (`trades.source`: BOOK, or RFQ for a quote cross), and `quote_holds` keeps the collateral held
 * for OPEN quotes, so a restart restores it into the engine's reservations. Schema API only.
 */
export class RfqEngine1763769600024 implements MigrationInterface {
  name = 'RfqEngine1763769600024';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn(
      'orders',
      new TableColumn({ name: 'rfq_id', type: 'varchar', length: '40', isNullable: true }),
    );
    await q.addColumn(
      'trades',
      new TableColumn({ name: 'source', type: 'varchar', length: '4', default: "'BOOK'" }),
    );
    await q.createTable(
      new Table({
        name: 'quote_holds',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '40' },
          { name: 'market_id', type: 'varchar', length: '40' },
          { name: 'amount_cents', type: 'bigint' },
          { name: 'created_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.createIndex(
      'quote_holds',
      new TableIndex({ name: 'idx_quote_holds_user_id', columnNames: ['user_id'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('quote_holds');
    await q.dropColumn('trades', 'source');
    await q.dropColumn('orders', 'rfq_id');
  }
}
