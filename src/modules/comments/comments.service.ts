import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../../common/clock/clock.js';
import type { WorldName } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { COMMENT_ID } from '../../common/ids/id-patterns.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import { AuthorDirectory, type AuthorView } from '../users/author-directory.service.js';
import { PaperWorldRecords } from '../worlds/paper-world-records.service.js';
import { WorldMarkets } from '../worlds/world-markets.service.js';
import { commentView, type CommentView } from './comment-view.js';
import { CommentStores, type CommentRow, type CommentsRepository } from './comments.repository.js';
import type { CommentReportDto, ReportCommentDto } from './dto/comment.dto.js';

/** How long after posting its author may edit a comment. */
export const EDIT_WINDOW_MS = 15 * 60_000;

/**
 * Reading, editing, deleting and reporting comments in the request's world (posting is the
 * PostCommentUseCase). A comment id of the other world is unknown here, as is a malformed one.
 */
@Injectable()
export class CommentsService implements OnModuleInit {
  constructor(
    private readonly stores: CommentStores,
    private readonly directory: AuthorDirectory,
    private readonly clock: Clock,
    private readonly paper: PaperWorldRecords,
    private readonly markets: WorldMarkets,
  ) {}

  onModuleInit(): void {
    // Staged in the reset's own transaction (set-based, deferred: no round trip of its own).
    this.paper.registerStaged('comments', (userId, world) =>
      this.stores.of(world).stageDeleteAllOf(userId),
    );
  }

  /** A comment of the world, or 404 naming it under `field`. */
  find(world: WorldName, id: string, field = 'comment_id'): CommentRow {
    const row = COMMENT_ID.test(id) ? this.stores.of(world).get(id) : undefined;
    if (row === undefined) throw new DomainError('NOT_FOUND', `No comment ${id}`, { [field]: id });
    return row;
  }

  get(world: WorldName, viewerId: string | null, id: string): CommentView {
    return this.views(world, viewerId, [this.find(world, id)])[0];
  }

  /** The market's top-level comments newest first, or one thread's replies oldest first. */
  list(
    world: WorldName,
    viewerId: string | null,
    marketId: string,
    q: { limit?: number; cursor?: string; parent_id?: string },
  ): Page<CommentView> {
    this.markets.require(world, marketId);
    const page =
      q.parent_id === undefined
        ? this.topLevelPage(this.stores.of(world), world, marketId, q)
        : this.repliesPage(world, marketId, q.parent_id, q);
    return { data: this.views(world, viewerId, page.data), next_cursor: page.next_cursor };
  }

  private topLevelPage(
    store: CommentsRepository,
    world: WorldName,
    marketId: string,
    q: { limit?: number; cursor?: string },
  ): Page<CommentRow> {
    return paginate({
      list: `comments:${world}:${marketId}`,
      keys: ['id'],
      query: q,
      fetch: (before, take) => store.topLevel(marketId, before?.[0], take),
      keyOf: (row) => [row.id],
      map: (row) => row,
    });
  }

  private repliesPage(
    world: WorldName,
    marketId: string,
    parentId: string,
    q: { limit?: number; cursor?: string },
  ): Page<CommentRow> {
    const parent = this.find(world, parentId, 'parent_id');
    if (parent.market_id !== marketId) {
      throw new DomainError('NOT_FOUND', `No comment ${parentId} on market ${marketId}`, {
        parent_id: parentId,
      });
    }
    return paginate({
      list: `comment-replies:${world}:${parentId}`,
      keys: ['id'],
      query: q,
      fetch: (after, take) => this.stores.of(world).replies(parentId, after?.[0], take),
      keyOf: (row) => [row.id],
      map: (row) => row,
    });
  }

  /** The author edits the body within the edit window; a deleted comment stays deleted. */
  edit(world: WorldName, userId: string, id: string, body: string): CommentView {
    const row = this.ownComment(world, userId, id);
    if (row.status === 'DELETED') {
      throw new DomainError('COMMENT_DELETED', `Comment ${id} was deleted`, { comment_id: id });
    }
    const now = this.clock.now();
    const closesAt = Date.parse(row.created_at) + EDIT_WINDOW_MS;
    if (now > closesAt) {
      throw new DomainError(
        'COMMENT_EDIT_WINDOW_CLOSED',
        `Comment ${id} can no longer be edited: comments may be edited for 15 minutes after posting`,
        { comment_id: id, editable_until: new Date(closesAt).toISOString() },
      );
    }
    const edited = this.stores.of(world).edit(id, body, new Date(now).toISOString());
    return this.views(world, userId, [edited])[0];
  }

  /** The author deletes it: DELETED, body gone, replies stay. Deleting again changes nothing. */
  remove(world: WorldName, userId: string, id: string): void {
    this.ownComment(world, userId, id);
    this.stores.of(world).softDelete(id);
  }

  /** One report per user and comment; the fifth distinct reporter hides it. */
  report(world: WorldName, userId: string, id: string, dto: ReportCommentDto): CommentReportDto {
    const row = this.find(world, id);
    if (row.status === 'DELETED') {
      throw new DomainError('COMMENT_DELETED', `Comment ${id} was deleted`, { comment_id: id });
    }
    if (row.user_id === userId) {
      throw new DomainError(
        'CANNOT_REPORT_OWN_COMMENT',
        'You cannot report your own comment: edit or delete it instead',
        { comment_id: id },
      );
    }
    const report = {
      commentId: id,
      userId,
      reason: dto.reason,
      note: dto.note ?? null,
      createdAt: this.clock.nowDate().toISOString(),
    };
    if (!this.stores.of(world).report(report)) {
      throw new DomainError('ALREADY_REPORTED', `You already reported comment ${id}`, {
        comment_id: id,
      });
    }
    return {
      comment_id: id,
      reason: report.reason,
      note: report.note,
      created_at: report.createdAt,
    };
  }

  /** Rows as `viewerId` sees them, with their authors looked up in one query. */
  views(world: WorldName, viewerId: string | null, rows: CommentRow[]): CommentView[] {
    const authors = this.directory.authors(rows.map((r) => r.user_id));
    return rows.map((r) =>
      commentView(r, authors.get(r.user_id) ?? gone(r.user_id), viewerId, world),
    );
  }

  private ownComment(world: WorldName, userId: string, id: string): CommentRow {
    const row = this.find(world, id);
    if (row.user_id !== userId) {
      throw new DomainError('NOT_COMMENT_AUTHOR', `Only its author may change comment ${id}`, {
        comment_id: id,
      });
    }
    return row;
  }
}

/** An author whose account no longer exists (accounts are not deleted today). */
function gone(id: string): AuthorView {
  return { id, username: 'deleted_user', display_name: null };
}
