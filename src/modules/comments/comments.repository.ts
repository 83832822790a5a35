import { Injectable } from '@nestjs/common';
import {
  runDeferred,
  type SqlConnection,
  type SqlStatement,
} from '../../common/sql/sql-connection.js';
import type { WorldName } from '../../common/environment.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import type { WorldScoped } from '../worlds/world-scoped.js';

export type CommentStatus = 'VISIBLE' | 'HIDDEN' | 'DELETED';
export type ReportReason = 'SPAM' | 'ABUSE' | 'OFF_TOPIC' | 'OTHER';

/** A stored comment (the migration Comments1763769600016's `comments` row). */
export interface CommentRow {
  id: string;
  market_id: string;
  parent_id: string | null;
  user_id: string;
  body: string | null;
  status: CommentStatus;
  reply_count: number;
  report_count: number;
  created_at: string;
  edited_at: string | null;
}

export interface NewComment {
  id: string;
  marketId: string;
  parentId: string | null;
  userId: string;
  body: string;
  createdAt: string;
}

export interface NewReport {
  commentId: string;
  userId: string;
  reason: ReportReason;
  note: string | null;
  createdAt: string;
}

/** Distinct reporters at which a comment is hidden. */
export const HIDE_AT_REPORTS = 5;

/** Larger than every id: the keyset start of a newest-first page. */
const AFTER_ALL = '\uffff';

/**
 * The comments of one world's database (plain SQL on its connection). `reply_count` and
 * `report_count` are kept by the writes that change them, in the same transaction.
 */
export class CommentsRepository {
  private readonly byId: SqlStatement;
  private readonly insert: SqlStatement;
  private readonly bumpReplies: SqlStatement;
  private readonly topLevelPage: SqlStatement;
  private readonly repliesPage: SqlStatement;
  private readonly updateBody: SqlStatement;
  private readonly markDeleted: SqlStatement;
  private readonly insertReport: SqlStatement;
  private readonly countReport: SqlStatement;
  private readonly deleteReportsBy: SqlStatement;
  private readonly uncountReportsBy: SqlStatement;
  private readonly unbumpParentsOf: SqlStatement;
  private readonly deleteReportsOn: SqlStatement;
  private readonly deleteRepliesOf: SqlStatement;
  private readonly deleteBareTopLevelOf: SqlStatement;
  private readonly tombstoneTopLevelOf: SqlStatement;

  constructor(private readonly db: SqlConnection) {
    this.byId = db.prepare('SELECT * FROM comments WHERE id = ?');
    this.insert = db.prepare(
      `INSERT INTO comments (id, market_id, parent_id, user_id, body, status, reply_count, report_count, created_at, edited_at)
       VALUES (?, ?, ?, ?, ?, 'VISIBLE', 0, 0, ?, NULL)`,
    );
    this.bumpReplies = db.prepare('UPDATE comments SET reply_count = reply_count + ? WHERE id = ?');
    this.topLevelPage = db.prepare(
      'SELECT * FROM comments WHERE market_id = ? AND parent_id IS NULL AND id < ? ORDER BY id DESC LIMIT ?',
    );
    this.repliesPage = db.prepare(
      'SELECT * FROM comments WHERE parent_id = ? AND id > ? ORDER BY id ASC LIMIT ?',
    );
    this.updateBody = db.prepare('UPDATE comments SET body = ?, edited_at = ? WHERE id = ?');
    this.markDeleted = db.prepare(
      `UPDATE comments SET status = 'DELETED', body = NULL WHERE id = ? AND status <> 'DELETED'`,
    );
    this.insertReport = db.prepare(
      `INSERT INTO comment_reports (comment_id, user_id, reason, note, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (comment_id, user_id) DO NOTHING`,
    );
    // The report row counts; a comment reaching the threshold while VISIBLE turns HIDDEN.
    this.countReport = db.prepare(
      `UPDATE comments SET report_count = report_count + 1,
         status = CASE WHEN status = 'VISIBLE' AND report_count + 1 >= ${HIDE_AT_REPORTS} THEN 'HIDDEN' ELSE status END
       WHERE id = ?`,
    );
    this.deleteReportsBy = db.prepare('DELETE FROM comment_reports WHERE user_id = ?');
    this.unbumpParentsOf = db.prepare(
      `UPDATE comments SET reply_count = reply_count -
         (SELECT COUNT(*) FROM comments r WHERE r.parent_id = comments.id AND r.user_id = ?)
       WHERE id IN (SELECT parent_id FROM comments WHERE user_id = ? AND parent_id IS NOT NULL)`,
    );
    this.deleteReportsOn = db.prepare(
      'DELETE FROM comment_reports WHERE comment_id IN (SELECT id FROM comments WHERE user_id = ?)',
    );
    this.deleteRepliesOf = db.prepare(
      'DELETE FROM comments WHERE user_id = ? AND parent_id IS NOT NULL',
    );
    // A top-level comment of the user that no one else replied to goes; one with replies stays
    // as a tombstone (one already DELETED is not counted again).
    this.deleteBareTopLevelOf = db.prepare(
      `DELETE FROM comments WHERE user_id = ? AND parent_id IS NULL
         AND NOT EXISTS (SELECT 1 FROM comments r WHERE r.parent_id = comments.id)`,
    );
    this.tombstoneTopLevelOf = db.prepare(
      `UPDATE comments SET status = 'DELETED', body = NULL, report_count = 0
       WHERE user_id = ? AND parent_id IS NULL AND status <> 'DELETED'`,
    );
    // A withdrawn report stops counting; a HIDDEN comment back under the threshold is VISIBLE.
    // Set-based: a user reports a comment once (the primary key), so each comment loses one.
    this.uncountReportsBy = db.prepare(
      `UPDATE comments SET report_count = report_count - 1,
         status = CASE WHEN status = 'HIDDEN' AND report_count - 1 < ${HIDE_AT_REPORTS} THEN 'VISIBLE' ELSE status END
       WHERE id IN (SELECT comment_id FROM comment_reports WHERE user_id = ?)`,
    );
  }

  get(id: string): CommentRow | undefined {
    return this.byId.get(id) as CommentRow | undefined;
  }

  /** Stores a comment; a reply also counts on its parent. */
  create(c: NewComment): CommentRow {
    this.db.transaction(() => {
      this.insert.run(c.id, c.marketId, c.parentId, c.userId, c.body, c.createdAt);
      if (c.parentId !== null) this.bumpReplies.run(1, c.parentId);
    })();
    return this.get(c.id)!;
  }

  /** A market's top-level comments newest first, those before `before` (an id), `limit` rows. */
  topLevel(marketId: string, before: string | undefined, limit: number): CommentRow[] {
    return this.topLevelPage.all(marketId, before ?? AFTER_ALL, limit) as CommentRow[];
  }

  /** One thread's replies oldest first, those after `after` (an id), `limit` rows. */
  replies(parentId: string, after: string | undefined, limit: number): CommentRow[] {
    return this.repliesPage.all(parentId, after ?? '', limit) as CommentRow[];
  }

  edit(id: string, body: string, editedAt: string): CommentRow {
    this.updateBody.run(body, editedAt, id);
    return this.get(id)!;
  }

  /** Marks a comment DELETED and drops its body; its replies stay. */
  softDelete(id: string): void {
    this.markDeleted.run(id);
  }

  /** Records a report; false when this user already reported the comment. */
  report(r: NewReport): boolean {
    return this.db.transaction(() => {
      const added =
        this.insertReport.run(r.commentId, r.userId, r.reason, r.note, r.createdAt).changes === 1;
      if (added) this.countReport.run(r.commentId);
      return added;
    })();
  }

  /**
   * A sandbox reset's clean-up of one user's comments and reports (never another user's comment):
   * - the user's reports are withdrawn: each reported comment counts one report less, and a
   *   HIDDEN one back under {@link HIDE_AT_REPORTS} is VISIBLE again;
   * - the user's replies are deleted (with the reports on them) and leave their parents' counts;
   * - a top-level comment of the user that other users replied to stays as a tombstone (DELETED,
   *   body null, reports gone, author kept) so their replies stay reachable; one without such
   *   replies is deleted with its reports.
   * Answers how many of the user's comments went or became tombstones (one already DELETED that
   * stays is not counted again).
   */
  deleteAllOf(userId: string): number {
    const cleared = this.db.transaction(() => this.stageDeleteAllOf(userId))();
    return cleared();
  }

  /**
   * {@link deleteAllOf} inside the caller's transaction, set-based and deferred (runDeferred): on
   * PostgreSQL the statements go with the transaction's next round trip, whatever the number of
   * comments, and no read waits for an answer. Answers the count, to read once that round trip
   * has answered (after the COMMIT).
   */
  stageDeleteAllOf(userId: string): () => number {
    runDeferred(this.uncountReportsBy, userId);
    runDeferred(this.deleteReportsBy, userId);
    // The user's replies leave their parents' counts, then go (with the reports on them); what
    // replies are left are other users'.
    runDeferred(this.unbumpParentsOf, userId, userId);
    runDeferred(this.deleteReportsOn, userId);
    const replies = runDeferred(this.deleteRepliesOf, userId);
    const bare = runDeferred(this.deleteBareTopLevelOf, userId);
    const tombstones = runDeferred(this.tombstoneTopLevelOf, userId);
    return () => replies.changes + bare.changes + tombstones.changes;
  }
}

/** The comments repository of each world's database. */
@Injectable()
export class CommentStores {
  private readonly stores: WorldScoped<CommentsRepository>;

  constructor(worlds: WorldDatabases) {
    this.stores = worlds.perWorld((db) => new CommentsRepository(db));
  }

  of(world: WorldName): CommentsRepository {
    return this.stores.get(world);
  }
}
