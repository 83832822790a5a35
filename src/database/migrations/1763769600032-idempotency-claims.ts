import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Platform database: who holds an Idempotency-Key's RUNNING record. `claim_id` is the one request
 * that claimed it (only that request stores its answer or releases the key, never a later claim
 * of the same key); `claimed_by` is the instance it runs on, so an instance settles only the
 * claims of instances that are gone (see IdempotencyService), not those of its peers still
 * running them. Both null on records from before.
 */
export class IdempotencyClaims1763769600032 implements MigrationInterface {
  name = 'IdempotencyClaims1763769600032';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumns('idempotency_records', [
      new TableColumn({ name: 'claim_id', type: 'varchar', length: '40', isNullable: true }),
      new TableColumn({ name: 'claimed_by', type: 'varchar', length: '40', isNullable: true }),
    ]);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('idempotency_records', 'claimed_by');
    await q.dropColumn('idempotency_records', 'claim_id');
  }
}
