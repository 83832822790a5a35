import { afterEach, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { ENGINE_ENTITIES, ENGINE_MIGRATIONS, sqliteOptions } from '../../database/databases.js';
import { RankRepository } from './rank.repository.js';

const ACCOUNTS = 60;
const SAMPLE = '2026-11-23T00:00:00.000Z';

/**
 * The period baseline on a real engine database (its migrations): accounts reset since the
 * baseline sample count from 0, found with one query for the board, not one per account.
 */
describe('RankRepository.baselineAt', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('leaves out the accounts reset since the sample, in a fixed number of queries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-rank-'));
    dirs.push(dir);
    const ds = new DataSource(sqliteOptions('engine', dir, ENGINE_ENTITIES, ENGINE_MIGRATIONS));
    await ds.initialize();
    await ds.destroy();

    const executed: string[] = [];
    const db = new Database(join(dir, 'engine.sqlite'), {
      verbose: (sql) => executed.push(String(sql)),
    });
    try {
      db.prepare('INSERT INTO rank_samples (time, participants, sampled_at) VALUES (?, ?, ?)').run(
        SAMPLE,
        ACCOUNTS,
        '2026-11-23T00:00:05.000Z',
      );
      const point = db.prepare(
        'INSERT INTO rank_points (account_id, time, rank, participants, realized_pnl_cents) VALUES (?, ?, 1, ?, ?)',
      );
      const ledger = db.prepare(
        'INSERT INTO ledger (id, user_id, type, amount_cents, balance_after_cents, reference_id, created_at) VALUES (?, ?, ?, 0, 0, NULL, ?)',
      );
      const id = (i: number) => `usr_${String(i).padStart(3, '0')}`;
      for (let i = 0; i < ACCOUNTS; i++) {
        point.run(id(i), SAMPLE, ACCOUNTS, i * 10);
        ledger.run(`led_${i}_a`, id(i), 'DEPOSIT', '2026-11-22T10:00:00.000Z');
      }
      // A reset clears the account's ledger and writes one RESET row (as the engine store does).
      const reset = (i: number, at: string) => {
        db.prepare('DELETE FROM ledger WHERE user_id = ?').run(id(i));
        ledger.run(`led_${i}_reset`, id(i), 'RESET', at);
      };
      // Reset after the sample (counts from 0), at its very millisecond (also from 0), and before
      // it (the sample already holds what came after that reset).
      reset(1, '2026-11-23T06:00:00.000Z');
      reset(2, '2026-11-23T00:00:05.000Z');
      reset(3, '2026-11-22T23:00:00.000Z');

      const repo = new RankRepository(db);
      executed.length = 0;
      const baseline = repo.baselineAt(Date.parse('2026-11-23T12:00:00.000Z'));
      expect(baseline).not.toBeNull();
      expect(baseline!.size).toBe(ACCOUNTS - 2);
      expect(baseline!.has(id(1))).toBe(false);
      expect(baseline!.has(id(2))).toBe(false);
      expect(baseline!.get(id(3))).toBe(30);
      expect(baseline!.get(id(59))).toBe(590);
      // The sample, its points, the accounts reset since: however many accounts there are.
      expect(executed.length).toBeLessThanOrEqual(3);
      // The reset look-up is served by the partial index, not a scan of the ledger.
      const plan = db
        .prepare(
          "EXPLAIN QUERY PLAN SELECT DISTINCT user_id FROM ledger WHERE type = 'RESET' AND created_at >= ?",
        )
        .all(SAMPLE) as { detail: string }[];
      expect(plan.map((p) => p.detail).join('\n')).toContain('idx_ledger_resets');
    } finally {
      db.close();
    }
  });
});
