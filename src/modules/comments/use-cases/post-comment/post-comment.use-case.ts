import { Injectable } from '@nestjs/common';
import { Clock } from '../../../../common/clock/clock.js';
import type { WorldName } from '../../../../common/environment.js';
import { DomainError } from '../../../../common/errors/domain-error.js';
import { IdGenerator } from '../../../../common/ids/id-generator.js';
import { NotificationsService } from '../../../notifications/notifications.service.js';
import { WorldMarkets } from '../../../worlds/world-markets.service.js';
import type { CommentView } from '../../comment-view.js';
import { CommentStores, type CommentRow } from '../../comments.repository.js';
import { CommentsService } from '../../comments.service.js';

/** How long a resolved market still takes comments. */
export const RESOLVED_COMMENT_WINDOW_MS = 30 * 24 * 3_600_000;

export interface PostCommentCommand {
  world: WorldName;
  userId: string;
  marketId: string;
  body: string;
  parentId?: string;
}

/**
 * Posting a comment: the market must exist in the world and not be resolved for more than 30
 * days; a reply's parent must be a live top-level comment of the same market; the comment is
 * stored (a reply counts on its parent in the same transaction) and a reply notifies the
 * parent's author in the same world, unless they answer themselves.
 */
@Injectable()
export class PostCommentUseCase {
  constructor(
    private readonly stores: CommentStores,
    private readonly comments: CommentsService,
    private readonly notifications: NotificationsService,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly markets: WorldMarkets,
  ) {}

  execute(cmd: PostCommentCommand): CommentView {
    this.requireOpenMarket(cmd.world, cmd.marketId);
    const parent = cmd.parentId === undefined ? null : this.parentOf(cmd);
    const row = this.stores.of(cmd.world).create({
      id: this.ids.next('cmt'),
      marketId: cmd.marketId,
      parentId: parent?.id ?? null,
      userId: cmd.userId,
      body: cmd.body,
      createdAt: this.clock.nowDate().toISOString(),
    });
    const view = this.comments.views(cmd.world, cmd.userId, [row])[0];
    if (parent !== null && parent.user_id !== cmd.userId)
      this.notifyParentAuthor(cmd.world, parent, view);
    return view;
  }

  private requireOpenMarket(world: WorldName, marketId: string): void {
    const market = this.markets.require(world, marketId);
    if (market.status !== 'RESOLVED') return;
    // A resolved market without a recorded time (none since the comments migration) is old.
    const resolvedAt = market.resolved_at === null ? 0 : Date.parse(market.resolved_at);
    if (this.clock.now() - resolvedAt > RESOLVED_COMMENT_WINDOW_MS) {
      throw new DomainError(
        'MARKET_NOT_OPEN',
        `Market ${marketId} was resolved more than 30 days ago and takes no new comments`,
        { market_id: marketId, status: market.status, resolved_at: market.resolved_at },
      );
    }
  }

  private parentOf(cmd: PostCommentCommand): CommentRow {
    const parentId = cmd.parentId!;
    const parent = this.comments.find(cmd.world, parentId, 'parent_id');
    if (parent.market_id !== cmd.marketId) {
      throw new DomainError('NOT_FOUND', `No comment ${parentId} on market ${cmd.marketId}`, {
        parent_id: parentId,
      });
    }
    if (parent.parent_id !== null) {
      throw new DomainError(
        'COMMENT_THREAD_TOO_DEEP',
        `Comment ${parentId} is a reply; replies go one level deep: reply to ${parent.parent_id} instead`,
        { parent_id: parentId, thread_id: parent.parent_id },
      );
    }
    if (parent.status === 'DELETED') {
      throw new DomainError('COMMENT_DELETED', `Comment ${parentId} was deleted`, {
        parent_id: parentId,
      });
    }
    return parent;
  }

  private notifyParentAuthor(world: WorldName, parent: CommentRow, reply: CommentView): void {
    this.notifications.notify({
      userId: parent.user_id,
      environment: world,
      type: 'COMMENT_REPLY',
      title: 'New reply to your comment',
      body: `${reply.author.username} replied to your comment`,
      data: {
        comment_id: reply.id,
        parent_id: parent.id,
        market_id: reply.market_id,
        author: reply.author,
      },
    });
  }
}
