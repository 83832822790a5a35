import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Engine database (one per environment): markets as that engine sees them. */
export class EngineInit1763769600001 implements MigrationInterface {
  name = 'EngineInit1763769600001';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'markets',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'slug', type: 'varchar', length: '120', isUnique: true },
          { name: 'title', type: 'varchar', length: '300' },
          { name: 'description', type: 'text', default: "''" },
          { name: 'category', type: 'varchar', length: '20' },
          { name: 'status', type: 'varchar', length: '20' },
          { name: 'outcome', type: 'varchar', length: '3', isNullable: true },
          { name: 'close_time', type: 'varchar', length: '30' },
          { name: 'reference_price', type: 'integer' },
          { name: 'last_price', type: 'integer', isNullable: true },
          { name: 'volume', type: 'integer', default: 0 },
          { name: 'created_at', type: 'varchar', length: '30' },
          { name: 'updated_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.createIndex(
      'markets',
      new TableIndex({ name: 'idx_markets_close_id', columnNames: ['close_time', 'id'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('markets');
  }
}
