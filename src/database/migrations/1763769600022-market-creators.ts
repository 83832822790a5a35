import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per world): markets gain `creator_id`, the user who created the market
 * through POST /markets (null for seeded markets, which nobody owns). The index serves the count
 * of a creator's open markets (the paper world's per-user cap). Schema API only.
 */
export class MarketCreators1763769600022 implements MigrationInterface {
  name = 'MarketCreators1763769600022';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn(
      'markets',
      new TableColumn({ name: 'creator_id', type: 'varchar', length: '40', isNullable: true }),
    );
    await q.createIndex(
      'markets',
      new TableIndex({ name: 'idx_markets_creator_status', columnNames: ['creator_id', 'status'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex('markets', 'idx_markets_creator_status');
    await q.dropColumn('markets', 'creator_id');
  }
}
