import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Platform database, PostgreSQL: two more columns narrower than what they hold (as in
 * 1763769600033). SQLite never enforced either (an INTEGER of up to 8 bytes, a declared varchar
 * length), so both answered 500 on PostgreSQL only, found by the e2e suite on
 * TEST_DATABASE=postgres:
 * - `worlds.starting_balance_cents` was `integer` (up to 2,147,483,647), while POST
 *   /sandbox/worlds takes up to 1,000,000,000,000 cents (schema-fuzz). Now `bigint`, as the
 *   accounts' balance_cents it seeds.
 * - `idempotency_records.owner_id` is `<world>:<user id>`, 53 characters for an ephemeral world
 *   (`wld_...:usr_...`), but was `varchar(40)`: every request with an Idempotency-Key in a world
 *   was refused (worlds-clock). Widened to 60, as the engine's idempotency_effects.owner_id is.
 * Changed in place; the SQLite tables are left as they are rather than rebuilt.
 */
export class PlatformColumnWidths1763769600037 implements MigrationInterface {
  name = 'PlatformColumnWidths1763769600037';

  async up(q: QueryRunner): Promise<void> {
    if (q.connection.options.type !== 'postgres') return;
    await q.query('ALTER TABLE worlds ALTER COLUMN starting_balance_cents TYPE bigint');
    await q.query('ALTER TABLE idempotency_records ALTER COLUMN owner_id TYPE varchar(60)');
  }

  async down(q: QueryRunner): Promise<void> {
    if (q.connection.options.type !== 'postgres') return;
    await q.query('ALTER TABLE idempotency_records ALTER COLUMN owner_id TYPE varchar(40)');
    await q.query('ALTER TABLE worlds ALTER COLUMN starting_balance_cents TYPE integer');
  }
}
