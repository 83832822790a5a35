import { environmentOf, type Environment, type WorldName } from '../../common/environment.js';
import type { AuthorView } from '../users/author-directory.service.js';
import type { CommentRow, CommentStatus } from './comments.repository.js';

/** The wire shape of a comment. */
export interface CommentView {
  id: string;
  market_id: string;
  parent_id: string | null;
  author: AuthorView;
  body: string | null;
  status: CommentStatus;
  reply_count: number;
  /** Present only when the viewer is the author. */
  report_count?: number;
  created_at: string;
  edited_at: string | null;
  environment: Environment;
}

/**
 * A comment as `viewerId` sees it (null: no credential). A HIDDEN comment's body and every
 * comment's report count are its author's alone; a DELETED comment has no body left to show.
 */
export function commentView(
  row: CommentRow,
  author: AuthorView,
  viewerId: string | null,
  world: WorldName,
): CommentView {
  const own = viewerId !== null && viewerId === row.user_id;
  return {
    id: row.id,
    market_id: row.market_id,
    parent_id: row.parent_id,
    author,
    body: row.status === 'VISIBLE' || (row.status === 'HIDDEN' && own) ? row.body : null,
    status: row.status,
    reply_count: row.reply_count,
    ...(own ? { report_count: row.report_count } : {}),
    created_at: row.created_at,
    edited_at: row.edited_at,
    environment: environmentOf(world),
  };
}
