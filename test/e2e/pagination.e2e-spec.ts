import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { http, type Running } from '../support/harness.js';
import { createKey } from '../support/keys.js';
import {
  allOrders,
  approveTier,
  limit,
  market,
  ORDER_SCOPES,
  place,
  startOrdersApp,
  TRADABLE,
  trader,
  type Order,
  type Trader,
} from '../support/orders.js';
import { allPages, fund, ledger, type Txn } from '../support/wallet.js';
import { createEndpoint } from '../support/webhooks.js';

/**
 * Lists served by the one keyset pager (src/common/pagination/paginate.ts), paged two rows at a
 * time while new rows are written between page requests: the client sees every row that existed
 * when it started, once each and in the list's order. New rows arrive at the head of the
 * newest-first lists, behind the cursor, so the walk does not see them; a fresh walk does. In the
 * oldest-first lists (API keys, webhook endpoints) they sort after every existing row, so the
 * walk meets them at its end, once each.
 */
describe('keyset pages while rows are inserted between requests', () => {
  let svc: Running;
  let t: Trader;

  beforeAll(async () => {
    svc = await startOrdersApp();
    t = await trader(svc, 'pager@pagination.test', {
      scopes: [...ORDER_SCOPES, 'wallet:write', 'webhooks:read', 'webhooks:write'],
    });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('GET /orders, newest first', async () => {
    const m = TRADABLE[0];
    // Ten cents under the house's lowest bid level: each order rests, one new row per request.
    const resting = async () =>
      (await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 10, 1))).id as string;
    const existing: string[] = [];
    for (let i = 0; i < 7; i++) existing.push(await resting());
    const inserted: string[] = [];

    const seen = await allPages<Order>(svc, t, '/orders', { limit: '2' }, async () =>
      inserted.push(await resting()),
    );

    expect(seen.map((o: Order) => o.id)).toEqual([...existing].reverse());
    expect(inserted).toHaveLength(3); // between pages of 2, 2, 2 and 1
    const fresh = (await allOrders(svc, t)).map((o: Order) => o.id);
    expect(fresh).toEqual([...existing, ...inserted].reverse());
  });

  it('GET /transactions/cursor, newest first', async () => {
    for (let i = 1; i <= 6; i++) await fund(svc, t, 100 + i);
    const existing = await ledger(svc, t);
    const inserted: string[] = [];

    const seen = await allPages<Txn>(svc, t, '/transactions/cursor', { limit: '2' }, async () => {
      inserted.unshift((await fund(svc, t, 7_000 + inserted.length)).id);
    });

    expect(seen).toEqual(existing);
    expect(seen.slice(0, 6).map((r) => r.amount_cents)).toEqual([106, 105, 104, 103, 102, 101]);
    expect(new Set(seen.map((r) => r.id)).size).toBe(seen.length);
    const fresh = await ledger(svc, t);
    expect(fresh.map((r) => r.id)).toEqual([...inserted, ...existing.map((r) => r.id)]);
  });

  it("GET /markets/{id}/trades, newest first (the list name holds the market's id)", async () => {
    const m = TRADABLE[1];
    // One contract bought from the house's ask: one trade per request.
    const trade = () => place(svc, t, market(m, 'BUY', 'YES', 1));
    for (let i = 0; i < 5; i++) await trade();
    const path = `/markets/${m.id}/trades`;
    const existing = await allPages<{ id: string }>(svc, t, path);
    expect(existing).toHaveLength(5);
    let inserted = 0;

    const seen = await allPages<{ id: string }>(svc, t, path, { limit: '2' }, async () => {
      await trade();
      inserted++;
    });

    expect(seen).toEqual(existing);
    const fresh = await allPages<{ id: string }>(svc, t, path);
    expect(fresh).toHaveLength(existing.length + inserted);
    expect(fresh.slice(inserted)).toEqual(existing);
  });

  /**
   * Oldest-first lists: a row added during the walk sorts after every row that existed, so the
   * walk meets it after them (a list never skips or repeats a row either way).
   */
  function expectOldestFirstWalk(seen: string[], existing: string[], inserted: string[]): void {
    expect(seen.slice(0, existing.length)).toEqual(existing);
    expect(seen.slice(existing.length)).toEqual(inserted);
    expect(new Set(seen).size).toBe(seen.length);
  }

  it('GET /api-keys (a session), oldest first: new keys come after the existing ones', async () => {
    const asUser = { authorization: `Bearer ${t.token}` };
    const ids = async (cursor: string | null = null, limit = 200) => {
      const q = new URLSearchParams({ limit: String(limit) });
      if (cursor !== null) q.set('cursor', cursor);
      const res = await http(`${svc.api}/api-keys?${q.toString()}`, { headers: asUser });
      expect(res.status).toBe(200);
      return res.body as { data: { id: string }[]; next_cursor: string | null };
    };
    for (let i = 0; i < 4; i++) await createKey(svc.api, t.token, { name: `pager-${i}` });
    const existing = (await ids()).data.map((k) => k.id);
    expect(existing.length).toBeGreaterThanOrEqual(5);
    const seen: string[] = [];
    const inserted: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await ids(cursor, 2);
      seen.push(...page.data.map((k) => k.id));
      cursor = page.next_cursor;
      if (cursor !== null && inserted.length < 3) {
        inserted.push((await createKey(svc.api, t.token, { name: `added-${inserted.length}` })).id);
      }
    } while (cursor !== null);

    expect(inserted).toHaveLength(3);
    expectOldestFirstWalk(seen, existing, inserted);
    expect((await ids()).data.map((k) => k.id)).toEqual(seen);
  });

  it('GET /webhooks, oldest first: new endpoints come after the existing ones', async () => {
    await approveTier(svc, t, 'PRO'); // 10 endpoints: 5, then 3 more during the walk
    const endpoint = async (n: number) =>
      (await createEndpoint(svc, t, `https://hooks.example.com/pager/${n}`)).id as string;
    const existing: string[] = [];
    for (let i = 0; i < 5; i++) existing.push(await endpoint(i));
    const inserted: string[] = [];

    const seen = await allPages<{ id: string }>(svc, t, '/webhooks', { limit: '2' }, async () => {
      inserted.push(await endpoint(100 + inserted.length));
    });

    // Pages of 2 over 5 rows, one added after each full page: 5 + 3 rows in four pages.
    expect(inserted).toHaveLength(3);
    expectOldestFirstWalk(
      seen.map((e) => e.id),
      existing,
      inserted,
    );
  });
});
