import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Platform database: accounts. Written with TypeORM's schema API so it ports to PostgreSQL. */
export class PlatformInit1763769600000 implements MigrationInterface {
  name = 'PlatformInit1763769600000';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      new Table({
        name: 'users',
        columns: [
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'email', type: 'varchar', length: '320', isUnique: true },
          { name: 'password_hash', type: 'varchar', length: '300' },
          { name: 'email_verified', type: 'boolean', default: false },
          { name: 'roles', type: 'varchar', length: '200', default: "''" },
          { name: 'rfq_responder_approved', type: 'boolean', default: false },
          { name: 'created_at', type: 'varchar', length: '30' },
        ],
      }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('users');
  }
}
