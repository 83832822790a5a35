import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per world): sandbox scenarios. A world's scenarios live in its own file,
 * so a sandbox reset (and later a world's deletion) takes them with the rest of the world.
 * `effect` is the effect as JSON; `remaining` counts down to 0 as the scenario fires and the row
 * stays (spent) until it is deleted. Schema API only, so it ports to PostgreSQL.
 */
export class Scenarios1763769600027 implements MigrationInterface {
  name = 'Scenarios1763769600027';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'scenarios',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '40' },
          { name: 'operation', type: 'varchar', length: '200' },
          { name: 'market_id', type: 'varchar', length: '40', isNullable: true },
          { name: 'client_order_id_prefix', type: 'varchar', length: '64', isNullable: true },
          { name: 'effect', type: 'varchar', length: '400' },
          { name: 'times', type: 'integer' },
          { name: 'remaining', type: 'integer' },
          { name: 'created_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    // A user's scenarios in id (creation) order: the keyset of GET /sandbox/scenarios.
    await q.createIndex(
      'scenarios',
      new TableIndex({ name: 'idx_scenarios_user_id', columnNames: ['user_id', 'id'] }),
    );
    // Every request of a test key looks up its operation's live scenarios, oldest first.
    await q.createIndex(
      'scenarios',
      new TableIndex({
        name: 'idx_scenarios_user_operation',
        columnNames: ['user_id', 'operation', 'remaining', 'id'],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('scenarios');
  }
}
