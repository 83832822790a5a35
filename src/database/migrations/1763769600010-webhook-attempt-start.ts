import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Platform database: when the attempt in flight of a delivery began (null when none is). An
 * attempt a crash or a shutdown cuts short leaves it set, so the next attempt counts it: the
 * receiver may have got that POST, and `attempts` must say so.
 */
export class WebhookAttemptStart1763769600010 implements MigrationInterface {
  name = 'WebhookAttemptStart1763769600010';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumn(
      'webhook_deliveries',
      new TableColumn({
        name: 'attempt_started_at',
        type: 'varchar',
        length: '30',
        isNullable: true,
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('webhook_deliveries', 'attempt_started_at');
  }
}
