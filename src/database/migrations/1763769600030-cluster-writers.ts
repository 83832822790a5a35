import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Platform database: the fencing epoch of each world's engine writer (src/modules/cluster). The
 * instance elected writer of a world (a PostgreSQL advisory lock) increments `epoch` as it takes
 * over; every commit of its engine checks, first in its transaction, that the row still holds
 * its epoch, so a writer deposed without noticing can never commit after the next one took over.
 * `holder` (the instance) and `acquired_at` are for operators. Unused on SQLite, where one
 * process is always the writer, but created there too: both drivers share the migrations.
 */
export class ClusterWriters1763769600030 implements MigrationInterface {
  name = 'ClusterWriters1763769600030';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'cluster_writers',
        columns: [
          { name: 'world', type: 'varchar', length: '40', isPrimary: true },
          { name: 'epoch', type: 'bigint' },
          { name: 'holder', type: 'varchar', length: '100' },
          { name: 'acquired_at', type: 'varchar', length: '30' },
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('cluster_writers');
  }
}
