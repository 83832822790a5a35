import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Engine database (one per world): historical data export jobs. A world's jobs live beside the
 * rows they export, so a paper export reads and is cleared with the paper file only. `last_rowid`
 * is the snapshot bound fixed at creation (the table's largest rowid then): the job exports the
 * rows that existed when it was asked for, so a re-run after a crash writes the same rows and
 * `counted_rows` (what creation counted, and charged to the row quota) stays true. Schema API only.
 */
export class DataExports1763769600023 implements MigrationInterface {
  name = 'DataExports1763769600023';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'data_exports',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'user_id', type: 'varchar', length: '40' },
          { name: 'dataset', type: 'varchar', length: '20' },
          { name: 'format', type: 'varchar', length: '8' },
          { name: 'start', type: 'varchar', length: '30' },
          { name: 'end', type: 'varchar', length: '30' },
          { name: 'market_ids', type: 'text', isNullable: true },
          { name: 'status', type: 'varchar', length: '10' },
          { name: 'last_rowid', type: 'bigint' },
          { name: 'counted_rows', type: 'bigint' },
          { name: 'record_count', type: 'bigint', isNullable: true },
          { name: 'size_bytes', type: 'bigint', isNullable: true },
          { name: 'sha256', type: 'varchar', length: '64', isNullable: true },
          { name: 'error', type: 'varchar', length: '300', isNullable: true },
          { name: 'created_at', type: 'varchar', length: '30' },
          { name: 'ready_at', type: 'varchar', length: '30', isNullable: true },
          { name: 'expires_at', type: 'varchar', length: '30', isNullable: true },
        ],
      }),
    );
    // A user's exports in id (creation) order: the keyset of GET /data/exports and the 10 kept.
    await q.createIndex(
      'data_exports',
      new TableIndex({ name: 'idx_data_exports_user_id', columnNames: ['user_id', 'id'] }),
    );
    // The runner's queue and the expiry sweep.
    await q.createIndex(
      'data_exports',
      new TableIndex({ name: 'idx_data_exports_status', columnNames: ['status', 'id'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('data_exports');
  }
}
