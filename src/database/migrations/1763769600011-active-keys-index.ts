import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Platform database: a partial index of the active (unrevoked) API keys by user. Every session
 * request reads its user's active keys (its tier); without it the lookup visits every revoked key
 * of the user too, and revoked keys pile up without bound. Partial indexes exist in SQLite and
 * PostgreSQL alike.
 */
export class ActiveKeysIndex1763769600011 implements MigrationInterface {
  name = 'ActiveKeysIndex1763769600011';

  async up(q: QueryRunner): Promise<void> {
    await q.createIndex(
      'api_keys',
      new TableIndex({
        name: 'idx_api_keys_active_user',
        columnNames: ['user_id'],
        where: 'revoked_at IS NULL',
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex('api_keys', 'idx_api_keys_active_user');
  }
}
