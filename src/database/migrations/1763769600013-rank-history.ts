import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per environment): rank history. `rank_samples` holds one row per sampled
 * boundary (so a boundary is sampled at most once, even when it had no participants);
 * `rank_points` one row per participant and boundary, unique on (account, time), which also
 * serves each account's history in time order. Times are ISO 8601 UTC text, as elsewhere.
 * Schema API only, so it ports to PostgreSQL.
 */
export class RankHistory1763769600013 implements MigrationInterface {
  name = 'RankHistory1763769600013';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'rank_samples',
        columns: [
          { name: 'time', type: 'varchar', length: '30', isPrimary: true },
          { name: 'participants', type: 'integer' },
          { name: 'sampled_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'rank_points',
        columns: [
          { name: 'account_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'time', type: 'varchar', length: '30', isPrimary: true },
          { name: 'rank', type: 'integer' },
          { name: 'participants', type: 'integer' },
          { name: 'realized_pnl_cents', type: 'bigint' },
        ],
      }),
    );
    // Retention deletes by time.
    await q.createIndex(
      'rank_points',
      new TableIndex({ name: 'idx_rank_points_time', columnNames: ['time'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('rank_points');
    await q.dropTable('rank_samples');
  }
}
