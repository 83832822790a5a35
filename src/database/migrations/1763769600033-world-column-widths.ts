import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Platform database, PostgreSQL: two columns of the ephemeral worlds were narrower than what they
 * hold. SQLite never enforced either (a declared varchar length, an INTEGER of up to 8 bytes), so
 * both only failed on PostgreSQL, found by the e2e suite on TEST_DATABASE=postgres:
 * - `notifications.environment` keeps a world's id (`wld_...`, up to 40 characters) but was
 *   `varchar(4)` for `live` and `test`: every notification of a world was refused (rfq-worlds:
 *   RFQ_QUOTE_RECEIVED missing in the world). Widened to 40, as the `world_id` columns are.
 * - `worlds.clock_offset_ms` was `integer` (up to about 24.8 days): advancing a world's clock
 *   further answered 500 (worlds-crypto: 230 days). Now `bigint`.
 * Changed in place (TypeORM's changeColumn would drop and re-add the column, losing the rows); the
 * SQLite tables are left as they are rather than rebuilt.
 */
export class WorldColumnWidths1763769600033 implements MigrationInterface {
  name = 'WorldColumnWidths1763769600033';

  async up(q: QueryRunner): Promise<void> {
    if (q.connection.options.type !== 'postgres') return;
    await q.query('ALTER TABLE notifications ALTER COLUMN environment TYPE varchar(40)');
    await q.query('ALTER TABLE worlds ALTER COLUMN clock_offset_ms TYPE bigint');
  }

  async down(q: QueryRunner): Promise<void> {
    if (q.connection.options.type !== 'postgres') return;
    await q.query('ALTER TABLE worlds ALTER COLUMN clock_offset_ms TYPE integer');
    await q.query('ALTER TABLE notifications ALTER COLUMN environment TYPE varchar(4)');
  }
}
