import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import {
  isUniqueViolation,
  PLATFORM_ENTITIES,
  PLATFORM_MIGRATIONS,
  sqliteOptions,
} from '../databases.js';
import { TierRequestPending1763769600009 } from './1763769600009-tier-request-pending.js';

describe('migration: one pending tier request per key', () => {
  const dirs: string[] = [];
  const sources: DataSource[] = [];
  afterEach(async () => {
    for (const ds of sources.splice(0)) if (ds.isInitialized) await ds.destroy();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  const open = async (dir: string, upTo: 'before' | 'all'): Promise<DataSource> => {
    const migrations = PLATFORM_MIGRATIONS.filter(
      (m) => upTo === 'all' || m !== TierRequestPending1763769600009,
    );
    const ds = new DataSource(sqliteOptions('platform', dir, PLATFORM_ENTITIES, migrations));
    sources.push(ds);
    await ds.initialize();
    return ds;
  };

  const row = (id: string, keyId: string, status: string, createdAt: string): unknown[] => [
    id,
    keyId,
    'usr_1',
    'PRO',
    '',
    status,
    createdAt,
  ];

  it('keeps each key newest pending request, denies the older ones, then refuses a second', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-mig-'));
    dirs.push(dir);
    const before = await open(dir, 'before');
    // Rows of keys and users that do not exist: only the tier_requests table is under test.
    await before.query('PRAGMA foreign_keys = OFF');
    const insert = `INSERT INTO tier_requests (id, key_id, user_id, tier, reason, status, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)`;
    for (const r of [
      // Ids out of time order: each is decided when the next one by time came in.
      row('tier_a1', 'key_a', 'PENDING', '2026-01-02T00:00:00.000Z'),
      row('tier_a2', 'key_a', 'PENDING', '2026-01-01T00:00:00.000Z'),
      row('tier_a3', 'key_a', 'PENDING', '2026-01-03T00:00:00.000Z'),
      row('tier_a0', 'key_a', 'APPROVED', '2025-12-01T00:00:00.000Z'),
      row('tier_b1', 'key_b', 'PENDING', '2026-01-01T00:00:00.000Z'),
    ]) {
      await before.query(insert, r);
    }
    await before.destroy();

    const after = await open(dir, 'all');
    const rows = await after.query<{ id: string; status: string; decided_at: string | null }[]>(
      'SELECT id, status, decided_at FROM tier_requests ORDER BY id',
    );
    expect(rows).toEqual([
      { id: 'tier_a0', status: 'APPROVED', decided_at: null },
      { id: 'tier_a1', status: 'DENIED', decided_at: '2026-01-03T00:00:00.000Z' },
      { id: 'tier_a2', status: 'DENIED', decided_at: '2026-01-02T00:00:00.000Z' },
      { id: 'tier_a3', status: 'PENDING', decided_at: null },
      { id: 'tier_b1', status: 'PENDING', decided_at: null },
    ]);
    // A second PENDING request for a key is refused by the index; other statuses are not.
    await after.query('PRAGMA foreign_keys = OFF');
    let refused: unknown = null;
    try {
      await after.query(insert, row('tier_a4', 'key_a', 'PENDING', '2026-01-04T00:00:00.000Z'));
    } catch (err) {
      refused = err;
    }
    expect(isUniqueViolation(refused)).toBe(true);
    await after.query(insert, row('tier_a5', 'key_a', 'DENIED', '2026-01-05T00:00:00.000Z'));
    await after.query(insert, row('tier_c1', 'key_c', 'PENDING', '2026-01-05T00:00:00.000Z'));
  });
});
