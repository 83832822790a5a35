import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { ENGINE_ENTITIES, ENGINE_MIGRATIONS, sqliteOptions } from '../databases.js';
import { Comments1763769600016 } from './1763769600016-comments.js';

describe('migration: comments and markets.resolved_at', () => {
  const dirs: string[] = [];
  const sources: DataSource[] = [];
  afterEach(async () => {
    for (const ds of sources.splice(0)) if (ds.isInitialized) await ds.destroy();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  const open = async (dir: string, upTo: 'before' | 'all'): Promise<DataSource> => {
    const migrations = ENGINE_MIGRATIONS.filter(
      (m) => upTo === 'all' || m !== Comments1763769600016,
    );
    const ds = new DataSource(sqliteOptions('paper', dir, ENGINE_ENTITIES, migrations));
    sources.push(ds);
    await ds.initialize();
    return ds;
  };

  it('takes the last update of a market resolved before it as its resolution time, none for others', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-mig-'));
    dirs.push(dir);
    const before = await open(dir, 'before');
    const insert = `INSERT INTO markets (id, slug, title, description, category, status, outcome,
      close_time, reference_price, last_price, volume, created_at, updated_at)
      VALUES (?, ?, 'A market', '', 'SPORTS', ?, ?, '2026-12-01T00:00:00.000Z', 50, NULL, 0,
      '2026-01-01T00:00:00.000Z', ?)`;
    await before.query(insert, ['mkt_a', 'a', 'RESOLVED', 'YES', '2026-03-04T05:06:07.000Z']);
    await before.query(insert, ['mkt_b', 'b', 'OPEN', null, '2026-03-05T00:00:00.000Z']);
    await before.destroy();

    const after = await open(dir, 'all');
    const rows = (await after.query('SELECT id, resolved_at FROM markets ORDER BY id')) as {
      id: string;
      resolved_at: string | null;
    }[];
    expect(rows).toEqual([
      { id: 'mkt_a', resolved_at: '2026-03-04T05:06:07.000Z' },
      { id: 'mkt_b', resolved_at: null },
    ]);
    const tables = (await after.query(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'comment%' ORDER BY name`,
    )) as { name: string }[];
    expect(tables.map((t) => t.name)).toEqual(['comment_reports', 'comments']);
  });
});
