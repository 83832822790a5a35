import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per world): watchlists. A world's lists live beside its markets, so a list
 * can only hold markets of its own world (the foreign key says so) and a sandbox reset clears the
 * paper file only. `name_key` is the name as compared (NFC, lower-cased): the unique index
 * (user_id, name_key) makes "Crypto" and "cRYPTO", or "Ärger" in either normal form and "ärger",
 * one name per user, while `name` keeps the spelling as sent. `watchlist_markets` keeps each list's
 * order in `position`; its rows go with their list (ON DELETE CASCADE). Schema API only, so it
 * ports to PostgreSQL.
 */
export class Watchlists1763769600017 implements MigrationInterface {
  name = 'Watchlists1763769600017';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'watchlists',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '40' },
          { name: 'name', type: 'varchar', length: '64' },
          // Lower-casing may lengthen a name (U+0130 becomes two code points).
          { name: 'name_key', type: 'varchar', length: '256' },
          { name: 'created_at', type: 'varchar', length: '30' },
          { name: 'updated_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.createIndex(
      'watchlists',
      new TableIndex({
        name: 'uq_watchlists_user_name',
        columnNames: ['user_id', 'name_key'],
        isUnique: true,
      }),
    );
    // A user's lists in id (creation) order: the keyset of GET /watchlists, and the count of the cap.
    await q.createIndex(
      'watchlists',
      new TableIndex({ name: 'idx_watchlists_user_id', columnNames: ['user_id', 'id'] }),
    );
    await q.createTable(
      new Table({
        name: 'watchlist_markets',
        columns: [
          { name: 'watchlist_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'market_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'position', type: 'integer' },
        ],
        foreignKeys: [
          {
            columnNames: ['watchlist_id'],
            referencedTableName: 'watchlists',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
          {
            columnNames: ['market_id'],
            referencedTableName: 'markets',
            referencedColumnNames: ['id'],
          },
        ],
      }),
    );
    await q.createIndex(
      'watchlist_markets',
      new TableIndex({
        name: 'uq_watchlist_markets_position',
        columnNames: ['watchlist_id', 'position'],
        isUnique: true,
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('watchlist_markets');
    await q.dropTable('watchlists');
  }
}
