import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Statement } from 'better-sqlite3';
import { Subject } from 'rxjs';
import type { DataSource } from 'typeorm';
import { Clock } from '../../common/clock/clock.js';
import type { Environment } from '../../common/environment.js';
import { IdGenerator } from '../../common/ids/id-generator.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import { connectionOf, PLATFORM_DB } from '../../database/databases.js';

interface Row {
  id: string;
  type: string;
  title: string;
  body: string;
  data: string;
  created_at: string;
  read_at: string | null;
}

/** A notification to write: to whom, in which world, what it says. */
export interface NewNotification {
  userId: string;
  environment: Environment;
  /** UPPER_SNAKE: COMMENT_REPLY, MARKET_RESOLVED, ... */
  type: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
}

/** A notification just written, for the realtime channel of its owner in its world. */
export interface CreatedNotification {
  userId: string;
  environment: Environment;
  notification: NotificationView;
}

export interface NotificationView {
  id: string;
  type: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
  created_at: string;
  read_at: string | null;
}

/** In-app notifications, newest first, keyset on id (stable while new ones arrive). */
@Injectable()
export class NotificationsService {
  private readonly page: Statement;
  private readonly pageUnread: Statement;
  private readonly markRead: Statement;
  private readonly one: Statement;
  private readonly insert: Statement;
  /** Every notification written through notify(), once it is stored. */
  readonly created = new Subject<CreatedNotification>();

  constructor(
    @InjectDataSource(PLATFORM_DB) ds: DataSource,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {
    const db = connectionOf(ds);
    this.insert = db.prepare(
      `INSERT INTO notifications (id, user_id, environment, type, title, body, data, created_at, read_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
    );
    this.page = db.prepare(
      `SELECT * FROM notifications WHERE user_id = ? AND id < ? ORDER BY id DESC LIMIT ?`,
    );
    this.pageUnread = db.prepare(
      `SELECT * FROM notifications WHERE user_id = ? AND id < ? AND read_at IS NULL ORDER BY id DESC LIMIT ?`,
    );
    this.markRead = db.prepare(
      `UPDATE notifications SET read_at = ? WHERE id = ? AND user_id = ? AND read_at IS NULL`,
    );
    this.one = db.prepare(`SELECT * FROM notifications WHERE id = ? AND user_id = ?`);
  }

  /** Stores a notification for its owner in its world, then announces it (realtime). */
  notify(n: NewNotification): NotificationView {
    const row: Row = {
      id: this.ids.next('ntf'),
      type: n.type,
      title: n.title,
      body: n.body,
      data: JSON.stringify(n.data),
      created_at: this.clock.nowDate().toISOString(),
      read_at: null,
    };
    this.insert.run(
      row.id,
      n.userId,
      n.environment,
      row.type,
      row.title,
      row.body,
      row.data,
      row.created_at,
    );
    const notification = view(row);
    this.created.next({ userId: n.userId, environment: n.environment, notification });
    return notification;
  }

  list(
    userId: string,
    q: { limit?: number; cursor?: string; unread?: boolean },
  ): Page<NotificationView> {
    return paginate({
      list: 'notifications',
      keys: ['id'],
      query: q,
      fetch: (after, take) =>
        (q.unread === true ? this.pageUnread : this.page).all(
          userId,
          after?.[0] ?? '\uffff',
          take,
        ) as Row[],
      keyOf: (r) => [r.id],
      map: view,
    });
  }

  read(userId: string, id: string): NotificationView {
    this.markRead.run(this.clock.nowDate().toISOString(), id, userId);
    const row = this.one.get(id, userId) as Row | undefined;
    if (row === undefined)
      throw new DomainError('NOT_FOUND', `No notification ${id}`, { notification_id: id });
    return view(row);
  }
}

function view(r: Row): NotificationView {
  return {
    id: r.id,
    type: r.type,
    title: r.title,
    body: r.body,
    data: JSON.parse(r.data) as Record<string, unknown>,
    created_at: r.created_at,
    read_at: r.read_at,
  };
}
