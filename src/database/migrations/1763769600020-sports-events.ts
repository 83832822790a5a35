import { Table, TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per world): sports events, and the link of a market to its event. Each
 * world has its own events, beside the markets they resolve, so the paper sandbox can end its
 * events without touching the live world's. An event is FINAL once `final_at` is set (with both
 * scores); SCHEDULED and LIVE are not stored: they follow the service clock against
 * `start_time`. `markets.event_rule` says how the final score resolves a linked market
 * (HOME_WINS, AWAY_WINS, OVER_<n>). Schema API only, so it ports to PostgreSQL.
 */
export class SportsEvents1763769600020 implements MigrationInterface {
  name = 'SportsEvents1763769600020';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'sports_events',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'slug', type: 'varchar', length: '120', isUnique: true },
          { name: 'sport', type: 'varchar', length: '40' },
          { name: 'league', type: 'varchar', length: '60' },
          { name: 'title', type: 'varchar', length: '200' },
          { name: 'home', type: 'varchar', length: '80' },
          { name: 'away', type: 'varchar', length: '80' },
          { name: 'start_time', type: 'varchar', length: '30' },
          { name: 'home_score', type: 'integer', isNullable: true },
          { name: 'away_score', type: 'integer', isNullable: true },
          { name: 'final_at', type: 'varchar', length: '30', isNullable: true },
          { name: 'created_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    // The keyset of GET /sports/events (start_time, id), narrowed by sport and league.
    await q.createIndex(
      'sports_events',
      new TableIndex({ name: 'idx_sports_events_start_id', columnNames: ['start_time', 'id'] }),
    );
    await q.addColumns('markets', [
      new TableColumn({ name: 'event_id', type: 'varchar', length: '40', isNullable: true }),
      new TableColumn({ name: 'event_rule', type: 'varchar', length: '20', isNullable: true }),
    ]);
    await q.createIndex(
      'markets',
      new TableIndex({ name: 'idx_markets_event_id', columnNames: ['event_id'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex('markets', 'idx_markets_event_id');
    await q.dropColumn('markets', 'event_rule');
    await q.dropColumn('markets', 'event_id');
    await q.dropTable('sports_events');
  }
}
