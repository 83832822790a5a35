import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Platform database: wrong MFA codes and step-up locks per credential (API key, or a user's
 * sessions), replacing the per-user counters of the users table (left in place, unused).
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
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('mfa_lockouts');
  }
}
