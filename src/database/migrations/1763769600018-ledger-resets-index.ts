import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per environment): an index of the ledger's RESET rows by time, so the
 * leaderboard finds the accounts reset since a period's baseline with one indexed query.
 * Partial (`type = 'RESET'`): it holds one row per reset account, and trades and deposits, the
 * ledger's hot inserts, do not write to it. Schema API only; partial indexes exist on
 * PostgreSQL too.
 */
export class LedgerResetsIndex1763769600018 implements MigrationInterface {
  name = 'LedgerResetsIndex1763769600018';

  async up(q: QueryRunner): Promise<void> {
    await q.createIndex(
      'ledger',
      new TableIndex({
        name: 'idx_ledger_resets',
        columnNames: ['created_at', 'user_id'],
        where: "type = 'RESET'",
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex('ledger', 'idx_ledger_resets');
  }
}
