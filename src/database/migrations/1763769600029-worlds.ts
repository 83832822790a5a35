import { Table, TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Platform database: ephemeral worlds. `worlds` is the registry (the world's own records live in
 * its file under DATA_DIR/worlds/); `status` is CREATING until the file and the key exist, and
 * DELETING from the moment a delete starts, so a boot finishes or removes a half world.
 * `clock_offset_ms` is how far the world's clock runs ahead of the service clock (it survives an
 * idle unload and a restart). A world's key and its webhook endpoints name the world
 * (`world_id`), so they reach only it.
 */
export class Worlds1763769600029 implements MigrationInterface {
  name = 'Worlds1763769600029';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'worlds',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '40' },
          { name: 'name', type: 'varchar', length: '100', isNullable: true },
          { name: 'seed', type: 'integer' },
          { name: 'starting_balance_cents', type: 'integer' },
          { name: 'status', type: 'varchar', length: '10' },
          { name: 'key_id', type: 'varchar', length: '40', isNullable: true },
          { name: 'clock_offset_ms', type: 'integer', default: 0 },
          { name: 'expires_at', type: 'varchar', length: '30' },
          { name: 'created_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.createIndex(
      'worlds',
      new TableIndex({ name: 'idx_worlds_user', columnNames: ['user_id', 'id'] }),
    );
    await q.createIndex(
      'worlds',
      new TableIndex({ name: 'idx_worlds_expiry', columnNames: ['expires_at'] }),
    );
    await q.addColumn(
      'api_keys',
      new TableColumn({ name: 'world_id', type: 'varchar', length: '40', isNullable: true }),
    );
    await q.addColumn(
      'webhook_endpoints',
      new TableColumn({ name: 'world_id', type: 'varchar', length: '40', isNullable: true }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('webhook_endpoints', 'world_id');
    await q.dropColumn('api_keys', 'world_id');
    await q.dropTable('worlds');
  }
}
