import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per environment): which Idempotency-Keys have had an effect on the engine.
 * Written in the same transaction as the effect, so after a crash that came between the engine's
 * commit and the stored answer (platform database), a retry with the same key is known to have
 * been applied and is not run a second time.
 */
export class IdempotencyEffects1763769600007 implements MigrationInterface {
  name = 'IdempotencyEffects1763769600007';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'idempotency_effects',
        columns: [
          { name: 'owner_id', type: 'varchar', length: '60', isPrimary: true },
          { name: 'idem_key', type: 'varchar', length: '255', isPrimary: true },
          { name: 'order_ids', type: 'text' },
          { name: 'reference_ids', type: 'text' },
          { name: 'created_at', type: 'varchar', length: '30' },
        ],
      }),
    );
    await q.createIndex(
      'idempotency_effects',
      new TableIndex({ name: 'idx_idem_effects_created', columnNames: ['created_at'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('idempotency_effects');
  }
}
