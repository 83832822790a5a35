import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Platform database, PostgreSQL: `worlds.starting_balance_cents` was `integer` (up to about
 * $21.4 million), while POST /sandbox/worlds takes up to 1,000,000,000,000 cents: a larger
 * starting balance answered 500 on PostgreSQL only (SQLite's INTEGER holds 8 bytes), found by the
 * schema-fuzz e2e suite on TEST_DATABASE=postgres. Now `bigint`, as the accounts' balance_cents
 * it seeds. Changed in place, as 1763769600033 changes its columns; SQLite is left as it is.
 */
export class WorldStartingBalance1763769600037 implements MigrationInterface {
  name = 'WorldStartingBalance1763769600037';

  async up(q: QueryRunner): Promise<void> {
    if (q.connection.options.type !== 'postgres') return;
    await q.query('ALTER TABLE worlds ALTER COLUMN starting_balance_cents TYPE bigint');
  }

  async down(q: QueryRunner): Promise<void> {
    if (q.connection.options.type !== 'postgres') return;
    await q.query('ALTER TABLE worlds ALTER COLUMN starting_balance_cents TYPE integer');
  }
}
