import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { outbox } from '../support/access.js';
import { expectContractError, type Running } from '../support/harness.js';
import { as, type Trader } from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import {
  advance,
  attempted,
  createEndpoint,
  deliveries,
  DAY,
  deliveryIn,
  health,
  HOUR,
  hookUser,
  post,
  sendTest,
  sleep,
  startWebhookApp,
  until,
  type Json,
} from '../support/webhooks.js';

/** Jitter is at most 10% of a delay and never more than 30 s. */
const RETRY = HOUR + 31_000;

/**
 * SPEC.md States and transitions (Webhook endpoint): automatic suspension needs BOTH 20
 * consecutive dead-lettered originals AND no successful delivery in 24 hours. Here
 * WEBHOOK_RETRY_SCHEDULE=0,3600: a failing delivery is attempted at once, again an hour later, and
 * then dead-lettered, so deliveries can be held "queued" (PENDING between attempts) at the moment
 * of suspension. Every time rule follows the service clock.
 */
describe('webhooks: automatic suspension, held queue, notices and reactivation', () => {
  let svc: Running;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    svc = await startWebhookApp({ env: { WEBHOOK_RETRY_SCHEDULE: '0,3600' } });
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });

  /** Sends n test events and waits until each has had its first (failed) attempt. */
  async function failing(t: Trader, ep: Json, n: number): Promise<Json[]> {
    const ds: Json[] = [];
    for (let i = 0; i < n; i++) ds.push(await sendTest(svc, t, ep.id));
    await until(
      () => deliveries(svc, t, ep.id),
      (all) => ds.every((d) => all.some((x: Json) => x.id === d.id && x.attempts >= 1)),
      `${n} first attempts`,
    );
    return ds;
  }

  async function status(t: Trader, id: string): Promise<string> {
    return (await health(svc, t, id)).status as string;
  }

  it('19 dead letters: ACTIVE; the 20th with no success for 24 h: SUSPENDED; queue held; notification and a truncated-URL email; reactivate drains it', async () => {
    const t = await hookUser(svc);
    const path = '/susp/a/customer-4711/webhooks/receiver-endpoint-with-a-long-path';
    const url = `${rx.url(path)}?token=s3cr3t-query-value`;
    let answer = 200;
    rx.on(path, () => ({ status: answer }));
    const ep = await createEndpoint(svc, t, url);

    // A success, then a day and a minute of nothing.
    const ok = await sendTest(svc, t, ep.id);
    const s0 = await deliveryIn(svc, t, ep.id, ok.id, 'SUCCEEDED');
    advance(svc, DAY + 60_000);
    answer = 500;

    // 19 originals dead-lettered: still ACTIVE, however many worker passes go by.
    await failing(t, ep, 19);
    advance(svc, RETRY);
    let h = await until(
      () => health(svc, t, ep.id),
      (x) => x.dlq_count === 19,
      '19 dead letters',
    );
    expect(h).toMatchObject({
      status: 'ACTIVE',
      consecutive_failures: 19,
      last_success_at: s0.last_attempt_at,
      suspended_at: null,
    });
    await sleep(200);
    expect(await status(t, ep.id)).toBe('ACTIVE');

    // The 20th: its second attempt is due first; two more are queued (PENDING, second attempt later).
    const [twentieth] = await failing(t, ep, 1);
    advance(svc, 30 * 60_000);
    const queued = await failing(t, ep, 2);
    const arrivedBefore = rx.at(path).length;
    advance(svc, 31 * 60_000 + 31_000); // the 20th is due, the two queued ones are not
    await deliveryIn(svc, t, ep.id, twentieth.id, 'DEAD_LETTERED');
    h = await until(
      () => health(svc, t, ep.id),
      (x) => x.status === 'SUSPENDED',
      'SUSPENDED',
    );
    const suspendedAt = h.suspended_at as string;
    expect(h).toMatchObject({
      status: 'SUSPENDED',
      consecutive_failures: 20,
      dlq_count: 20,
      suspended_at: svc.clock.nowDate().toISOString(),
    });
    expect(h.suspension_reason).toMatch(/20 consecutive deliveries dead-lettered/);
    expect(h.suspension_reason).toMatch(/24 hours/);
    expect(rx.at(path).length).toBe(arrivedBefore + 1);

    // Queued deliveries are held: not attempted, not dropped; new events are held too.
    const late = await sendTest(svc, t, ep.id);
    expect(late.status).toBe('HELD');
    const held = await deliveries(svc, t, ep.id, 'HELD');
    expect(held.map((d: Json) => d.id).sort()).toEqual(
      [...queued.map((d) => d.id), late.id].sort(),
    );
    expect(held.every((d: Json) => d.next_attempt_at === null)).toBe(true);
    const seen = rx.at(path).length;
    advance(svc, 3 * RETRY);
    await sleep(250);
    expect(rx.at(path).length).toBe(seen);
    expect(await deliveries(svc, t, ep.id, 'HELD')).toHaveLength(3);
    const listed = ((await as(t, `${svc.api}/webhooks`)).body.data as Json[]).find(
      (e) => e.id === ep.id,
    );
    expect(listed).toMatchObject({ status: 'SUSPENDED', consecutive_failures: 20, dlq_count: 20 });

    // The owner's in-app notification.
    const notes = await as(t, `${svc.api}/notifications/cursor`);
    expect(notes.status).toBe(200);
    expect(notes.body.data).toHaveLength(1);
    const note = notes.body.data[0];
    expect(note).toMatchObject({
      id: expect.stringMatching(/^ntf_/),
      type: 'WEBHOOK_SUSPENDED',
      data: expect.objectContaining({ endpoint_id: ep.id, consecutive_failures: 20 }),
      created_at: suspendedAt,
      read_at: null,
    });

    // The email: scheme, host and a truncated path; never the full URL, the rest of the path,
    // the query or the secret.
    const mails = await until(
      () => outbox(svc, t.email).filter((m) => m.kind === 'WEBHOOK_SUSPENDED'),
      (m) => m.length === 1,
      'the suspension email',
    );
    const body = `${mails[0].subject}\n${mails[0].body}`;
    const origin = `http://127.0.0.1:${rx.port}`;
    expect(body).toContain(`${origin}/susp/a/`);
    expect(body).toContain(ep.id);
    for (const text of [JSON.stringify(note), body]) {
      expect(text).not.toContain(url);
      expect(text).not.toContain(rx.url(path));
      expect(text).not.toContain('customer-4711');
      expect(text).not.toContain('long-path');
      expect(text).not.toContain('s3cr3t-query-value');
      expect(text).not.toContain(ep.secret);
      expect(text).not.toContain(ep.secret.slice(6));
    }

    // Reactivate, while the endpoint still fails: ACTIVE, suspension cleared, streak baseline reset.
    const re = await post(svc, t, `/webhooks/${ep.id}/reactivate`);
    expect(re.status).toBe(200);
    expect(re.body).toMatchObject({ id: ep.id, status: 'ACTIVE', consecutive_failures: 0 });
    // The held queue drains to the receiver at once.
    const drained = await rx.waitFor(path, seen + 3);
    expect(
      drained
        .slice(seen)
        .map((r) => r.headers['svc-webhook-id'])
        .sort(),
    ).toEqual(held.map((d: Json) => d.id).sort());
    await until(
      () => deliveries(svc, t, ep.id, 'HELD'),
      (d) => d.length === 0,
      'no HELD delivery left',
    );
    // The two that had been attempted before are dead letters now (at the instant of the
    // reactivation: the manual clock has not moved), the third is waiting for its retry. The old
    // backlog (20 dead letters, no success for more than 24 h) does not re-suspend: the streak
    // counts from the reactivation.
    await deliveryIn(svc, t, ep.id, queued[0].id, 'DEAD_LETTERED');
    await deliveryIn(svc, t, ep.id, queued[1].id, 'DEAD_LETTERED');
    await attempted(svc, t, ep.id, late.id, 1);
    await sleep(200);
    h = await health(svc, t, ep.id);
    expect(h).toMatchObject({
      status: 'ACTIVE',
      consecutive_failures: 0,
      dlq_count: 22,
      suspended_at: null,
      suspension_reason: null,
    });

    // Reactivating an ACTIVE endpoint: 409 WEBHOOK_NOT_SUSPENDED.
    const again = expectContractError(
      await post(svc, t, `/webhooks/${ep.id}/reactivate`),
      409,
      'WEBHOOK_NOT_SUSPENDED',
    );
    expect(again.details).toMatchObject({ status: 'ACTIVE' });

    // New failures after the reactivation do count.
    advance(svc, RETRY);
    await deliveryIn(svc, t, ep.id, late.id, 'DEAD_LETTERED');
    await sleep(100);
    expect(await health(svc, t, ep.id)).toMatchObject({
      status: 'ACTIVE',
      consecutive_failures: 1,
      dlq_count: 23,
    });

    // The endpoint recovers: a success ends the streak.
    answer = 200;
    await deliveryIn(svc, t, ep.id, (await sendTest(svc, t, ep.id)).id, 'SUCCEEDED');
    expect(await health(svc, t, ep.id)).toMatchObject({
      status: 'ACTIVE',
      consecutive_failures: 0,
    });
  });

  it('20 dead letters with a success 23 h earlier: still ACTIVE; it suspends at the first worker pass after that success is 24 h old', async () => {
    const t = await hookUser(svc);
    let answer = 200;
    rx.on('/susp/b', () => ({ status: answer }));
    const ep = await createEndpoint(svc, t, rx.url('/susp/b'));
    const ok = await sendTest(svc, t, ep.id);
    const s0 = await deliveryIn(svc, t, ep.id, ok.id, 'SUCCEEDED');
    const success = Date.parse(s0.last_attempt_at);

    // Failures start 22 h later; their second attempts (dead letters) land at 23 h.
    advance(svc, 22 * HOUR - 31_000);
    answer = 500;
    await failing(t, ep, 20);
    advance(svc, RETRY);
    const h = await until(
      () => health(svc, t, ep.id),
      (x) => x.dlq_count === 20,
      '20 dead letters',
    );
    expect(svc.clock.now() - success).toBe(23 * HOUR);
    expect(h).toMatchObject({ status: 'ACTIVE', consecutive_failures: 20, suspended_at: null });
    await sleep(200);
    expect(await status(t, ep.id)).toBe('ACTIVE');

    // 23 h 59 min: still a success within 24 h.
    advance(svc, 59 * 60_000);
    await sleep(200);
    expect(await status(t, ep.id)).toBe('ACTIVE');

    // Past 24 h, with no new delivery at all: the worker's next pass suspends it.
    advance(svc, 2 * 60_000);
    const s = await until(
      () => health(svc, t, ep.id),
      (x) => x.status === 'SUSPENDED',
      'SUSPENDED',
      2_000,
    );
    expect(s.suspended_at).toBe(svc.clock.nowDate().toISOString());
    expect(s.last_success_at).toBe(s0.last_attempt_at);
  });

  it('a brief outage on a busy endpoint never suspends it: a success within 24 h, however many failures', async () => {
    const t = await hookUser(svc);
    let answer = 500;
    rx.on('/susp/c', () => ({ status: answer }));
    const ep = await createEndpoint(svc, t, rx.url('/susp/c'));
    answer = 200;
    await deliveryIn(svc, t, ep.id, (await sendTest(svc, t, ep.id)).id, 'SUCCEEDED');
    answer = 500;
    await failing(t, ep, 25);
    advance(svc, RETRY);
    await until(
      () => health(svc, t, ep.id),
      (x) => x.dlq_count === 25,
      '25 dead letters',
    );
    await sleep(200);
    expect(await health(svc, t, ep.id)).toMatchObject({
      status: 'ACTIVE',
      consecutive_failures: 25,
    });
    // It recovers: the streak ends and the endpoint was never suspended.
    answer = 200;
    await deliveryIn(svc, t, ep.id, (await sendTest(svc, t, ep.id)).id, 'SUCCEEDED');
    expect(await health(svc, t, ep.id)).toMatchObject({
      status: 'ACTIVE',
      consecutive_failures: 0,
      suspended_at: null,
    });
    expect(outbox(svc, t.email).filter((m) => m.kind === 'WEBHOOK_SUSPENDED')).toHaveLength(0);
  });
});
