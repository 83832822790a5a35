import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { commenter, ids, otherKey, post, postRaw, read } from '../support/comments.js';
import { expectContractError, type Running } from '../support/harness.js';
import { as, paperQuery, SEED_MARKETS, startOrdersApp, type Trader } from '../support/orders.js';

const DAY = 24 * 3_600_000;

/**
 * Reports and hiding, the 30-day rule of resolved markets, and the sandbox reset's clean-up of
 * paper comments. The app starts at 2026-11-22T12:00Z with limits off.
 */
describe('comments: reports, resolved markets, sandbox reset', () => {
  let svc: Running;
  let author: Trader;
  /** Six other users: five reporters and one more. */
  const others: Trader[] = [];
  const [m1, m2, m3, m4] = SEED_MARKETS;
  const advance = (ms: number) => (svc.clock as ManualClock).advance(ms);
  const report = (t: Trader, id: string, json: unknown = { reason: 'SPAM' }) =>
    as(t, `${svc.api}/comments/${id}/report`, { method: 'POST', json });

  beforeAll(async () => {
    svc = await startOrdersApp();
    author = await commenter(svc, 'author@moderation.test');
    for (let i = 0; i < 6; i++) others.push(await commenter(svc, `r${i}@moderation.test`));
  });
  afterAll(async () => {
    await svc.close();
  });

  it('hides a comment at the 5th distinct reporter (4 do not); the author still sees body and report_count', async () => {
    const c = await post(svc, author, m1.id, 'controversial');
    const reasons = ['SPAM', 'ABUSE', 'OFF_TOPIC', 'OTHER'];
    for (let i = 0; i < 4; i++) {
      const res = await report(others[i], c.id, { reason: reasons[i], note: `note ${i}` });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        comment_id: c.id,
        reason: reasons[i],
        note: `note ${i}`,
        created_at: svc.clock.nowDate().toISOString(),
      });
    }
    const four = await read(svc, others[5], `/comments/${c.id}`);
    expect(four.body).toMatchObject({ status: 'VISIBLE', body: 'controversial' });
    expect((await read(svc, author, `/comments/${c.id}`)).body.report_count).toBe(4);

    expect((await report(others[4], c.id)).status).toBe(202);
    for (const viewer of others) {
      const got = await read(svc, viewer, `/comments/${c.id}`);
      expect(got.body).toMatchObject({ status: 'HIDDEN', body: null });
      expect(got.body).not.toHaveProperty('report_count');
      const listed = (await read(svc, viewer, `/markets/${m1.id}/comments`)).body.data;
      expect(listed.find((x: { id: string }) => x.id === c.id)).toMatchObject({ body: null });
    }
    const own = await read(svc, author, `/comments/${c.id}`);
    expect(own.body).toMatchObject({ status: 'HIDDEN', body: 'controversial', report_count: 5 });
    // A sixth report counts but changes nothing more.
    expect((await report(others[5], c.id)).status).toBe(202);
    expect((await read(svc, author, `/comments/${c.id}`)).body.report_count).toBe(6);
  });

  it('one report per user and comment (409 ALREADY_REPORTED); not one of your own (422)', async () => {
    const c = await post(svc, author, m1.id, 'report me once');
    expect((await report(others[0], c.id)).status).toBe(202);
    const again = await report(others[0], c.id, { reason: 'ABUSE' });
    expect(expectContractError(again, 409, 'ALREADY_REPORTED').details).toEqual({
      comment_id: c.id,
    });
    // Another key of the same user is the same reporter.
    const sameUser = await otherKey(svc, others[0]);
    expectContractError(await report(sameUser, c.id), 409, 'ALREADY_REPORTED');
    const self = await report(author, c.id);
    expectContractError(self, 422, 'CANNOT_REPORT_OWN_COMMENT');
    expect((await read(svc, author, `/comments/${c.id}`)).body.report_count).toBe(1);
    const unknown = await report(others[0], 'cmt_00000000000000000000');
    expect(expectContractError(unknown, 404, 'NOT_FOUND').details).toEqual({
      comment_id: 'cmt_00000000000000000000',
    });
  });

  it('a market resolved more than 30 days ago refuses new comments (422 MARKET_NOT_OPEN)', async () => {
    const market = m2.id;
    // Created now: the session that makes keys does not last the 30 days.
    const live = await otherKey(svc, others[0], 'live');
    const root = await post(svc, author, market, 'before the resolution');
    const resolved = await as(author, `${svc.api}/sandbox/markets/${market}/resolve`, {
      method: 'POST',
      json: { outcome: 'YES' },
    });
    expect(resolved.status).toBe(200);
    expect((await postRaw(svc, others[0], market, { body: 'right after' })).status).toBe(201);
    advance(30 * DAY);
    expect((await postRaw(svc, others[0], market, { body: 'day 30' })).status).toBe(201);
    advance(1);
    for (const json of [{ body: 'too late' }, { body: 'too late', parent_id: root.id }]) {
      const res = await postRaw(svc, others[0], market, json);
      expect(expectContractError(res, 422, 'MARKET_NOT_OPEN').details).toMatchObject({
        market_id: market,
        status: 'RESOLVED',
      });
    }
    // Reading goes on; other markets and the live world's market are open.
    expect(await ids(svc, others[0], `/markets/${market}/comments`)).toHaveLength(3);
    expect((await postRaw(svc, others[0], m3.id, { body: 'open market' })).status).toBe(201);
    expect((await postRaw(svc, live, market, { body: 'live market still open' })).status).toBe(201);
  });

  it("a sandbox reset clears the user's paper comments and reports, never other users' replies; counts stay true; live stays", async () => {
    const user = await commenter(svc, 'resetter@moderation.test');
    const userLive = await otherKey(svc, user, 'live');
    const [x, y] = others;
    const market = m4.id;
    const mine = await post(svc, user, market, 'my thread');
    const replyToMine = await post(svc, x, market, 'a reply that outlives the reset', mine.id);
    const lonely = await post(svc, user, market, 'nobody replied');
    const theirs = await post(svc, x, market, 'their thread');
    const myReply = await post(svc, user, market, 'my reply', theirs.id);
    const theirReply = await post(svc, y, market, 'their reply', theirs.id);
    expect((await report(y, mine.id)).status).toBe(202);
    expect((await report(user, theirs.id)).status).toBe(202);
    const liveMine = await post(svc, userLive, market, 'my live comment');
    const liveOfY = await post(
      svc,
      await otherKey(svc, await commenter(svc, 'live-author@moderation.test'), 'live'),
      market,
      'a live comment',
    );
    expect(
      (
        await as(userLive, `${svc.api}/comments/${liveOfY.id}/report`, {
          method: 'POST',
          json: { reason: 'SPAM' },
        })
      ).status,
    ).toBe(202);
    expect((await read(svc, x, `/comments/${theirs.id}`)).body.reply_count).toBe(2);

    const reset = await as(user, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(reset.status).toBe(200);
    expect(reset.body.cleared.comments).toBe(3); // mine (kept as a tombstone), lonely, my reply

    for (const id of [lonely.id, myReply.id]) {
      expectContractError(await read(svc, x, `/comments/${id}`), 404, 'NOT_FOUND');
    }
    // x's COMMENT_REPLY notification of the user's removed reply is x's record: it stays, and the
    // comment it names answers 404 like any unknown one.
    const inbox = (await as(x, `${svc.api}/notifications/cursor?limit=200`)).body.data as {
      type: string;
      data: { comment_id?: string };
    }[];
    expect(inbox.filter((n) => n.data.comment_id === myReply.id)).toHaveLength(1);
    // Another user's reply survives, in a thread whose first comment is a tombstone.
    expect((await read(svc, x, `/comments/${replyToMine.id}`)).body).toMatchObject({
      body: 'a reply that outlives the reset',
      parent_id: mine.id,
    });
    expect((await read(svc, x, `/comments/${mine.id}`)).body).toMatchObject({
      status: 'DELETED',
      body: null,
      author: { id: user.userId },
      reply_count: 1,
    });
    expect(await ids(svc, x, `/markets/${market}/comments?parent_id=${mine.id}`)).toEqual([
      replyToMine.id,
    ]);
    expect(await ids(svc, x, `/markets/${market}/comments`)).toEqual([theirs.id, mine.id]);
    // The user's reply left their thread, and the user's report on it was withdrawn.
    expect((await read(svc, x, `/comments/${theirs.id}`)).body).toMatchObject({
      reply_count: 1,
      report_count: 0,
    });
    expect(await ids(svc, x, `/markets/${market}/comments?parent_id=${theirs.id}`)).toEqual([
      theirReply.id,
    ]);
    const reports = paperQuery<{ comment_id: string }>(
      svc,
      'SELECT comment_id FROM comment_reports WHERE comment_id IN (?, ?)',
      mine.id,
      theirs.id,
    );
    expect(reports).toEqual([]);
    // The reset user starts afresh: it may report again.
    expect((await report(user, theirs.id)).status).toBe(202);
    // The live world is untouched: the live comment, and the live report (a second is 409).
    expect((await read(svc, null, `/comments/${liveMine.id}`)).body.body).toBe('my live comment');
    const liveAgain = await as(userLive, `${svc.api}/comments/${liveOfY.id}/report`, {
      method: 'POST',
      json: { reason: 'SPAM' },
    });
    expectContractError(liveAgain, 409, 'ALREADY_REPORTED');
    // A second reset has nothing left to clear (the tombstone is not counted again).
    const again = await as(user, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(again.body.cleared.comments).toBe(0);
  });

  it("a reset withdraws the user's reports: a comment hidden by 5 reporters with the user among them is visible again", async () => {
    const user = await commenter(svc, 'reporter-reset@moderation.test');
    const c = await post(svc, author, m4.id, 'reported by five');
    for (const t of [...others.slice(0, 4), user]) expect((await report(t, c.id)).status).toBe(202);
    expect((await read(svc, others[5], `/comments/${c.id}`)).body).toMatchObject({
      status: 'HIDDEN',
      body: null,
    });

    expect((await as(user, `${svc.api}/sandbox/reset`, { method: 'POST' })).status).toBe(200);
    expect((await read(svc, others[5], `/comments/${c.id}`)).body).toMatchObject({
      status: 'VISIBLE',
      body: 'reported by five',
    });
    expect((await read(svc, author, `/comments/${c.id}`)).body.report_count).toBe(4);
    expect((await report(user, c.id)).status).toBe(202);
    expect((await read(svc, others[5], `/comments/${c.id}`)).body.status).toBe('HIDDEN');
  });
});
