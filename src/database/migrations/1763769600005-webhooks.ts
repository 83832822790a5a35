import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Platform database: developer webhooks (endpoints, events, deliveries) and in-app notifications. */
export class Webhooks1763769600005 implements MigrationInterface {
  name = 'Webhooks1763769600005';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'webhook_endpoints',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '40' },
          { name: 'environment', type: 'varchar', length: '4' },
          { name: 'url', type: 'varchar', length: '2048' },
          { name: 'description', type: 'varchar', length: '500', default: "''" },
          { name: 'events', type: 'varchar', length: '1000' },
          { name: 'status', type: 'varchar', length: '10' },
          { name: 'secret_enc', type: 'varchar', length: '300' },
          { name: 'secret_version', type: 'integer' },
          { name: 'prev_secret_enc', type: 'varchar', length: '300', isNullable: true },
          { name: 'prev_secret_until', type: 'varchar', length: '30', isNullable: true },
          { name: 'streak_baseline_at', type: 'varchar', length: '30', isNullable: true },
          { name: 'last_success_at', type: 'varchar', length: '30', isNullable: true },
          { name: 'last_failure_at', type: 'varchar', length: '30', isNullable: true },
          { name: 'last_error', type: 'varchar', length: '500', isNullable: true },
          { name: 'suspended_at', type: 'varchar', length: '30', isNullable: true },
          { name: 'suspension_reason', type: 'varchar', length: '300', isNullable: true },
          { name: 'created_at', type: 'varchar', length: '30' },
          { name: 'updated_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.createIndex(
      'webhook_endpoints',
      new TableIndex({ name: 'idx_whe_user', columnNames: ['user_id', 'id'] }),
    );
    await q.createTable(
      new Table({
        name: 'webhook_events',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'environment', type: 'varchar', length: '4' },
          { name: 'type', type: 'varchar', length: '60' },
          { name: 'payload', type: 'text' },
          { name: 'created_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.createTable(
      new Table({
        name: 'webhook_deliveries',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'endpoint_id', type: 'varchar', length: '40' },
          { name: 'event_id', type: 'varchar', length: '40' },
          { name: 'event_type', type: 'varchar', length: '60' },
          { name: 'status', type: 'varchar', length: '14' },
          { name: 'attempts', type: 'integer', default: 0 },
          { name: 'next_attempt_at', type: 'varchar', length: '30', isNullable: true },
          { name: 'is_replay', type: 'boolean', default: false },
          { name: 'replay_of', type: 'varchar', length: '40', isNullable: true },
          { name: 'created_at', type: 'varchar', length: '30' },
          { name: 'last_attempt_at', type: 'varchar', length: '30', isNullable: true },
          { name: 'completed_at', type: 'varchar', length: '30', isNullable: true },
          { name: 'response_status', type: 'integer', isNullable: true },
          { name: 'last_error', type: 'varchar', length: '500', isNullable: true },
        ],
      }),
    );
    await q.createIndex(
      'webhook_deliveries',
      new TableIndex({ name: 'idx_dlv_due', columnNames: ['status', 'next_attempt_at'] }),
    );
    await q.createIndex(
      'webhook_deliveries',
      new TableIndex({ name: 'idx_dlv_endpoint', columnNames: ['endpoint_id', 'id'] }),
    );
    await q.createIndex(
      'webhook_deliveries',
      new TableIndex({
        name: 'idx_dlv_endpoint_due',
        columnNames: ['endpoint_id', 'status', 'next_attempt_at'],
      }),
    );
    await q.createIndex(
      'webhook_deliveries',
      new TableIndex({
        name: 'idx_dlv_endpoint_done',
        columnNames: ['endpoint_id', 'completed_at'],
      }),
    );
    await q.createTable(
      new Table({
        name: 'notifications',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '40' },
          { name: 'type', type: 'varchar', length: '60' },
          { name: 'title', type: 'varchar', length: '300' },
          { name: 'body', type: 'text' },
          { name: 'data', type: 'text' },
          { name: 'created_at', type: 'varchar', length: '30' },
          { name: 'read_at', type: 'varchar', length: '30', isNullable: true },
        ],
      }),
    );
    await q.createIndex(
      'notifications',
      new TableIndex({ name: 'idx_ntf_user', columnNames: ['user_id', 'id'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['notifications', 'webhook_deliveries', 'webhook_events', 'webhook_endpoints'])
      await q.dropTable(t);
  }
}
