import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per environment): the webhook spool. The webhook events of a committed
 * engine batch are written here in the batch's own transaction, then moved to the platform
 * database's outbox; rows left behind by a crash between the two writes are moved at the next
 * boot, so an acknowledged order never loses its webhook events.
 */
export class WebhookSpool1763769600006 implements MigrationInterface {
  name = 'WebhookSpool1763769600006';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'webhook_spool',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'payload', type: 'text' },
          { name: 'created_at', type: 'varchar', length: '30' },
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('webhook_spool');
  }
}
