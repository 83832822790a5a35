import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Platform database: a notification of an ephemeral world keeps the world's id (`wld_...`, up to
 * 40 characters) in `environment`, which was made `varchar(4)` for `live` and `test`. SQLite never
 * enforced the length; PostgreSQL refused every notification of a world (found by
 * rfq-worlds.e2e-spec.ts on TEST_DATABASE=postgres: RFQ_QUOTE_RECEIVED missing in the world).
 * Widened to 40, as `world_id` columns are; the index on (user_id, environment, id) stays.
 */
export class NotificationWorldIds1763769600031 implements MigrationInterface {
  name = 'NotificationWorldIds1763769600031';

  async up(q: QueryRunner): Promise<void> {
    // PostgreSQL widens a varchar in place (TypeORM's changeColumn would drop and re-add the
    // column, losing the rows); SQLite's declared length is not enforced, so its table is left as
    // it is rather than rebuilt.
    if (q.connection.options.type !== 'postgres') return;
    await q.query('ALTER TABLE notifications ALTER COLUMN environment TYPE varchar(40)');
  }

  async down(q: QueryRunner): Promise<void> {
    if (q.connection.options.type !== 'postgres') return;
    await q.query('ALTER TABLE notifications ALTER COLUMN environment TYPE varchar(4)');
  }
}
