import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Platform database: wrong MFA codes and step-up locks per user and kind of credential (API keys,
 * sessions), replacing the per-user counters of the users table (left in place, unused; their
 * state is copied over). Also an index for finding a webhook event's delivery.
 */
export class MfaLockouts1763769600008 implements MigrationInterface {
  name = 'MfaLockouts1763769600008';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'mfa_lockouts',
        columns: [
          { name: 'credential_id', type: 'varchar', length: '60', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '40' },
          { name: 'failed_attempts', type: 'integer', default: 0 },
          { name: 'locked_until', type: 'varchar', length: '30', isNullable: true },
        ],
      }),
    );
    await q.createIndex(
      'mfa_lockouts',
      new TableIndex({ name: 'idx_mfa_lockouts_user', columnNames: ['user_id'] }),
    );
    // A lock or a count in progress carries over to both kinds of credential.
    for (const kind of ['session', 'keys']) {
      await q.query(
        `INSERT INTO mfa_lockouts (credential_id, user_id, failed_attempts, locked_until)
         SELECT '${kind}:' || id, id, mfa_failed_attempts, mfa_locked_until FROM users
         WHERE mfa_failed_attempts > 0 OR mfa_locked_until IS NOT NULL`,
      );
    }
    // Test deliveries are found by their event.
    await q.createIndex(
      'webhook_deliveries',
      new TableIndex({ name: 'idx_dlv_endpoint_event', columnNames: ['endpoint_id', 'event_id'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex('webhook_deliveries', 'idx_dlv_endpoint_event');
    await q.dropTable('mfa_lockouts');
  }
}
