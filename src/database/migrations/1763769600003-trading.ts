import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per environment): accounts, orders, trades, positions and the ledger.
 * Schema API only, so it ports to PostgreSQL; money and quantities are integer columns.
 */
export class Trading1763769600003 implements MigrationInterface {
  name = 'Trading1763769600003';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'accounts',
        columns: [
          { name: 'user_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'balance_cents', type: 'bigint' },
          { name: 'created_at', type: 'varchar', length: '30' },
          { name: 'updated_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'orders',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '40' },
          { name: 'key_id', type: 'varchar', length: '40', isNullable: true },
          { name: 'client_order_id', type: 'varchar', length: '64', isNullable: true },
          { name: 'market_id', type: 'varchar', length: '40' },
          { name: 'action', type: 'varchar', length: '4' },
          { name: 'side', type: 'varchar', length: '3' },
          { name: 'type', type: 'varchar', length: '6' },
          { name: 'price', type: 'integer', isNullable: true },
          { name: 'book_side', type: 'varchar', length: '3' },
          { name: 'book_price', type: 'integer', isNullable: true },
          { name: 'quantity', type: 'bigint' },
          { name: 'filled_quantity', type: 'bigint' },
          { name: 'fill_cost', type: 'bigint' },
          { name: 'status', type: 'varchar', length: '16' },
          { name: 'cancel_reason', type: 'varchar', length: '24', isNullable: true },
          { name: 'time_in_force', type: 'varchar', length: '3' },
          { name: 'post_only', type: 'boolean' },
          { name: 'sequence', type: 'bigint' },
          { name: 'created_at', type: 'varchar', length: '30' },
          { name: 'updated_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.createIndex(
      'orders',
      new TableIndex({ name: 'idx_orders_user_id', columnNames: ['user_id', 'id'] }),
    );
    await q.createIndex(
      'orders',
      new TableIndex({ name: 'idx_orders_status_seq', columnNames: ['status', 'sequence'] }),
    );
    await q.createTable(
      new Table({
        name: 'trades',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'market_id', type: 'varchar', length: '40' },
          { name: 'price', type: 'integer' },
          { name: 'quantity', type: 'bigint' },
          { name: 'maker_order_id', type: 'varchar', length: '40' },
          { name: 'taker_order_id', type: 'varchar', length: '40' },
          { name: 'maker_user_id', type: 'varchar', length: '40' },
          { name: 'taker_user_id', type: 'varchar', length: '40' },
          { name: 'taker_book_side', type: 'varchar', length: '3' },
          { name: 'created_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.createIndex(
      'trades',
      new TableIndex({ name: 'idx_trades_maker', columnNames: ['maker_order_id'] }),
    );
    await q.createIndex(
      'trades',
      new TableIndex({ name: 'idx_trades_taker', columnNames: ['taker_order_id'] }),
    );
    await q.createIndex(
      'trades',
      new TableIndex({ name: 'idx_trades_market_id', columnNames: ['market_id', 'id'] }),
    );
    await q.createTable(
      new Table({
        name: 'positions',
        columns: [
          { name: 'user_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'market_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'yes_qty', type: 'bigint' },
          { name: 'no_qty', type: 'bigint' },
          { name: 'yes_cost', type: 'bigint' },
          { name: 'no_cost', type: 'bigint' },
          { name: 'realized_pnl', type: 'bigint' },
          { name: 'updated_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'ledger',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '40' },
          { name: 'type', type: 'varchar', length: '12' },
          { name: 'amount_cents', type: 'bigint' },
          { name: 'balance_after_cents', type: 'bigint' },
          { name: 'reference_id', type: 'varchar', length: '64', isNullable: true },
          { name: 'created_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.createIndex(
      'ledger',
      new TableIndex({ name: 'idx_ledger_user_id', columnNames: ['user_id', 'id'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['ledger', 'positions', 'trades', 'orders', 'accounts']) await q.dropTable(t);
  }
}
