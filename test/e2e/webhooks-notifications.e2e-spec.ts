import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, type Running } from '../support/harness.js';
import { as, expectValidation, keyFor, type Trader } from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import {
  advance,
  createEndpoint,
  deliveries,
  getEndpoint,
  hookUser,
  post,
  sendTest,
  startWebhookApp,
  until,
  type Json,
} from '../support/webhooks.js';

/**
 * In-app notifications (issue 7; SPEC.md Deprecated operations): GET /notifications/cursor (keyset,
 * newest first, stable under new arrivals), the deprecated GET /notifications with its headers,
 * POST /notifications/{id}/read, and the notifications:read / notifications:write scopes. The
 * notifications are real ones: webhook suspensions (WEBHOOK_RETRY_SCHEDULE=0, so each failed
 * delivery is a dead letter at once; an endpoint that never succeeded is suspended by its 20th).
 */
describe('notifications: cursor, deprecated list, mark-read, scopes', () => {
  let svc: Running;
  let rx: Receiver;
  let t: Trader;
  let other: Trader;
  const eps: Json[] = [];

  /** Suspends (or re-suspends after a reactivation) an endpoint: 20 fresh dead letters. */
  async function suspend(ep: Json): Promise<void> {
    const ds: Json[] = [];
    for (let i = 0; i < 20; i++) ds.push(await sendTest(svc, t, ep.id));
    await until(
      () => getEndpoint(svc, t, ep.id),
      (e) => e.status === 'SUSPENDED',
      `${ep.id} SUSPENDED`,
    );
    expect((await deliveries(svc, t, ep.id, 'PENDING')).length).toBe(0);
  }

  async function page(path: string, key: Trader = t): Promise<Json> {
    const res = await as(key, `${svc.api}${path}`);
    expect(res.status).toBe(200);
    return res.body;
  }

  beforeAll(async () => {
    rx = await Receiver.start();
    rx.otherwise({ status: 500 });
    svc = await startWebhookApp({ env: { WEBHOOK_RETRY_SCHEDULE: '0' } });
    t = await hookUser(svc);
    other = await hookUser(svc);
    for (let i = 0; i < 3; i++) eps.push(await createEndpoint(svc, t, rx.url(`/n/${i}`)));
    // Five notifications: three suspensions, then the first endpoint twice more.
    for (const ep of eps) await suspend(ep);
    // (The streak counts dead letters after the reactivation instant, so the clock moves on first.)
    for (let i = 0; i < 2; i++) {
      expect((await post(svc, t, `/webhooks/${eps[0].id}/reactivate`)).status).toBe(200);
      advance(svc, 1_000);
      await suspend(eps[0]);
    }
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });

  it('GET /notifications/cursor pages newest first by keyset, stable while new notifications arrive', async () => {
    const all = await page('/notifications/cursor');
    expect(all.next_cursor).toBeNull();
    expect(all.data).toHaveLength(5);
    const ids = all.data.map((n: Json) => n.id as string);
    expect([...ids].sort().reverse()).toEqual(ids); // newest first
    expect(all.data.map((n: Json) => n.data.endpoint_id)).toEqual([
      eps[0].id,
      eps[0].id,
      eps[2].id,
      eps[1].id,
      eps[0].id,
    ]);
    for (const n of all.data) {
      expect(n).toEqual({
        id: expect.stringMatching(/^ntf_/),
        type: 'WEBHOOK_SUSPENDED',
        title: expect.any(String),
        body: expect.any(String),
        data: expect.objectContaining({ endpoint_id: expect.stringMatching(/^whe_/) }),
        // The endpoint's world (a test key's endpoint: the paper world).
        environment: 'test',
        created_at: expect.any(String),
        read_at: null,
      });
    }

    const p1 = await page('/notifications/cursor?limit=2');
    expect(p1.data.map((n: Json) => n.id)).toEqual(ids.slice(0, 2));
    expect(typeof p1.next_cursor).toBe('string');

    // A new notification arrives between pages (the second endpoint suspended again) ...
    expect((await post(svc, t, `/webhooks/${eps[1].id}/reactivate`)).status).toBe(200);
    advance(svc, 1_000);
    await suspend(eps[1]);

    // ... and the next pages carry on exactly where the first stopped.
    const p2 = await page(
      `/notifications/cursor?limit=2&cursor=${encodeURIComponent(p1.next_cursor)}`,
    );
    expect(p2.data.map((n: Json) => n.id)).toEqual(ids.slice(2, 4));
    const p3 = await page(
      `/notifications/cursor?limit=2&cursor=${encodeURIComponent(p2.next_cursor)}`,
    );
    expect(p3.data.map((n: Json) => n.id)).toEqual(ids.slice(4));
    expect(p3.next_cursor).toBeNull();

    const fresh = await page('/notifications/cursor?limit=1');
    expect(fresh.data[0].data.endpoint_id).toBe(eps[1].id);
    expect(fresh.data[0].id > ids[0]).toBe(true);

    // Another user sees none of them.
    expect((await page('/notifications/cursor', other)).data).toEqual([]);

    for (const q of ['limit=0', 'limit=201', 'limit=x']) {
      expectValidation(await as(t, `${svc.api}/notifications/cursor?${q}`), 'limit');
    }
  });

  it('the deprecated GET /notifications answers the same, with Deprecation @1778198400, no Sunset, and the successor Link', async () => {
    const legacy = await as(t, `${svc.api}/notifications?limit=3`);
    expect(legacy.status).toBe(200);
    expect(legacy.headers.get('deprecation')).toBe('@1778198400'); // 2026-05-08T00:00:00Z
    expect(legacy.headers.get('sunset')).toBeNull();
    expect(legacy.headers.get('link')).toBe(
      '</api/v1/notifications/cursor>; rel="successor-version"',
    );
    const current = await as(t, `${svc.api}/notifications/cursor?limit=3`);
    expect(legacy.body).toEqual(current.body);
    expect(current.headers.get('deprecation')).toBeNull();
    expect(current.headers.get('link')).toBeNull();
    // Errors of the deprecated route carry the headers too.
    const bad = await as(t, `${svc.api}/notifications?limit=0`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('deprecation')).toBe('@1778198400');
  });

  it('POST /notifications/{id}/read sets read_at once (service clock); ?unread=true leaves it out; others get 404', async () => {
    const [first, second] = (await page('/notifications/cursor?limit=2')).data;
    const readAt = svc.clock.nowDate().toISOString();
    const res = await post(svc, t, `/notifications/${first.id}/read`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...first, read_at: readAt });

    // Marking again keeps the first read_at.
    advance(svc, 60_000);
    expect((await post(svc, t, `/notifications/${first.id}/read`)).body.read_at).toBe(readAt);

    const unread = await page('/notifications/cursor?unread=true');
    expect(unread.data.map((n: Json) => n.id)).not.toContain(first.id);
    expect(unread.data.map((n: Json) => n.id)).toContain(second.id);
    expect(unread.data).toHaveLength(5);
    const everything = await page('/notifications/cursor');
    expect(everything.data.find((n: Json) => n.id === first.id).read_at).toBe(readAt);

    // A 404 names the id it did not find, as for markets and orders.
    expect(
      expectContractError(
        await post(svc, other, `/notifications/${second.id}/read`),
        404,
        'NOT_FOUND',
      ).details,
    ).toEqual({ notification_id: second.id });
    expect(
      expectContractError(await post(svc, t, `/notifications/ntf_nope/read`), 404, 'NOT_FOUND')
        .details,
    ).toEqual({ notification_id: 'ntf_nope' });
    // The other user's attempt changed nothing.
    expect(
      (await page('/notifications/cursor')).data.find((n: Json) => n.id === second.id).read_at,
    ).toBeNull();
  });

  it('scopes: notifications:read to list (both routes), notifications:write to mark read', async () => {
    const [n] = (await page('/notifications/cursor?limit=1&unread=true')).data;
    const reader = await keyFor(svc, t.email, t.token, {
      scopes: ['notifications:read'],
      environment: 'test',
    });
    const writer = await keyFor(svc, t.email, t.token, {
      scopes: ['notifications:write'],
      acknowledge_write_scopes: true,
      environment: 'test',
    });
    for (const path of ['/notifications/cursor', '/notifications']) {
      expect((await as(reader, `${svc.api}${path}`)).status).toBe(200);
      const err = expectContractError(
        await as(writer, `${svc.api}${path}`),
        403,
        'INSUFFICIENT_SCOPE',
      );
      expect(err.details.required_scopes).toEqual(['notifications:read']);
    }
    const err = expectContractError(
      await post(svc, reader, `/notifications/${n.id}/read`),
      403,
      'INSUFFICIENT_SCOPE',
    );
    expect(err.details.required_scopes).toEqual(['notifications:write']);
    const unchanged = (await page('/notifications/cursor')).data.find((x: Json) => x.id === n.id);
    expect(unchanged.read_at).toBeNull();
    const ok = await post(svc, writer, `/notifications/${n.id}/read`);
    expect(ok.status).toBe(200);
    expect(ok.body.read_at).toBe(svc.clock.nowDate().toISOString());
  });
});
