import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, http, type Running } from '../support/harness.js';
import { as, startOrdersApp, TRADABLE, trader, limit, type Trader } from '../support/orders.js';
import { platformQuery } from '../support/webhooks.js';
import { deleteWorld, idsOf, openWorld } from '../support/worlds-groups.js';

const SCOPES = [
  'watchlist:read',
  'watchlist:write',
  'comments:read',
  'comments:write',
  'notifications:read',
  'notifications:write',
  'markets:read',
  'orders:read',
  'orders:write',
  'wallet:read',
  'wallet:write',
];

/**
 * Watchlists, comments and notifications inside ephemeral worlds: each works with a world key as
 * in the paper world, sees that world's records only, and nothing of a deleted world remains.
 */
describe('worlds serve watchlists, comments and notifications', () => {
  let svc: Running;
  let a: Trader;
  const [m1, m2] = TRADABLE;

  beforeAll(async () => {
    svc = await startOrdersApp();
    a = await trader(svc, 'a@worlds-groups.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('watchlists: a world keeps its own lists, apart from the paper world and other worlds', async () => {
    const w1 = await openWorld(svc, a);
    const w2 = await openWorld(svc, a);
    const wl = (t: Pick<Trader, 'key'>, path = '', init = {}) =>
      as(t, `${svc.api}/watchlists${path}`, init);
    const mine = await wl(w1, '', { method: 'POST', json: { name: 'Same', market_ids: [m1.id] } });
    expect(mine.status).toBe(201);
    expect(mine.body.environment).toBe('test');
    expect(mine.body.markets.map((m: { id: string }) => m.id)).toEqual([m1.id]);
    // The name is unique per world only: the paper world and the other world may use it.
    const paper = await wl(a, '', { method: 'POST', json: { name: 'Same' } });
    expect(paper.status).toBe(201);
    expect((await wl(w2, '', { method: 'POST', json: { name: 'Same' } })).status).toBe(201);
    expectContractError(
      await wl(w1, '', { method: 'POST', json: { name: 'same' } }),
      409,
      'WATCHLIST_NAME_TAKEN',
    );
    expect(idsOf((await wl(w1)).body)).toEqual([mine.body.id]);
    expect(idsOf((await wl(a)).body)).not.toContain(mine.body.id);
    expect(idsOf((await wl(w2)).body)).not.toContain(mine.body.id);
    expect(idsOf((await wl(w1)).body)).not.toContain(paper.body.id);
    expectContractError(await wl(a, `/${mine.body.id}`), 404, 'NOT_FOUND');
    expectContractError(await wl(w2, `/${mine.body.id}`), 404, 'NOT_FOUND');
    expectContractError(await wl(w1, `/${paper.body.id}`), 404, 'NOT_FOUND');
    const add = await wl(w1, `/${mine.body.id}/markets`, {
      method: 'POST',
      json: { market_id: m2.id },
    });
    expect(add.status).toBe(200);
    expect(add.body.markets).toHaveLength(2);

    await deleteWorld(svc, a, w1);
    const w3 = await openWorld(svc, a);
    expect((await wl(w3)).body.data).toEqual([]);
    expect(idsOf((await wl(a)).body)).toEqual([paper.body.id]);
  });

  it('comments: a world has its own threads, unseen from the paper world, other worlds and without a key', async () => {
    const w1 = await openWorld(svc, a);
    const w2 = await openWorld(svc, a);
    const path = `${svc.api}/markets/${m1.id}/comments`;
    const posted = await as(w1, path, { method: 'POST', json: { body: 'inside the world' } });
    expect(posted.status).toBe(201);
    expect(posted.body.environment).toBe('test');
    const reply = await as(w1, path, {
      method: 'POST',
      json: { body: 'a reply', parent_id: posted.body.id },
    });
    expect(reply.status).toBe(201);
    const paperComment = await as(a, path, { method: 'POST', json: { body: 'paper' } });
    expect(paperComment.status).toBe(201);

    expect(idsOf((await as(w1, path)).body)).toEqual([posted.body.id]);
    const thread = await as(w1, `${path}?parent_id=${posted.body.id}`);
    expect(idsOf(thread.body)).toEqual([reply.body.id]);
    expect((await as(w1, `${svc.api}/comments/${posted.body.id}`)).body.reply_count).toBe(1);
    for (const other of [a, w2] as Pick<Trader, 'key'>[]) {
      expect(idsOf((await as(other, path)).body)).not.toContain(posted.body.id);
      expectContractError(
        await as(other, `${svc.api}/comments/${posted.body.id}`),
        404,
        'NOT_FOUND',
      );
    }
    expect(idsOf((await http(path)).body)).not.toContain(posted.body.id);
    expectContractError(
      await as(w1, `${svc.api}/comments/${paperComment.body.id}`),
      404,
      'NOT_FOUND',
    );
    const edit = await as(w1, `${svc.api}/comments/${posted.body.id}`, {
      method: 'PATCH',
      json: { body: 'edited in the world' },
    });
    expect(edit.status).toBe(200);
    expect(edit.body.edited_at).not.toBeNull();

    await deleteWorld(svc, a, w1);
    const w3 = await openWorld(svc, a);
    expect((await as(w3, path)).body.data).toEqual([]);
    expect(idsOf((await as(a, path)).body)).toEqual([paperComment.body.id]);
  });

  it('a sandbox reset in a world clears its watchlists and comments, never the paper ones', async () => {
    const w = await openWorld(svc, a);
    const wl = await as(w, `${svc.api}/watchlists`, { method: 'POST', json: { name: 'Gone' } });
    expect(wl.status).toBe(201);
    const cmt = await as(w, `${svc.api}/markets/${m2.id}/comments`, {
      method: 'POST',
      json: { body: 'gone too' },
    });
    expect(cmt.status).toBe(201);
    const paperList = await as(a, `${svc.api}/watchlists`, {
      method: 'POST',
      json: { name: 'Kept' },
    });
    expect(paperList.status).toBe(201);
    const reset = await as(w, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(reset.status).toBe(200);
    expect(reset.body.cleared).toMatchObject({ watchlists: 1, comments: 1 });
    expect((await as(w, `${svc.api}/watchlists`)).body.data).toEqual([]);
    expect((await as(w, `${svc.api}/markets/${m2.id}/comments`)).body.data).toEqual([]);
    expect(idsOf((await as(a, `${svc.api}/watchlists`)).body)).toContain(paperList.body.id);
  });

  it('notifications: a world resolve notifies in that world only; its rows go with the world', async () => {
    const w1 = await openWorld(svc, a);
    const w2 = await openWorld(svc, a);
    const bought = await as(w1, `${svc.api}/orders`, {
      method: 'POST',
      json: limit(m1, 'BUY', 'YES', 99, 2),
    });
    expect(bought.status).toBe(201);
    expect(bought.body.filled_quantity).toBe(2);
    const resolved = await as(w1, `${svc.api}/sandbox/markets/${m1.id}/resolve`, {
      method: 'POST',
      json: { outcome: 'YES' },
    });
    expect(resolved.status).toBe(200);

    const list = await as(w1, `${svc.api}/notifications/cursor`);
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    const n = list.body.data[0];
    expect(n).toMatchObject({ type: 'MARKET_RESOLVED', environment: 'test', read_at: null });
    expect(n.data).toMatchObject({ market_id: m1.id, outcome: 'YES', payout_cents: 200 });
    expect((await as(w1, `${svc.api}/notifications/unread-count`)).body.unread).toBe(1);
    // Stored in the platform database keyed by the world, not as a paper notification.
    expect(
      platformQuery<{ environment: string }>(
        svc,
        'SELECT environment FROM notifications WHERE id = ?',
        n.id,
      ),
    ).toEqual([{ environment: w1.id }]);
    for (const other of [a, w2] as Pick<Trader, 'key'>[]) {
      expect(idsOf((await as(other, `${svc.api}/notifications/cursor`)).body)).not.toContain(n.id);
      expect((await as(other, `${svc.api}/notifications/unread-count`)).body.unread).toBe(0);
      expectContractError(
        await as(other, `${svc.api}/notifications/${n.id}/read`, { method: 'POST' }),
        404,
        'NOT_FOUND',
      );
    }
    const all = await as(w1, `${svc.api}/notifications/read-all`, { method: 'POST', json: {} });
    expect(all.body).toEqual({ marked: 1 });
    // The paper world's market is untouched by the world's resolve.
    expect((await as(a, `${svc.api}/markets/${m1.id}`)).body.status).toBe('OPEN');

    await deleteWorld(svc, a, w1);
    expect(platformQuery(svc, 'SELECT id FROM notifications WHERE environment = ?', w1.id)).toEqual(
      [],
    );
    expect(platformQuery(svc, 'SELECT id FROM notifications WHERE id = ?', n.id)).toEqual([]);
  });
});
