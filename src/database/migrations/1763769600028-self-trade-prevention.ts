import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per world), self-trade prevention (issue 23): each order keeps the mode it
 * was placed with, so a resting order restored after a restart still cancels the way its owner
 * asked when a later order of the same account meets it. Orders from before this column existed
 * take the default, CANCEL_TAKER, which is what the engine did for every order from then on.
 * Schema API only.
 */
export class SelfTradePrevention1763769600028 implements MigrationInterface {
  name = 'SelfTradePrevention1763769600028';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn(
      'orders',
      new TableColumn({
        name: 'self_trade_prevention',
        type: 'varchar',
        length: '12',
        default: "'CANCEL_TAKER'",
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('orders', 'self_trade_prevention');
  }
}
