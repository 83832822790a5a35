import { Table, TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Access: API keys, tier requests, mail outbox, email verification, terms, MFA, idempotency. */
export class Access1763769600002 implements MigrationInterface {
  name = 'Access1763769600002';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumns('users', [
      new TableColumn({ name: 'mfa_secret_enc', type: 'varchar', length: '300', isNullable: true }),
      new TableColumn({ name: 'mfa_last_counter', type: 'integer', default: 0 }),
      new TableColumn({ name: 'mfa_failed_attempts', type: 'integer', default: 0 }),
      new TableColumn({
        name: 'mfa_locked_until',
        type: 'varchar',
        length: '30',
        isNullable: true,
      }),
      new TableColumn({ name: 'step_up_until', type: 'varchar', length: '30', isNullable: true }),
    ]);
    await q.createTable(
      new Table({
        name: 'api_keys',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '40' },
          { name: 'name', type: 'varchar', length: '100' },
          { name: 'environment', type: 'varchar', length: '4' },
          { name: 'prefix', type: 'varchar', length: '20' },
          { name: 'secret_hash', type: 'varchar', length: '64', isUnique: true },
          { name: 'scopes', type: 'varchar', length: '1000' },
          { name: 'tier', type: 'varchar', length: '12' },
          { name: 'expires_at', type: 'varchar', length: '30', isNullable: true },
          { name: 'signing_required', type: 'boolean', default: false },
          { name: 'signing_secret_enc', type: 'varchar', length: '300', isNullable: true },
          { name: 'created_at', type: 'varchar', length: '30' },
          { name: 'rotated_at', type: 'varchar', length: '30', isNullable: true },
          { name: 'last_used_at', type: 'varchar', length: '30', isNullable: true },
          { name: 'revoked_at', type: 'varchar', length: '30', isNullable: true },
        ],
        foreignKeys: [
          { columnNames: ['user_id'], referencedTableName: 'users', referencedColumnNames: ['id'] },
        ],
      }),
    );
    await q.createIndex(
      'api_keys',
      new TableIndex({ name: 'idx_api_keys_user', columnNames: ['user_id', 'id'] }),
    );
    await q.createTable(
      new Table({
        name: 'tier_requests',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'key_id', type: 'varchar', length: '40' },
          { name: 'user_id', type: 'varchar', length: '40' },
          { name: 'tier', type: 'varchar', length: '12' },
          { name: 'reason', type: 'varchar', length: '1000', default: "''" },
          { name: 'status', type: 'varchar', length: '10' },
          { name: 'created_at', type: 'varchar', length: '30' },
          { name: 'decided_at', type: 'varchar', length: '30', isNullable: true },
          { name: 'decided_by', type: 'varchar', length: '40', isNullable: true },
        ],
        foreignKeys: [
          {
            columnNames: ['key_id'],
            referencedTableName: 'api_keys',
            referencedColumnNames: ['id'],
          },
        ],
      }),
    );
    await q.createIndex(
      'tier_requests',
      new TableIndex({ name: 'idx_tier_requests_status', columnNames: ['status', 'id'] }),
    );
    await q.createTable(
      new Table({
        name: 'mail_outbox',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'to_address', type: 'varchar', length: '320' },
          { name: 'kind', type: 'varchar', length: '40' },
          { name: 'subject', type: 'varchar', length: '300' },
          { name: 'body', type: 'text' },
          { name: 'created_at', type: 'varchar', length: '30' },
          { name: 'sent_at', type: 'varchar', length: '30', isNullable: true },
          { name: 'error', type: 'varchar', length: '500', isNullable: true },
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'email_verifications',
        columns: [
          { name: 'token_hash', type: 'varchar', length: '64', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '40' },
          { name: 'expires_at', type: 'varchar', length: '30' },
          { name: 'used_at', type: 'varchar', length: '30', isNullable: true },
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'terms_acceptances',
        columns: [
          { name: 'user_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'version', type: 'varchar', length: '20', isPrimary: true },
          { name: 'accepted_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'idempotency_records',
        columns: [
          { name: 'owner_id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'idem_key', type: 'varchar', length: '255', isPrimary: true },
          { name: 'fingerprint', type: 'varchar', length: '64' },
          { name: 'state', type: 'varchar', length: '12' },
          { name: 'response_status', type: 'integer', isNullable: true },
          { name: 'response_body', type: 'text', isNullable: true },
          { name: 'response_type', type: 'varchar', length: '100', isNullable: true },
          { name: 'created_at', type: 'varchar', length: '30' },
          { name: 'expires_at', type: 'varchar', length: '30' },
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'idempotency_records',
      'terms_acceptances',
      'email_verifications',
      'mail_outbox',
      'tier_requests',
      'api_keys',
    ]) {
      await q.dropTable(t);
    }
    for (const c of [
      'step_up_until',
      'mfa_locked_until',
      'mfa_failed_attempts',
      'mfa_last_counter',
      'mfa_secret_enc',
    ]) {
      await q.dropColumn('users', c);
    }
  }
}
