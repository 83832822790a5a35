import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { commenter, ids, otherKey, post, postRaw, read } from '../support/comments.js';
import { expectContractError, http, type Running } from '../support/harness.js';
import { operationDescription } from '../support/openapi.js';
import {
  as,
  expectValidation,
  SEED_MARKETS,
  startOrdersApp,
  type Trader,
} from '../support/orders.js';
import { openDatabaseOf } from '../support/test-database.js';

const MINUTE = 60_000;

/**
 * Market comments in one world and across worlds: posting, reading, threads, paging, editing,
 * deleting, validation and scopes. The app starts at 2026-11-22T12:00Z with limits off (the
 * per-user route limit has its own suite, comments-limits); the clock only moves forward, and each
 * test posts its own comments (on its own market where order matters).
 */
describe('comments', () => {
  let svc: Running;
  /** a: the seeded trader; b: a fresh account; both with test keys, aLive: a's live key. */
  let a: Trader;
  let b: Trader;
  let aLive: Trader;
  const [m1, m2, m3, m4] = SEED_MARKETS;
  const advance = (ms: number) => (svc.clock as ManualClock).advance(ms);
  const patch = (t: Trader, id: string, json: unknown) =>
    as(t, `${svc.api}/comments/${id}`, { method: 'PATCH', json });
  const del = (t: Trader, id: string) => as(t, `${svc.api}/comments/${id}`, { method: 'DELETE' });

  beforeAll(async () => {
    svc = await startOrdersApp();
    a = await commenter(svc, 'trader@sandbox.test');
    b = await commenter(svc, 'b@comments.test');
    aLive = await otherKey(svc, a, 'live');
  });
  afterAll(async () => {
    await svc.close();
  });

  it('posts (201), gets and lists: the comment shape, the author, the world, the body as posted', async () => {
    const text = '<script>alert(1)</script> & "quotes"\nline two\tтаб 👍🏽 e\u0301 👨‍👩‍👧';
    const c = await post(svc, a, m1.id, text);
    expect(c).toEqual({
      id: expect.stringMatching(/^cmt_[0-9a-z]{20,40}$/),
      market_id: m1.id,
      parent_id: null,
      author: {
        id: a.userId,
        username: expect.stringMatching(/^[a-z0-9_]{3,30}$/),
        display_name: null,
      },
      body: text,
      status: 'VISIBLE',
      reply_count: 0,
      report_count: 0,
      created_at: '2026-11-22T12:00:00.000Z',
      edited_at: null,
      environment: 'test',
    });
    // Byte for byte, in GET and in the list, as the raw JSON text too (no escaping into markup).
    const got = await read(svc, b, `/comments/${c.id}`);
    expect(got.status).toBe(200);
    expect(got.body.body).toBe(text);
    expect(got.text).toContain('<script>alert(1)</script>');
    expect(got.body).not.toHaveProperty('report_count'); // b is not the author
    const list = await read(svc, b, `/markets/${m1.id}/comments`);
    expect(list.body.data[0]).toEqual(got.body);
    expect(list.body.next_cursor).toBeNull();
  });

  it('lists top-level comments newest first and a thread oldest first, with reply counts', async () => {
    const first = await post(svc, a, m2.id, 'first');
    const second = await post(svc, b, m2.id, 'second');
    const r1 = await post(svc, b, m2.id, 'reply 1', first.id);
    const r2 = await post(svc, a, m2.id, 'reply 2', first.id);
    const r3 = await post(svc, b, m2.id, 'reply 3', first.id);
    expect(r1.parent_id).toBe(first.id);
    expect(await ids(svc, a, `/markets/${m2.id}/comments`)).toEqual([second.id, first.id]);
    expect(await ids(svc, a, `/markets/${m2.id}/comments?parent_id=${first.id}`)).toEqual([
      r1.id,
      r2.id,
      r3.id,
    ]);
    expect((await read(svc, a, `/comments/${first.id}`)).body.reply_count).toBe(3);
    expect((await read(svc, a, `/comments/${second.id}`)).body.reply_count).toBe(0);
    // Replies page oldest first with a cursor too.
    const p1 = await read(svc, a, `/markets/${m2.id}/comments?parent_id=${first.id}&limit=2`);
    expect(p1.body.data.map((c: { id: string }) => c.id)).toEqual([r1.id, r2.id]);
    const p2 = await read(
      svc,
      a,
      `/markets/${m2.id}/comments?parent_id=${first.id}&limit=2&cursor=${p1.body.next_cursor}`,
    );
    expect(p2.body).toEqual({ data: [expect.objectContaining({ id: r3.id })], next_cursor: null });
    // A reply has no thread of its own; a parent of another market is unknown there.
    expect(await ids(svc, a, `/markets/${m2.id}/comments?parent_id=${r1.id}`)).toEqual([]);
    const other = await read(svc, a, `/markets/${m3.id}/comments?parent_id=${first.id}`);
    expect(expectContractError(other, 404, 'NOT_FOUND').details).toEqual({ parent_id: first.id });
    // A cursor of the replies list is refused by the top-level list.
    expectValidation(
      await read(svc, a, `/markets/${m2.id}/comments?cursor=${p1.body.next_cursor}`),
      'cursor',
    );
  });

  it('pages newest first by cursor without duplicates or gaps while comments arrive', async () => {
    const market = m4.id;
    const existing: string[] = [];
    for (let i = 0; i < 7; i++) existing.unshift((await post(svc, b, market, `c${i}`)).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor === null ? '' : `&cursor=${cursor}`;
      const res = await read(svc, a, `/markets/${market}/comments?limit=2${q}`);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...(res.body.data as { id: string }[]).map((c) => c.id));
      cursor = res.body.next_cursor as string | null;
      // New comments land while paging: they are newer than the first page, never inside it.
      await post(svc, a, market, `arrived during page ${pages}`);
      pages++;
    } while (cursor !== null);
    expect(seen).toEqual(existing);
    expect(pages).toBe(4);
    // The newest first page now starts with the arrivals.
    const fresh = await read(svc, a, `/markets/${market}/comments?limit=4`);
    expect(fresh.body.data.map((c: { body: string }) => c.body)).toEqual([
      'arrived during page 3',
      'arrived during page 2',
      'arrived during page 1',
      'arrived during page 0',
    ]);
  });

  it('keeps the worlds apart: a test key comment is unknown to live keys and no-key reads, and back', async () => {
    const paper = await post(svc, a, m1.id, 'paper only');
    const live = await post(svc, aLive, m1.id, 'live only');
    expect(paper.environment).toBe('test');
    expect(live.environment).toBe('live');
    for (const reader of [aLive, null]) {
      const res = await read(svc, reader, `/comments/${paper.id}`);
      expect(expectContractError(res, 404, 'NOT_FOUND').details).toEqual({ comment_id: paper.id });
      expect(await ids(svc, reader, `/markets/${m1.id}/comments`)).toEqual([live.id]);
    }
    // No key reads the live world.
    const open = await read(svc, null, `/comments/${live.id}`);
    expect(open.status).toBe(200);
    expect(open.body).toEqual({ ...live, report_count: undefined });
    expect(open.body).not.toHaveProperty('report_count');
    // The test key does not see the live comment, nor can it touch it.
    expectContractError(await read(svc, a, `/comments/${live.id}`), 404, 'NOT_FOUND');
    expect(await ids(svc, a, `/markets/${m1.id}/comments`)).not.toContain(live.id);
    expectContractError(await patch(a, live.id, { body: 'x' }), 404, 'NOT_FOUND');
    expectContractError(await del(a, live.id), 404, 'NOT_FOUND');
    const reply = await postRaw(svc, a, m1.id, { body: 'x', parent_id: live.id });
    expect(expectContractError(reply, 404, 'NOT_FOUND').details).toEqual({ parent_id: live.id });
  });

  it('refuses keys without comments:read or comments:write (403 INSUFFICIENT_SCOPE)', async () => {
    const c = await post(svc, a, m1.id, 'scoped');
    const noRead = await otherKey(svc, b, 'test', ['comments:write']);
    const noWrite = await otherKey(svc, b, 'test', ['comments:read']);
    for (const path of [`/markets/${m1.id}/comments`, `/comments/${c.id}`]) {
      const err = expectContractError(await read(svc, noRead, path), 403, 'INSUFFICIENT_SCOPE');
      expect(err.details.missing_scopes).toEqual(['comments:read']);
      expect((await read(svc, noWrite, path)).status).toBe(200);
    }
    const writes = [
      postRaw(svc, noWrite, m1.id, { body: 'x' }),
      as(noWrite, `${svc.api}/comments/${c.id}`, { method: 'PATCH', json: { body: 'x' } }),
      as(noWrite, `${svc.api}/comments/${c.id}`, { method: 'DELETE' }),
      as(noWrite, `${svc.api}/comments/${c.id}/report`, {
        method: 'POST',
        json: { reason: 'SPAM' },
      }),
    ];
    for (const res of await Promise.all(writes)) {
      const err = expectContractError(res, 403, 'INSUFFICIENT_SCOPE');
      expect(err.details.missing_scopes).toEqual(['comments:write']);
    }
    // Writes need a credential at all.
    const anon = await http(`${svc.api}/markets/${m1.id}/comments`, {
      method: 'POST',
      json: { body: 'x' },
    });
    expectContractError(anon, 401, 'UNAUTHENTICATED');
  });

  it('validates the body, report and ids: 400 naming the field, 404 for malformed or unknown ids, nothing stored', async () => {
    const market = m3.id;
    const before = await ids(svc, a, `/markets/${market}/comments?limit=200`);
    const bad: [unknown, string][] = [
      [{ body: '' }, 'body'],
      [{ body: 'x'.repeat(2001) }, 'body'],
      [{ body: '👍'.repeat(2001) }, 'body'],
      [{ body: '\u200b \u2060' }, 'body'],
      [{ body: ' \n\t ' }, 'body'],
      [{ body: 'a\u0000b' }, 'body'],
      [{ body: 'a\u001bb' }, 'body'],
      [{ body: 'abc\u202edef' }, 'body'],
      [{ body: 'lone \ud800 surrogate' }, 'body'],
      [{ body: 5 }, 'body'],
      [{}, 'body'],
      [{ body: 'ok', extra: 1 }, 'extra'],
      [{ body: 'ok', parent_id: 5 }, 'parent_id'],
      [{ body: 'ok', parent_id: null }, 'parent_id'],
    ];
    for (const [json, field] of bad) expectValidation(await postRaw(svc, a, market, json), field);
    expect(await ids(svc, a, `/markets/${market}/comments?limit=200`)).toEqual(before);
    // 2000 characters are counted as code points: 2000 emoji (4000 UTF-16 units) fit.
    const long = '👍'.repeat(2000);
    expect((await post(svc, a, market, long)).body).toBe(long);

    const c = await post(svc, b, market, 'to report and edit');
    expectValidation(await patch(b, c.id, { body: '' }), 'body');
    expectValidation(await patch(b, c.id, { body: 'x', parent_id: 'y' }), 'parent_id');
    expect((await read(svc, b, `/comments/${c.id}`)).body.body).toBe('to report and edit');
    const report = (json: unknown) =>
      as(a, `${svc.api}/comments/${c.id}/report`, { method: 'POST', json });
    expectValidation(await report({ reason: 'RUDE' }), 'reason');
    expectValidation(await report({}), 'reason');
    expectValidation(await report({ reason: 'OTHER', note: 'n'.repeat(501) }), 'note');
    expectValidation(await report({ reason: 'OTHER', note: 'a\u202eb' }), 'note');
    expectValidation(await report({ reason: 'OTHER', note: 7 }), 'note');
    expectValidation(await report({ reason: 'OTHER', why: 'x' }), 'why');
    expect((await read(svc, b, `/comments/${c.id}`)).body.report_count).toBe(0);
    expectValidation(await read(svc, a, `/markets/${market}/comments?limit=0`), 'limit');
    expectValidation(await read(svc, a, `/markets/${market}/comments?cursor=nope`), 'cursor');

    // Malformed and unknown ids are 404 naming the id.
    for (const id of ['nope', 'cmt_', 'cmt_UPPER', 'cmt_00000000000000000000']) {
      const res = await read(svc, a, `/comments/${id}`);
      expect(expectContractError(res, 404, 'NOT_FOUND').details).toEqual({ comment_id: id });
    }
    for (const id of ['nope', 'mkt_doesnotexist']) {
      const res = await postRaw(svc, a, id, { body: 'x' });
      expect(expectContractError(res, 404, 'NOT_FOUND').details).toEqual({ market_id: id });
      const list = await read(svc, a, `/markets/${id}/comments`);
      expect(expectContractError(list, 404, 'NOT_FOUND').details).toEqual({ market_id: id });
    }
    for (const parent of ['nope', 'cmt_00000000000000000000']) {
      const res = await postRaw(svc, a, market, { body: 'x', parent_id: parent });
      expect(expectContractError(res, 404, 'NOT_FOUND').details).toEqual({ parent_id: parent });
    }
  });

  it('lets the author edit for 15 minutes (inclusive) and sets edited_at; then 409 COMMENT_EDIT_WINDOW_CLOSED', async () => {
    const c = await post(svc, a, m1.id, 'draft');
    const d = await post(svc, a, m1.id, 'late draft');
    advance(15 * MINUTE);
    const edited = await patch(a, c.id, { body: 'final' });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({
      id: c.id,
      body: 'final',
      created_at: c.created_at,
      edited_at: svc.clock.nowDate().toISOString(),
    });
    expect((await read(svc, null, `/comments/${c.id}`)).status).toBe(404); // paper world
    expect((await read(svc, b, `/comments/${c.id}`)).body).toMatchObject({
      body: 'final',
      edited_at: edited.body.edited_at,
    });
    advance(1);
    const late = await patch(a, d.id, { body: 'too late' });
    expect(expectContractError(late, 409, 'COMMENT_EDIT_WINDOW_CLOSED').details).toMatchObject({
      comment_id: d.id,
    });
    expect((await read(svc, a, `/comments/${d.id}`)).body).toMatchObject({
      body: 'late draft',
      edited_at: null,
    });
  });

  it("refuses another user's edit and delete (403 NOT_COMMENT_AUTHOR)", async () => {
    const c = await post(svc, a, m1.id, 'mine');
    expectContractError(await patch(b, c.id, { body: 'yours now' }), 403, 'NOT_COMMENT_AUTHOR');
    expectContractError(await del(b, c.id), 403, 'NOT_COMMENT_AUTHOR');
    expect((await read(svc, a, `/comments/${c.id}`)).body).toMatchObject({
      body: 'mine',
      status: 'VISIBLE',
    });
    // Another key of the same user is the same author.
    const a2 = await otherKey(svc, a);
    expect((await patch(a2, c.id, { body: 'still mine' })).status).toBe(200);
  });

  it('deletes: DELETED, body null, replies stay and list; edit, reply or report then 409 COMMENT_DELETED; delete again 204', async () => {
    const root = await post(svc, a, m2.id, 'root');
    const reply = await post(svc, b, m2.id, 'answer', root.id);
    const res = await del(a, root.id);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    for (const viewer of [a, b]) {
      const got = await read(svc, viewer, `/comments/${root.id}`);
      expect(got.body).toMatchObject({ status: 'DELETED', body: null, reply_count: 1 });
    }
    const top = await read(svc, b, `/markets/${m2.id}/comments`);
    expect(top.body.data[0]).toMatchObject({ id: root.id, status: 'DELETED', body: null });
    const thread = await read(svc, b, `/markets/${m2.id}/comments?parent_id=${root.id}`);
    expect(thread.body.data).toEqual([expect.objectContaining({ id: reply.id, body: 'answer' })]);
    const err = expectContractError(
      await patch(a, root.id, { body: 'back' }),
      409,
      'COMMENT_DELETED',
    );
    expect(err.details).toEqual({ comment_id: root.id });
    expectContractError(
      await postRaw(svc, b, m2.id, { body: 'x', parent_id: root.id }),
      409,
      'COMMENT_DELETED',
    );
    const reported = await as(b, `${svc.api}/comments/${root.id}/report`, {
      method: 'POST',
      json: { reason: 'SPAM' },
    });
    expectContractError(reported, 409, 'COMMENT_DELETED');
    // Deleting again (a retry) is 204, the tombstone stays; the operation says so.
    expect((await del(a, root.id)).status).toBe(204);
    expect((await read(svc, a, `/comments/${root.id}`)).body.status).toBe('DELETED');
    expect(await operationDescription(svc, 'delete', '/api/v1/comments/{id}')).toMatch(
      /Deleting a deleted comment again answers 204 .* a retried DELETE is safe/,
    );
    // The reply's author may still delete theirs.
    expect((await del(b, reply.id)).status).toBe(204);
    expect((await read(svc, a, `/comments/${root.id}`)).body.reply_count).toBe(1);
  });

  it('refuses a reply to a reply (422 COMMENT_THREAD_TOO_DEEP) and a parent of another market (404)', async () => {
    const root = await post(svc, a, m1.id, 'root');
    const reply = await post(svc, b, m1.id, 'reply', root.id);
    const deep = await postRaw(svc, a, m1.id, { body: 'deeper', parent_id: reply.id });
    expect(expectContractError(deep, 422, 'COMMENT_THREAD_TOO_DEEP').details).toMatchObject({
      parent_id: reply.id,
    });
    const elsewhere = await postRaw(svc, a, m2.id, { body: 'x', parent_id: root.id });
    expect(expectContractError(elsewhere, 404, 'NOT_FOUND').details).toEqual({
      parent_id: root.id,
    });
    expect((await read(svc, a, `/comments/${root.id}`)).body.reply_count).toBe(1);
    expect((await read(svc, a, `/comments/${reply.id}`)).body.reply_count).toBe(0);
  });

  it('notifies the parent author of a reply (COMMENT_REPLY) in the world of the reply, not a self-reply', async () => {
    const inbox = async (t: Trader) =>
      (await as(t, `${svc.api}/notifications/cursor?limit=200`)).body.data as {
        type: string;
        data: Record<string, unknown>;
      }[];
    const root = await post(svc, a, m3.id, 'ask me');
    const before = (await inbox(a)).length;
    const reply = await post(svc, b, m3.id, 'an answer', root.id);
    const after = await inbox(a);
    expect(after).toHaveLength(before + 1);
    expect(after[0]).toMatchObject({
      type: 'COMMENT_REPLY',
      data: {
        comment_id: reply.id,
        parent_id: root.id,
        market_id: m3.id,
        author: reply.author,
      },
    });
    // The OpenAPI description of data names this shape, every key the notification carries.
    const doc = (await http(`${svc.api}/openapi.json`)).body;
    const documented = doc.components.schemas.NotificationDto.properties.data.description as string;
    const shape = `{${Object.keys(after[0].data).join(', ')}: {${Object.keys(reply.author).join(', ')}}}`;
    expect(documented).toContain(`COMMENT_REPLY ${shape}`);
    await post(svc, a, m3.id, 'answering myself', root.id);
    expect(await inbox(a)).toHaveLength(before + 1);
    expect((await inbox(b)).some((n) => n.data.comment_id === reply.id)).toBe(false);
    // Stored in the reply's world: paper here, live for a live reply.
    const bLive = await otherKey(svc, b, 'live');
    const liveRoot = await post(svc, aLive, m3.id, 'live question');
    const liveReply = await post(svc, bLive, m3.id, 'live answer', liveRoot.id);
    const worlds = platformNotifications(svc, a.userId);
    expect(worlds.get(reply.id)).toBe('test');
    expect(worlds.get(liveReply.id)).toBe('live');
  });
});

/** comment_id -> environment of the user's stored COMMENT_REPLY notifications. */
function platformNotifications(svc: Running, userId: string): Map<string, string> {
  const db = openDatabaseOf(svc.dataDir, 'platform', { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT environment, data FROM notifications WHERE user_id = ? AND type = 'COMMENT_REPLY'`,
      )
      .all(userId) as { environment: string; data: string }[];
    return new Map(
      rows.map((r) => [(JSON.parse(r.data) as { comment_id: string }).comment_id, r.environment]),
    );
  } finally {
    db.close();
  }
}
