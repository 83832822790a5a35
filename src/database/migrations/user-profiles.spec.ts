import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { UserEntity } from '../../modules/users/entities/user.entity.js';
import { USERNAME_PATTERN } from '../../modules/users/username.js';
import {
  isUniqueViolation,
  PLATFORM_ENTITIES,
  PLATFORM_MIGRATIONS,
  sqliteOptions,
} from '../databases.js';
import { NotificationWorlds1763769600015 } from './1763769600015-notification-worlds.js';
import { UserProfiles1763769600014 } from './1763769600014-user-profiles.js';

describe('migration: user profiles on a database of the previous version', () => {
  const dirs: string[] = [];
  const sources: DataSource[] = [];
  afterEach(async () => {
    for (const ds of sources.splice(0)) if (ds.isInitialized) await ds.destroy();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  const open = async (dir: string, upTo: 'before' | 'all'): Promise<DataSource> => {
    const later: (typeof PLATFORM_MIGRATIONS)[number][] = [
      UserProfiles1763769600014,
      NotificationWorlds1763769600015,
    ];
    const migrations = PLATFORM_MIGRATIONS.filter((m) => upTo === 'all' || !later.includes(m));
    const ds = new DataSource(sqliteOptions('platform', dir, PLATFORM_ENTITIES, migrations));
    sources.push(ds);
    await ds.initialize();
    return ds;
  };

  it('gives every existing account a distinct valid username and a PUBLIC, empty profile', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-mig-'));
    dirs.push(dir);
    const before = await open(dir, 'before');
    const columns = (await before.query(`PRAGMA table_info('users')`)) as { name: string }[];
    expect(columns.map((c) => c.name)).not.toContain('username');
    const emails = [
      'Same.Name@one.test',
      'same_name@two.test',
      'same-name@three.test',
      'ab@short.test',
      '☃☃☃@unicode.test',
      `${'long'.repeat(20)}@long.test`,
    ];
    for (const [i, email] of emails.entries()) {
      await before.query(
        `INSERT INTO users (id, email, password_hash, email_verified, roles, rfq_responder_approved, created_at)
         VALUES (?, ?, 'x', 1, '', 0, '2026-01-01T00:00:00.000Z')`,
        [`usr_${i}`, email.toLowerCase()],
      );
    }
    await before.destroy();

    const after = await open(dir, 'all');
    const users = await after.getRepository(UserEntity).find({ order: { id: 'ASC' } });
    expect(users.map((u) => u.id)).toEqual(emails.map((_e, i) => `usr_${i}`));
    const names = users.map((u) => u.username);
    for (const name of names) expect(name).toMatch(USERNAME_PATTERN);
    expect(new Set(names).size).toBe(names.length);
    // Neutral names: nothing of the email, which a public profile never shows.
    for (const name of names) {
      expect(name).toMatch(/^user_[0-9a-f]{8}$/);
      expect(name).not.toMatch(/same|name|long|short|unicode/);
    }
    for (const u of users) {
      expect([u.displayName, u.bio, u.avatarUrl, u.profileVisibility]).toEqual([
        null,
        null,
        null,
        'PUBLIC',
      ]);
    }
    // The unique index holds from now on.
    let refused: unknown = null;
    try {
      await after.query('UPDATE users SET username = ? WHERE id = ?', [names[0], 'usr_1']);
    } catch (err) {
      refused = err;
    }
    expect(isUniqueViolation(refused)).toBe(true);
  });
});
