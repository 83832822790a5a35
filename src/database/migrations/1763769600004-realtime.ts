import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Platform database: cancel-on-disconnect settings per API key. */
export class Realtime1763769600004 implements MigrationInterface {
  name = 'Realtime1763769600004';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'cancel_on_disconnect',
        columns: [
          { name: 'key_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '40' },
          { name: 'environment', type: 'varchar', length: '4' },
          { name: 'grace_seconds', type: 'integer' },
          { name: 'enabled_at', type: 'varchar', length: '30' },
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('cancel_on_disconnect');
  }
}
