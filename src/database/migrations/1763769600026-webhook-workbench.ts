import { Table, TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Platform database: the webhook workbench. An endpoint's pending simulated failures (how many of
 * its next attempts fail without a request, and how), kept here so a restart does not forget
 * them; and the attempt log, one row per attempt with the request headers sent (the body is the
 * event's payload, stored once), the response status, the first 4 KiB of the response body, the
 * duration and the error.
 */
export class WebhookWorkbench1763769600026 implements MigrationInterface {
  name = 'WebhookWorkbench1763769600026';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumns('webhook_endpoints', [
      new TableColumn({ name: 'simulated_failures', type: 'integer', default: 0 }),
      new TableColumn({
        name: 'simulated_failure_mode',
        type: 'varchar',
        length: '20',
        isNullable: true,
      }),
    ]);
    await q.createTable(
      new Table({
        name: 'webhook_attempts',
        columns: [
          { name: 'id', type: 'integer', isPrimary: true, isGenerated: true },
          { name: 'delivery_id', type: 'varchar', length: '40' },
          { name: 'number', type: 'integer' },
          { name: 'started_at', type: 'varchar', length: '30' },
          { name: 'duration_ms', type: 'integer' },
          { name: 'outcome', type: 'varchar', length: '20' },
          { name: 'simulated', type: 'boolean', default: false },
          { name: 'url', type: 'varchar', length: '2048' },
          { name: 'request_headers', type: 'text' },
          { name: 'response_status', type: 'integer', isNullable: true },
          { name: 'response_body', type: 'text', isNullable: true },
          { name: 'response_body_truncated', type: 'boolean', default: false },
          { name: 'error', type: 'varchar', length: '500', isNullable: true },
        ],
      }),
    );
    await q.createIndex(
      'webhook_attempts',
      new TableIndex({ name: 'idx_wha_delivery', columnNames: ['delivery_id', 'id'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('webhook_attempts');
    await q.dropColumn('webhook_endpoints', 'simulated_failure_mode');
    await q.dropColumn('webhook_endpoints', 'simulated_failures');
  }
}
