import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import {
  connectionOf,
  ENGINE_ENTITIES,
  ENGINE_MIGRATIONS,
  sqliteOptions,
} from '../../database/databases.js';
import { CommentsRepository, HIDE_AT_REPORTS } from './comments.repository.js';

/** The comments repository on a real engine database (migrated), without the app. */
describe('CommentsRepository', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-comments-'));
  const ds = new DataSource(sqliteOptions('paper', dir, ENGINE_ENTITIES, ENGINE_MIGRATIONS));
  let repo: CommentsRepository;
  let seq = 0;
  const add = (userId: string, parentId: string | null = null): string => {
    const id = `cmt_${String(++seq).padStart(4, '0')}`;
    repo.create({
      id,
      marketId: 'mkt_1',
      parentId,
      userId,
      body: 'text',
      createdAt: '2026-11-22T12:00:00.000Z',
    });
    return id;
  };
  const report = (commentId: string, userId: string) =>
    repo.report({ commentId, userId, reason: 'SPAM', note: null, createdAt: 'now' });

  beforeAll(async () => {
    await ds.initialize();
    repo = new CommentsRepository(connectionOf(ds));
  });
  afterAll(async () => {
    await ds.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`hides at ${HIDE_AT_REPORTS} distinct reporters and counts each reporter once`, () => {
    const id = add('usr_a');
    for (let i = 1; i < HIDE_AT_REPORTS; i++) expect(report(id, `usr_r${i}`)).toBe(true);
    expect(report(id, 'usr_r1')).toBe(false);
    expect(repo.get(id)).toMatchObject({ status: 'VISIBLE', report_count: HIDE_AT_REPORTS - 1 });
    expect(report(id, 'usr_last')).toBe(true);
    expect(repo.get(id)).toMatchObject({ status: 'HIDDEN', report_count: HIDE_AT_REPORTS });
  });

  it('a deleted comment stays deleted whatever the reports', () => {
    const id = add('usr_a');
    repo.softDelete(id);
    for (let i = 0; i < HIDE_AT_REPORTS; i++) report(id, `usr_x${i}`);
    expect(repo.get(id)).toMatchObject({ status: 'DELETED', body: null });
  });

  it("deletes a user's comments, the replies to them and their reports, and keeps the other counts true", () => {
    const own = add('usr_gone');
    const selfReply = add('usr_gone', own);
    const otherReply = add('usr_b', own);
    const theirs = add('usr_b');
    const reply = add('usr_gone', theirs);
    const kept = add('usr_c', theirs);
    report(own, 'usr_b');
    report(theirs, 'usr_gone');
    expect(repo.get(theirs)!.reply_count).toBe(2);

    expect(repo.deleteAllOf('usr_gone')).toBe(3);
    for (const id of [own, selfReply, otherReply, reply]) expect(repo.get(id)).toBeUndefined();
    expect(repo.get(theirs)).toMatchObject({ reply_count: 1, report_count: 1 });
    expect(repo.replies(theirs, undefined, 10).map((r) => r.id)).toEqual([kept]);
    const reports = connectionOf(ds)
      .prepare('SELECT comment_id FROM comment_reports WHERE comment_id IN (?, ?)')
      .all(own, theirs) as { comment_id: string }[];
    expect(reports).toEqual([{ comment_id: theirs }]);
    expect(repo.deleteAllOf('usr_gone')).toBe(0);
  });
});
