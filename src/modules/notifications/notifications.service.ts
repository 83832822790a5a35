import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Subject } from 'rxjs';
import { Clock } from '../../common/clock/clock.js';
import { environmentOf, type Environment, type WorldName } from '../../common/environment.js';
import { IdGenerator } from '../../common/ids/id-generator.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import { instant, LAST_INSTANT } from '../../common/validation/instant.js';
import { PaperWorldRecords } from '../worlds/paper-world-records.service.js';
import { NotificationsRepository, type NotificationRow } from './notifications.repository.js';

/** A notification to write: to whom, in which world, what it says. */
export interface NewNotification {
  userId: string;
  /**
   * The world it belongs to: `live`, `test` or an ephemeral world's id (stored as such, read
   * only from that world, deleted with it; answered as the world's environment).
   */
  environment: WorldName;
  /** UPPER_SNAKE: COMMENT_REPLY, MARKET_RESOLVED, ... */
  type: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
}

/** A notification just written, for the realtime channel of its owner in its world. */
export interface CreatedNotification {
  userId: string;
  environment: WorldName;
  notification: NotificationView;
}

export interface NotificationView {
  id: string;
  type: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
  /** The environment of the world it belongs to (and is only ever read from): `test` in any paper world. */
  environment: Environment;
  created_at: string;
  read_at: string | null;
}

/**
 * In-app notifications, each in one world (`live`, `test` or an ephemeral world): listed newest first (keyset on id,
 * stable while new ones arrive), read one by one or all at once, counted, and announced on
 * {@link created} (the realtime channel `notifications`) once stored. Every notification is
 * written here: {@link notify} on its own, or {@link store} inside a caller's transaction on the
 * platform database followed by {@link announce} after the commit.
 */
@Injectable()
export class NotificationsService implements OnModuleInit {
  /** Every notification written, once it is stored (and committed). */
  readonly created = new Subject<CreatedNotification>();

  constructor(
    private readonly repo: NotificationsRepository,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly paperRecords: PaperWorldRecords,
  ) {}

  onModuleInit(): void {
    // A sandbox reset clears the paper notifications; the live ones are never touched.
    this.paperRecords.register('notifications', (userId, world) =>
      this.repo.deleteAll(userId, world),
    );
    // An ephemeral world's notifications are rows of the platform database keyed by its id.
    this.paperRecords.registerWorld('notifications', (world) => this.repo.deleteOfWorld(world));
  }

  /** Stores a notification for its owner in its world, then announces it (realtime). */
  notify(n: NewNotification): NotificationView {
    const created = this.store(n);
    this.announce(created);
    return created.notification;
  }

  /** Stores several in one transaction (all or none), then announces them. */
  notifyAll(list: readonly NewNotification[]): NotificationView[] {
    const created = this.repo.transaction(() => list.map((n) => this.store(n)));
    this.announce(...created);
    return created.map((c) => c.notification);
  }

  /**
   * Writes a notification without announcing it: for a caller that writes it inside its own
   * transaction on the platform database (the statement runs on that connection, so it commits
   * or rolls back with the rest). The caller passes the result to {@link announce} after the
   * commit, so no client hears of a notification that was rolled back.
   */
  store(n: NewNotification): CreatedNotification {
    const row: NotificationRow = {
      id: this.ids.next('ntf'),
      user_id: n.userId,
      environment: n.environment,
      type: n.type,
      title: n.title,
      body: n.body,
      data: JSON.stringify(n.data),
      created_at: this.clock.nowDate().toISOString(),
      read_at: null,
    };
    this.repo.insert(row);
    return { userId: n.userId, environment: n.environment, notification: view(row) };
  }

  /**
   * Announces stored (and committed) notifications on {@link created}. Listeners run
   * synchronously and must catch their own errors: RxJS would rethrow one asynchronously.
   */
  announce(...created: CreatedNotification[]): void {
    for (const c of created) this.created.next(c);
  }

  list(
    userId: string,
    world: WorldName,
    q: { limit?: number; cursor?: string; unread?: boolean },
  ): Page<NotificationView> {
    return paginate({
      // The cursor names its world: one issued in the other world is refused, not read here.
      list: `notifications:${world}`,
      // Before worlds, the list was `notifications` and only live notifications existed: such a
      // cursor is a position in the live list (and the query is by user and world anyway).
      legacyLists: world === 'live' ? ['notifications'] : [],
      keys: ['id'],
      query: q,
      fetch: (before, take) =>
        this.repo.page(userId, world, before?.[0] ?? '\uffff', take, q.unread === true),
      keyOf: (row) => [row.id],
      map: view,
    });
  }

  /** Marks one read (once: a second call keeps the first read_at); another world's id is 404. */
  read(userId: string, world: WorldName, id: string): NotificationView {
    const row = this.repo.markRead(userId, world, id, this.clock.nowDate().toISOString());
    if (row === undefined)
      throw new DomainError('NOT_FOUND', `No notification ${id}`, { notification_id: id });
    return view(row);
  }

  /**
   * Marks the unread notifications of the world created at or before `before` (inclusive; an ISO
   * 8601 instant, sub-millisecond digits rounded up as the time filters do) read, or all of them
   * without it. Idempotent: a second call marks 0.
   */
  readAll(userId: string, world: WorldName, before: string | undefined): { marked: number } {
    const upTo = instant(before, 'before') ?? LAST_INSTANT;
    return {
      marked: this.repo.markReadUpTo(userId, world, upTo, this.clock.nowDate().toISOString()),
    };
  }

  unreadCount(userId: string, world: WorldName): { unread: number } {
    return { unread: this.repo.unread(userId, world) };
  }
}

function view(r: NotificationRow): NotificationView {
  return {
    id: r.id,
    type: r.type,
    title: r.title,
    body: r.body,
    data: JSON.parse(r.data) as Record<string, unknown>,
    environment: environmentOf(r.environment),
    created_at: r.created_at,
    read_at: r.read_at,
  };
}
