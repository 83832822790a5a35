import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { freeGeneratedUsername } from '../../modules/users/username.js';

/**
 * Platform database: public profiles. Every account gets a generated username here (those of an
 * existing database) and at sign-up afterwards, from the one generator (`user_` and 8 random hex
 * digits, nothing taken from the email); usernames are lower-case by their pattern, so the
 * plain unique index makes them unique ignoring case. Profiles are PUBLIC unless their owner
 * makes them PRIVATE. Schema API and portable SQL only, so it runs on PostgreSQL too.
 */
export class UserProfiles1763769600014 implements MigrationInterface {
  name = 'UserProfiles1763769600014';

  async up(q: QueryRunner): Promise<void> {
    await q.addColumns('users', [
      new TableColumn({ name: 'username', type: 'varchar', length: '30', isNullable: true }),
      new TableColumn({ name: 'display_name', type: 'varchar', length: '200', isNullable: true }),
      new TableColumn({ name: 'bio', type: 'text', isNullable: true }),
      new TableColumn({ name: 'avatar_url', type: 'varchar', length: '500', isNullable: true }),
      new TableColumn({
        name: 'profile_visibility',
        type: 'varchar',
        length: '10',
        default: "'PUBLIC'",
      }),
    ]);
    const users = (await q.query('SELECT id FROM users ORDER BY id')) as { id: string }[];
    const taken = new Set<string>();
    for (const u of users) {
      const name = await freeGeneratedUsername((n) => taken.has(n));
      taken.add(name);
      await q.manager
        .createQueryBuilder()
        .update('users')
        .set({ username: name })
        .where('id = :id', { id: u.id })
        .execute();
    }
    await q.createIndex(
      'users',
      new TableIndex({ name: 'idx_users_username', columnNames: ['username'], isUnique: true }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex('users', 'idx_users_username');
    for (const c of ['profile_visibility', 'avatar_url', 'bio', 'display_name', 'username']) {
      await q.dropColumn('users', c);
    }
  }
}
