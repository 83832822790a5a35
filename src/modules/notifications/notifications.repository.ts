import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { SqlConnection, SqlStatement } from '../../common/sql/sql-connection.js';
import type { DataSource } from 'typeorm';
import type { WorldId, WorldName } from '../../common/environment.js';
import { connectionOf, PLATFORM_DB } from '../../database/databases.js';

/** A stored notification (the platform database's `notifications` table). */
export interface NotificationRow {
  id: string;
  user_id: string;
  /** The world: `live`, `test` (the paper world) or an ephemeral world's id. */
  environment: WorldName;
  type: string;
  title: string;
  body: string;
  /** JSON text. */
  data: string;
  created_at: string;
  read_at: string | null;
}

/**
 * The notifications table, on the platform database's connection. Every read and update names
 * the user and the world: a notification is never seen, read or counted from the other world.
 * The statements run on the one platform connection, so a call made inside a transaction open on
 * it (better-sqlite3's or TypeORM's) is part of that transaction.
 */
@Injectable()
export class NotificationsRepository {
  private readonly insertRow: SqlStatement;
  private readonly pageAll: SqlStatement;
  private readonly pageUnread: SqlStatement;
  private readonly markOne: SqlStatement;
  private readonly one: SqlStatement;
  private readonly markUpTo: SqlStatement;
  private readonly countUnread: SqlStatement;
  private readonly deleteWorld: SqlStatement;
  private readonly deleteEphemeral: SqlStatement;
  private readonly db: SqlConnection;

  constructor(@InjectDataSource(PLATFORM_DB) ds: DataSource) {
    const db = connectionOf(ds);
    this.db = db;
    this.insertRow = db.prepare(
      `INSERT INTO notifications (id, user_id, environment, type, title, body, data, created_at, read_at)
       VALUES (@id, @user_id, @environment, @type, @title, @body, @data, @created_at, @read_at)`,
    );
    // Both pages and the count use the index (user_id, environment, id).
    this.pageAll = db.prepare(
      `SELECT * FROM notifications WHERE user_id = ? AND environment = ? AND id < ?
       ORDER BY id DESC LIMIT ?`,
    );
    this.pageUnread = db.prepare(
      `SELECT * FROM notifications WHERE user_id = ? AND environment = ? AND id < ?
       AND read_at IS NULL ORDER BY id DESC LIMIT ?`,
    );
    this.markOne = db.prepare(
      `UPDATE notifications SET read_at = ?
       WHERE id = ? AND user_id = ? AND environment = ? AND read_at IS NULL`,
    );
    this.one = db.prepare(
      `SELECT * FROM notifications WHERE id = ? AND user_id = ? AND environment = ?`,
    );
    // Times are ISO 8601 UTC text with milliseconds, which sorts as time does.
    this.markUpTo = db.prepare(
      `UPDATE notifications SET read_at = ?
       WHERE user_id = ? AND environment = ? AND read_at IS NULL AND created_at <= ?`,
    );
    this.countUnread = db.prepare(
      `SELECT COUNT(*) AS n FROM notifications
       WHERE user_id = ? AND environment = ? AND read_at IS NULL`,
    );
    this.deleteWorld = db.prepare(
      `DELETE FROM notifications WHERE user_id = ? AND environment = ?`,
    );
    this.deleteEphemeral = db.prepare(`DELETE FROM notifications WHERE environment = ?`);
  }

  insert(row: NotificationRow): void {
    this.insertRow.run(row);
  }

  /** Newest first, ids below `beforeId`; `limit` rows at most. */
  page(
    userId: string,
    world: WorldName,
    beforeId: string,
    limit: number,
    unreadOnly: boolean,
  ): NotificationRow[] {
    return (unreadOnly ? this.pageUnread : this.pageAll).all(
      userId,
      world,
      beforeId,
      limit,
    ) as NotificationRow[];
  }

  /** Sets read_at if it is not set yet; the row as it is then, or undefined for no such row. */
  markRead(
    userId: string,
    world: WorldName,
    id: string,
    readAt: string,
  ): NotificationRow | undefined {
    this.markOne.run(readAt, id, userId, world);
    return this.one.get(id, userId, world) as NotificationRow | undefined;
  }

  /** Marks the unread ones created at or before `upTo` read; answers how many it marked. */
  markReadUpTo(userId: string, world: WorldName, upTo: string, readAt: string): number {
    return this.markUpTo.run(readAt, userId, world, upTo).changes;
  }

  unread(userId: string, world: WorldName): number {
    return (this.countUnread.get(userId, world) as { n: number }).n;
  }

  /** Deletes the user's notifications of one world; answers how many went. */
  deleteAll(userId: string, world: WorldName): number {
    return this.deleteWorld.run(userId, world).changes;
  }

  /** Deletes every notification of a deleted ephemeral world; answers how many went. */
  deleteOfWorld(world: WorldId): number {
    return this.deleteEphemeral.run(world).changes;
  }

  /** Runs `fn` in one transaction (joining the caller's when one is open: a savepoint). */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
}
