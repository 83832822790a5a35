import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { encodeCursor } from '../../src/common/pagination/cursor.js';
import { expectContractError, http, type Running } from '../support/harness.js';
import { sessionFor } from '../support/keys.js';
import {
  ADMIN,
  as,
  expectValidation,
  keyFor,
  market,
  ORDER_SCOPES,
  place,
  startOrdersApp,
  trader,
  TRADABLE,
  type Trader,
} from '../support/orders.js';
import { allPages } from '../support/wallet.js';
import { until, type Json } from '../support/webhooks.js';

const NOTIFY_SCOPES = [
  ...ORDER_SCOPES,
  'wallet:write',
  'notifications:read',
  'notifications:write',
];

/**
 * Notifications and worlds (CONTRACT.md Worlds, Notifications): each notification belongs to the
 * world it was written in and is listed, read, marked and counted from that world only; read-all
 * with and without `before`, unread-count, the MARKET_RESOLVED notification of a resolved paper
 * market, and the sandbox reset clearing the paper ones. The notifications are real: tier decisions
 * (in the world of their key) and paper market resolutions.
 */
describe('notifications: one world each', () => {
  let svc: Running;
  let admin: string;
  let seq = 0;

  beforeAll(async () => {
    svc = await startOrdersApp();
    admin = await sessionFor(svc.api, ADMIN);
  });
  afterAll(async () => {
    await svc.close();
  });

  /** A fresh user with a test key and a live key, both with the notification scopes. */
  async function user(): Promise<{ paper: Trader; live: Trader }> {
    const paper = await trader(svc, `ntf-${++seq}-${Date.now()}@notify.test`, {
      scopes: NOTIFY_SCOPES,
    });
    const live = await keyFor(svc, paper.email, paper.token, {
      environment: 'live',
      scopes: ['notifications:read', 'notifications:write'],
    });
    return { paper, live };
  }

  /** A denied tier request on the key: one TIER_REQUEST_DENIED notification in the key's world. */
  async function denied(t: Trader): Promise<void> {
    const ask = await http(`${svc.api}/api-keys/${t.keyId}/tier-request`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}` },
      json: { tier: 'PRO', reason: 'notification tests' },
    });
    expect(ask.status).toBe(202);
    const deny = await http(`${svc.api}/admin/tier-requests/${ask.body.id}/deny`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(deny.status).toBe(200);
  }

  const list = (t: Pick<Trader, 'key'>, query: Record<string, string> = {}) =>
    allPages<Json>(svc, t, '/notifications/cursor', query);
  const unread = async (t: Pick<Trader, 'key'>): Promise<number> => {
    const res = await as(t, `${svc.api}/notifications/unread-count`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['unread']);
    return res.body.unread as number;
  };
  const readAll = (t: Pick<Trader, 'key'>, json?: unknown) =>
    as(t, `${svc.api}/notifications/read-all`, { method: 'POST', json });
  const advance = (ms: number) => (svc.clock as ManualClock).advance(ms);

  it('lists (cursor and deprecated) show each world its own notifications only, with environment', async () => {
    const { paper, live } = await user();
    await denied(paper);
    await denied(paper);
    await denied(live);
    const paperList = await list(paper);
    const liveList = await list(live);
    expect(paperList.map((n) => [n.type, n.environment, n.data.key_id])).toEqual([
      ['TIER_REQUEST_DENIED', 'test', paper.keyId],
      ['TIER_REQUEST_DENIED', 'test', paper.keyId],
    ]);
    expect(liveList.map((n) => [n.type, n.environment, n.data.key_id])).toEqual([
      ['TIER_REQUEST_DENIED', 'live', live.keyId],
    ]);
    // A session reads the live world, as a live key does.
    const session = await http(`${svc.api}/notifications/cursor`, {
      headers: { authorization: `Bearer ${paper.token}` },
    });
    expect(session.body.data).toEqual(liveList);
    // The deprecated list answers the same per world.
    expect((await as(paper, `${svc.api}/notifications`)).body.data).toEqual(paperList);
    expect((await as(live, `${svc.api}/notifications`)).body.data).toEqual(liveList);
  });

  it("a live key holding env:paper is served by the paper world: its tier decision is written there, the session's live list stays without it", async () => {
    const { paper } = await user();
    const paperLive = await keyFor(svc, paper.email, paper.token, {
      environment: 'live',
      scopes: ['notifications:read', 'notifications:write', 'env:paper'],
    });
    await denied(paperLive);
    expect((await list(paperLive)).map((n) => [n.type, n.environment, n.data.key_id])).toEqual([
      ['TIER_REQUEST_DENIED', 'test', paperLive.keyId],
    ]);
    const session = await http(`${svc.api}/notifications/cursor`, {
      headers: { authorization: `Bearer ${paper.token}` },
    });
    expect(session.status).toBe(200);
    expect(session.body.data).toEqual([]);
  });

  it("a cursor is the world's own: the other world's is 400 naming cursor", async () => {
    const { paper, live } = await user();
    await denied(paper);
    await denied(paper);
    const first = await as(paper, `${svc.api}/notifications/cursor?limit=1`);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const cursor = encodeURIComponent(first.body.next_cursor as string);
    const second = await as(paper, `${svc.api}/notifications/cursor?limit=1&cursor=${cursor}`);
    expect(second.status).toBe(200);
    expect(second.body.data).toHaveLength(1);
    expectValidation(await as(live, `${svc.api}/notifications/cursor?cursor=${cursor}`), 'cursor');
  });

  it('a cursor issued before worlds (list `notifications`) still pages the live world; a paper list refuses it', async () => {
    const { paper, live } = await user();
    await denied(live);
    await denied(live);
    await denied(live);
    await denied(paper);
    const all = await list(live);
    expect(all).toHaveLength(3);
    // What the list issued before this version: the list name alone, then the last id shown.
    const old = encodeURIComponent(encodeCursor('notifications', [all[0].id as string]));
    const next = await as(live, `${svc.api}/notifications/cursor?limit=1&cursor=${old}`);
    expect(next.status).toBe(200);
    expect(next.body.data).toEqual([all[1]]);
    const rest = await as(live, `${svc.api}/notifications/cursor?cursor=${old}`);
    expect(rest.body).toEqual({ data: all.slice(1), next_cursor: null });
    // A session reads the live world too.
    const session = await http(`${svc.api}/notifications/cursor?cursor=${old}`, {
      headers: { authorization: `Bearer ${paper.token}` },
    });
    expect(session.body.data).toEqual(all.slice(1));
    expectValidation(await as(paper, `${svc.api}/notifications/cursor?cursor=${old}`), 'cursor');
  });

  it("marking read: the other world's (or another user's) id is 404 naming it, and stays unread", async () => {
    const { paper, live } = await user();
    const stranger = await user();
    await denied(paper);
    await denied(live);
    const [paperNote] = await list(paper);
    const [liveNote] = await list(live);
    for (const [who, id] of [
      [paper, liveNote.id],
      [live, paperNote.id],
      [stranger.paper, paperNote.id],
      [stranger.live, liveNote.id],
    ] as const) {
      const res = await as(who, `${svc.api}/notifications/${id}/read`, { method: 'POST' });
      expect(expectContractError(res, 404, 'NOT_FOUND').details).toEqual({ notification_id: id });
    }
    expect((await list(paper))[0].read_at).toBeNull();
    expect((await list(live))[0].read_at).toBeNull();
    // In its own world it is marked.
    const ok = await as(live, `${svc.api}/notifications/${liveNote.id}/read`, { method: 'POST' });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ ...liveNote, read_at: svc.clock.nowDate().toISOString() });
  });

  it('unread-count counts the unread of the caller world, and moves as they are read', async () => {
    const { paper, live } = await user();
    expect([await unread(paper), await unread(live)]).toEqual([0, 0]);
    await denied(paper);
    await denied(paper);
    await denied(paper);
    await denied(live);
    expect([await unread(paper), await unread(live)]).toEqual([3, 1]);
    const [newest] = await list(paper);
    await as(paper, `${svc.api}/notifications/${newest.id}/read`, { method: 'POST' });
    expect([await unread(paper), await unread(live)]).toEqual([2, 1]);
    // Marking it again changes nothing.
    await as(paper, `${svc.api}/notifications/${newest.id}/read`, { method: 'POST' });
    expect(await unread(paper)).toBe(2);
    expect(await list(paper, { unread: 'true' })).toHaveLength(2);
  });

  it('read-all without before marks every unread of the caller world, once; the other world keeps its own', async () => {
    const { paper, live } = await user();
    await denied(paper);
    await denied(paper);
    await denied(live);
    const [alreadyRead] = await list(paper);
    await as(paper, `${svc.api}/notifications/${alreadyRead.id}/read`, { method: 'POST' });
    const firstReadAt = svc.clock.nowDate().toISOString();
    advance(5_000);
    // No body at all.
    const res = await readAll(paper);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ marked: 1 });
    const now = svc.clock.nowDate().toISOString();
    expect((await list(paper)).map((n) => n.read_at)).toEqual([firstReadAt, now]);
    expect([await unread(paper), await unread(live)]).toEqual([0, 1]);
    // Idempotent: nothing is left to mark (an empty body too).
    expect((await readAll(paper, {})).body).toEqual({ marked: 0 });
    expect((await readAll(paper)).body).toEqual({ marked: 0 });
    // The live key marks the live world's.
    expect((await readAll(live)).body).toEqual({ marked: 1 });
    expect(await unread(live)).toBe(0);
  });

  it('read-all with before marks those created at or before it (inclusive), not later ones', async () => {
    const { paper, live } = await user();
    const times: string[] = [];
    for (let i = 0; i < 3; i++) {
      advance(1_000);
      times.push(svc.clock.nowDate().toISOString());
      await denied(paper);
    }
    await denied(live);
    // At the second one's instant exactly: the first two.
    expect((await readAll(paper, { before: times[1] })).body).toEqual({ marked: 2 });
    const byTime = new Map((await list(paper)).map((n) => [n.created_at, n.read_at]));
    expect([...byTime.keys()].sort()).toEqual(times);
    expect(byTime.get(times[0])).not.toBeNull();
    expect(byTime.get(times[1])).not.toBeNull();
    expect(byTime.get(times[2])).toBeNull();
    // An offset is the same instant; a millisecond before the third marks nothing more.
    const justBefore = new Date(Date.parse(times[2]) - 1).toISOString().replace('Z', '+00:00');
    expect((await readAll(paper, { before: justBefore })).body).toEqual({ marked: 0 });
    // A date alone is its UTC midnight: today's notifications are after it.
    expect((await readAll(paper, { before: times[2].slice(0, 10) })).body).toEqual({ marked: 0 });
    expect((await readAll(paper, { before: times[2] })).body).toEqual({ marked: 1 });
    // The live world was not touched.
    expect(await unread(live)).toBe(1);
  });

  it('read-all refuses a bad before with 400 VALIDATION_FAILED naming it, and marks nothing', async () => {
    const { paper } = await user();
    await denied(paper);
    for (const before of [
      'yesterday',
      '2026-11-22T12:00:00', // no zone: it would be read in the server's own time zone
      '2026-02-30T00:00:00Z',
      1_790_000_000_000,
      null,
      '',
    ]) {
      expectValidation(await readAll(paper, { before }), 'before');
    }
    expectValidation(await readAll(paper, []), 'body');
    expect(await unread(paper)).toBe(1);
  });

  it('scopes: unread-count needs notifications:read, read-all notifications:write', async () => {
    const { paper } = await user();
    const writer = await keyFor(svc, paper.email, paper.token, {
      scopes: ['notifications:write'],
    });
    const reader = await keyFor(svc, paper.email, paper.token, {
      scopes: ['notifications:read'],
    });
    await denied(paper);
    const noRead = await as(writer, `${svc.api}/notifications/unread-count`);
    expect(expectContractError(noRead, 403, 'INSUFFICIENT_SCOPE').details.required_scopes).toEqual([
      'notifications:read',
    ]);
    const noWrite = await readAll(reader);
    expect(expectContractError(noWrite, 403, 'INSUFFICIENT_SCOPE').details.required_scopes).toEqual(
      ['notifications:write'],
    );
    expect(await unread(reader)).toBe(1);
    expect((await readAll(writer)).body).toEqual({ marked: 1 });
  });

  it('a resolved paper market: each holder gets one MARKET_RESOLVED in the paper world', async () => {
    const m = TRADABLE[0];
    const a = await user();
    const b = await user();
    await place(svc, a.paper, market(m, 'BUY', 'YES', 3));
    await place(svc, b.paper, market(m, 'BUY', 'NO', 2));
    const resolved = await as(a.paper, `${svc.api}/sandbox/markets/${m.id}/resolve`, {
      method: 'POST',
      json: { outcome: 'YES' },
    });
    expect(resolved.status).toBe(200);
    const resolvedOf = (t: Trader) =>
      until(
        () => list(t),
        (ns) => ns.some((n) => n.type === 'MARKET_RESOLVED'),
        'MARKET_RESOLVED',
      );
    const [noteA] = await resolvedOf(a.paper);
    const [noteB] = await resolvedOf(b.paper);
    expect(noteA).toEqual({
      id: expect.stringMatching(/^ntf_/),
      type: 'MARKET_RESOLVED',
      title: 'Market resolved YES',
      body: `Market ${m.id} resolved YES. Your 3 YES contracts paid 300 cents.`,
      data: { market_id: m.id, outcome: 'YES', payout_cents: 300 },
      environment: 'test',
      created_at: svc.clock.nowDate().toISOString(),
      read_at: null,
    });
    expect(noteB).toMatchObject({
      type: 'MARKET_RESOLVED',
      data: { market_id: m.id, outcome: 'YES', payout_cents: 0 },
      environment: 'test',
    });
    expect(await list(a.paper)).toHaveLength(1);
    expect(await list(b.paper)).toHaveLength(1);
    // Nothing in the live world.
    expect(await list(a.live)).toEqual([]);
    // A user who held nothing there hears nothing.
    const c = await user();
    expect(await list(c.paper)).toEqual([]);
  });

  it('a sandbox reset clears the paper notifications (cleared.notifications) and leaves the live ones', async () => {
    const { paper, live } = await user();
    await denied(paper);
    await denied(paper);
    await denied(live);
    const liveBefore = await list(live);
    const res = await as(paper, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.body.cleared.notifications).toBe(2);
    expect(await list(paper)).toEqual([]);
    expect(await unread(paper)).toBe(0);
    expect(await list(live)).toEqual(liveBefore);
    // Another reset has nothing left to clear.
    const again = await as(paper, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(again.body.cleared.notifications).toBe(0);
  });
});
