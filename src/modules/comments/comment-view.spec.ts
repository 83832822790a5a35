import { describe, expect, it } from '@jest/globals';
import { commentView } from './comment-view.js';
import type { CommentRow, CommentStatus } from './comments.repository.js';

const author = { id: 'usr_author', username: 'author_1', display_name: null };

function row(status: CommentStatus, body: string | null = 'text'): CommentRow {
  return {
    id: 'cmt_1',
    market_id: 'mkt_1',
    parent_id: null,
    user_id: 'usr_author',
    body,
    status,
    reply_count: 2,
    report_count: 5,
    created_at: '2026-11-22T12:00:00.000Z',
    edited_at: null,
  };
}

describe('commentView', () => {
  it('shows a visible body to everyone, report_count to the author only', () => {
    expect(commentView(row('VISIBLE'), author, 'usr_author', 'test')).toMatchObject({
      body: 'text',
      report_count: 5,
      environment: 'test',
    });
    for (const viewer of ['usr_other', null]) {
      const v = commentView(row('VISIBLE'), author, viewer, 'live');
      expect(v.body).toBe('text');
      expect(v).not.toHaveProperty('report_count');
    }
  });

  it('keeps a hidden body for its author, null for everyone else', () => {
    expect(commentView(row('HIDDEN'), author, 'usr_author', 'test').body).toBe('text');
    expect(commentView(row('HIDDEN'), author, 'usr_other', 'test').body).toBeNull();
    expect(commentView(row('HIDDEN'), author, null, 'live').body).toBeNull();
  });

  it('shows no body of a deleted comment, even to its author', () => {
    expect(commentView(row('DELETED', null), author, 'usr_author', 'test').body).toBeNull();
    expect(commentView(row('DELETED', 'left over'), author, 'usr_author', 'test').body).toBeNull();
  });
});
