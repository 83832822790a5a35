import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Platform database: at most one PENDING tier request per API key (a partial unique index, which
 * SQLite and PostgreSQL both support), so two requests racing each other cannot both wait for
 * review. Keys that already hold several keep their newest; the older ones are DENIED by no one
 * (decided_by stays null), decided when the next request came in.
 */
export class TierRequestPending1763769600009 implements MigrationInterface {
  name = 'TierRequestPending1763769600009';

  async up(q: QueryRunner): Promise<void> {
    // Portable SQL (no placeholders): the older request is decided when the next one came in.
    // Two statements, so the subquery reads the same PENDING rows whichever order the rows are
    // visited in (SQLite sees a statement's own earlier changes, PostgreSQL does not).
    const newer = `FROM tier_requests newer
         WHERE newer.key_id = tier_requests.key_id AND newer.status = 'PENDING'
           AND (newer.created_at > tier_requests.created_at
             OR (newer.created_at = tier_requests.created_at AND newer.id > tier_requests.id))`;
    await q.query(
      `UPDATE tier_requests SET decided_at = (SELECT MIN(newer.created_at) ${newer})
       WHERE status = 'PENDING' AND EXISTS (SELECT 1 ${newer})`,
    );
    await q.query(
      `UPDATE tier_requests SET status = 'DENIED'
       WHERE status = 'PENDING' AND decided_at IS NOT NULL`,
    );
    await q.createIndex(
      'tier_requests',
      new TableIndex({
        name: 'uq_tier_requests_pending_key',
        columnNames: ['key_id'],
        isUnique: true,
        where: "status = 'PENDING'",
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex('tier_requests', 'uq_tier_requests_pending_key');
  }
}
