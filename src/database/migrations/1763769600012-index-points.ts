import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per environment): the sampled history of the market indices. One row per
 * index and sampling boundary: the primary key (slug, time) makes a second write of the same
 * point a no-op, so concurrent catch-ups never duplicate it. The value is stored in hundredths of
 * a YES cent (an integer, exact on every database); null when no market of the index had a mark.
 * The time index serves the retention delete.
 */
export class IndexPoints1763769600012 implements MigrationInterface {
  name = 'IndexPoints1763769600012';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'index_points',
        columns: [
          { name: 'slug', type: 'varchar', length: '40', isPrimary: true },
          { name: 'time', type: 'varchar', length: '30', isPrimary: true },
          { name: 'value_hundredths', type: 'integer', isNullable: true },
          { name: 'market_count', type: 'integer' },
        ],
      }),
    );
    await q.createIndex(
      'index_points',
      new TableIndex({ name: 'idx_index_points_time', columnNames: ['time'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex('index_points', 'idx_index_points_time');
    await q.dropTable('index_points');
  }
}
