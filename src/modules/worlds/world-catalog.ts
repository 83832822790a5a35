import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { SqlConnection, SqlStatement } from '../../common/sql/sql-connection.js';
import type { DataSource } from 'typeorm';
import type { WorldId } from '../../common/environment.js';
import { connectionOf, PLATFORM_DB } from '../../database/databases.js';

export type WorldStatus = 'CREATING' | 'READY' | 'DELETING';

/** A row of the `worlds` registry (platform database). */
export interface WorldRow {
  id: WorldId;
  user_id: string;
  name: string | null;
  seed: number;
  starting_balance_cents: number;
  status: WorldStatus;
  key_id: string | null;
  clock_offset_ms: number;
  expires_at: string;
  created_at: string;
}

/**
 * The world registry's statements, synchronous (better-sqlite3 on the platform connection): the
 * engine registry reads a world's seed and clock while loading it on a request's path, and a
 * create counts and inserts in one transaction under the user's row lock (insertWithinCap).
 */
@Injectable()
export class WorldCatalog {
  private readonly s: Record<string, SqlStatement>;
  private readonly db: SqlConnection;

  constructor(@InjectDataSource(PLATFORM_DB) platform: DataSource) {
    const db = connectionOf(platform);
    this.db = db;
    this.s = {
      lockUser: db.prepare('UPDATE users SET created_at = created_at WHERE id = ?'),
      insert: db.prepare(
        `INSERT INTO worlds (id, user_id, name, seed, starting_balance_cents, status, key_id, clock_offset_ms, expires_at, created_at)
         VALUES (@id, @user_id, @name, @seed, @starting_balance_cents, @status, @key_id, @clock_offset_ms, @expires_at, @created_at)`,
      ),
      one: db.prepare('SELECT * FROM worlds WHERE id = ?'),
      ofUser: db.prepare('SELECT * FROM worlds WHERE user_id = ? AND id = ?'),
      page: db.prepare(
        `SELECT * FROM worlds WHERE user_id = ? AND id > ? AND status <> 'DELETING' ORDER BY id LIMIT ?`,
      ),
      live: db.prepare(
        `SELECT COUNT(*) AS n FROM worlds WHERE user_id = ? AND status <> 'DELETING'`,
      ),
      status: db.prepare('UPDATE worlds SET status = ?, key_id = COALESCE(?, key_id) WHERE id = ?'),
      markDeleting: db.prepare(
        `UPDATE worlds SET status = 'DELETING' WHERE id = ? AND status <> 'DELETING'`,
      ),
      remove: db.prepare('DELETE FROM worlds WHERE id = ?'),
      offset: db.prepare('UPDATE worlds SET clock_offset_ms = ? WHERE id = ?'),
      expired: db.prepare(
        `SELECT id FROM worlds WHERE status = 'READY' AND expires_at <= ? ORDER BY expires_at LIMIT 100`,
      ),
      unfinished: db.prepare(`SELECT * FROM worlds WHERE status <> 'READY'`),
      ready: db.prepare(`SELECT id FROM worlds WHERE status = 'READY'`),
    };
  }

  /**
   * Inserts `row` unless its user has `max` live worlds already; then returns how many. Counted
   * and inserted in one transaction that first locks the user's row, so parallel creates on every
   * instance sharing the database take turns (SQLite: the IMMEDIATE transaction's write lock).
   */
  insertWithinCap(row: WorldRow, max: number): number | null {
    return this.db
      .transaction(() => {
        this.s.lockUser.run(row.user_id);
        const live = this.liveCount(row.user_id);
        if (live >= max) return live;
        this.s.insert.run(row);
        return null;
      })
      .immediate();
  }

  one(id: string): WorldRow | undefined {
    return this.s.one.get(id) as WorldRow | undefined;
  }

  ofUser(userId: string, id: string): WorldRow | undefined {
    return this.s.ofUser.get(userId, id) as WorldRow | undefined;
  }

  page(userId: string, after: string, take: number): WorldRow[] {
    return this.s.page.all(userId, after, take) as WorldRow[];
  }

  /** Worlds of the user that count against the cap: every one not being deleted. */
  liveCount(userId: string): number {
    return (this.s.live.get(userId) as { n: number }).n;
  }

  setStatus(id: string, status: WorldStatus, keyId: string | null = null): void {
    this.s.status.run(status, keyId, id);
  }

  /** True for the one caller that moved the world to DELETING (a second delete does nothing). */
  markDeleting(id: string): boolean {
    return this.s.markDeleting.run(id).changes > 0;
  }

  remove(id: string): void {
    this.s.remove.run(id);
  }

  saveOffset(id: string, offsetMs: number): void {
    this.s.offset.run(offsetMs, id);
  }

  expired(nowIso: string): WorldId[] {
    return (this.s.expired.all(nowIso) as { id: WorldId }[]).map((r) => r.id);
  }

  /** Rows a crash left CREATING or DELETING. */
  unfinished(): WorldRow[] {
    return this.s.unfinished.all() as WorldRow[];
  }

  readyIds(): Set<string> {
    return new Set((this.s.ready.all() as { id: string }[]).map((r) => r.id));
  }
}
