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

  it("a reset deletes the user's replies and unreplied comments, tombstones a comment others replied to, and keeps the counts true", () => {
    const own = add('usr_gone');
    const selfReply = add('usr_gone', own);
    const otherReply = add('usr_b', own);
    const lonely = add('usr_gone');
    const theirs = add('usr_b');
    const reply = add('usr_gone', theirs);
    const kept = add('usr_c', theirs);
    report(own, 'usr_b');
    report(lonely, 'usr_b');
    report(reply, 'usr_c');
    report(theirs, 'usr_gone');
    expect(repo.get(theirs)!.reply_count).toBe(2);

    expect(repo.deleteAllOf('usr_gone')).toBe(4);
    for (const id of [selfReply, lonely, reply]) expect(repo.get(id)).toBeUndefined();
    // Other users' replies keep their thread: its first comment stays as a tombstone.
    expect(repo.get(own)).toMatchObject({
      user_id: 'usr_gone',
      status: 'DELETED',
      body: null,
      reply_count: 1,
      report_count: 0,
    });
    expect(repo.replies(own, undefined, 10).map((r) => r.id)).toEqual([otherReply]);
    // The user's reply left the other thread; the user's report on it is withdrawn.
    expect(repo.get(theirs)).toMatchObject({ reply_count: 1, report_count: 0 });
    expect(repo.replies(theirs, undefined, 10).map((r) => r.id)).toEqual([kept]);
    const reports = connectionOf(ds)
      .prepare('SELECT comment_id FROM comment_reports WHERE comment_id IN (?, ?, ?, ?)')
      .all(own, lonely, reply, theirs);
    expect(reports).toEqual([]);
    // Nothing left to clear: the tombstone is not counted again.
    expect(repo.deleteAllOf('usr_gone')).toBe(0);
  });

  it("a reset withdraws the user's reports: a comment hidden with them is visible again", () => {
    const id = add('usr_author');
    for (let i = 1; i < HIDE_AT_REPORTS; i++) report(id, `usr_h${i}`);
    report(id, 'usr_reporter');
    expect(repo.get(id)).toMatchObject({ status: 'HIDDEN', report_count: HIDE_AT_REPORTS });
    expect(repo.deleteAllOf('usr_reporter')).toBe(0);
    expect(repo.get(id)).toMatchObject({ status: 'VISIBLE', report_count: HIDE_AT_REPORTS - 1 });
    expect(report(id, 'usr_reporter')).toBe(true);
    expect(repo.get(id)).toMatchObject({ status: 'HIDDEN', report_count: HIDE_AT_REPORTS });
  });
});
