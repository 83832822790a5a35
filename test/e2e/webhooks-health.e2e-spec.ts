import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Running } from '../support/harness.js';
import { as } from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import {
  advance,
  attempted,
  createEndpoint,
  DAY,
  deliveryIn,
  getEndpoint,
  health,
  HOUR,
  hookUser,
  sendTest,
  startWebhookApp,
  until,
  type Json,
} from '../support/webhooks.js';

/**
 * SPEC.md Endpoint health record and the summary fields of the list (and CONTRACT.md). Here
 * WEBHOOK_RETRY_SCHEDULE=0,60: a failing delivery is attempted at once and dead-lettered one
 * minute (plus jitter) later, so a test can hold a delivery in PENDING or finish it by moving the
 * clock. All figures come from the service clock.
 */
describe('webhooks: health record and list summary', () => {
  let svc: Running;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    svc = await startWebhookApp({ env: { WEBHOOK_RETRY_SCHEDULE: '0,60' } });
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });

  /** Sends a test event and waits for its terminal state. */
  async function deliver(t: Json, ep: Json, ok: boolean): Promise<Json> {
    rx.on(new URL(ep.url).pathname, { status: ok ? 200 : 500 });
    const d = await sendTest(svc, t, ep.id);
    if (ok) return deliveryIn(svc, t, ep.id, d.id, 'SUCCEEDED');
    await attempted(svc, t, ep.id, d.id, 1);
    advance(svc, 61_000 + 6_000);
    return deliveryIn(svc, t, ep.id, d.id, 'DEAD_LETTERED');
  }

  it('a new endpoint: every count 0, rates null (unknown, not 1.0), no timestamps; a PENDING delivery is not terminal', async () => {
    const t = await hookUser(svc);
    const ep = await createEndpoint(svc, t, rx.url('/h/new'));
    expect(await health(svc, t, ep.id)).toEqual({
      endpoint_id: ep.id,
      status: 'ACTIVE',
      succeeded_24h: 0,
      dead_letter_24h: 0,
      success_rate_24h: null,
      succeeded_7d: 0,
      dead_letter_7d: 0,
      success_rate_7d: null,
      consecutive_failures: 0,
      dlq_count: 0,
      last_success_at: null,
      last_failure_at: null,
      last_error: null,
      replays_24h: 0,
      suspended_at: null,
      suspension_reason: null,
    });
    // One failed attempt, retry pending: still no terminal delivery, so still null.
    rx.on('/h/new', { status: 503 });
    const d = await sendTest(svc, t, ep.id);
    await attempted(svc, t, ep.id, d.id, 1);
    const h = await health(svc, t, ep.id);
    expect(h).toMatchObject({
      success_rate_24h: null,
      success_rate_7d: null,
      dead_letter_24h: 0,
      consecutive_failures: 0,
      dlq_count: 0,
      last_failure_at: svc.clock.nowDate().toISOString(),
      last_error: 'HTTP 503',
    });

    // The list item carries the status and the four summary fields; no secret anywhere.
    const list = await as(t, `${svc.api}/webhooks`);
    expect(list.status).toBe(200);
    expect(list.body.next_cursor).toBeNull();
    expect(list.body.data).toEqual([
      {
        id: ep.id,
        url: rx.url('/h/new'),
        description: '',
        events: ['*'],
        environment: 'test',
        status: 'ACTIVE',
        secret_version: 1,
        previous_secret_expires_at: null,
        success_rate_24h: null,
        consecutive_failures: 0,
        dlq_count: 0,
        replays_24h: 0,
        created_at: ep.created_at,
        updated_at: ep.updated_at,
      },
    ]);
    expect(list.text).not.toContain(ep.secret);
    expect(JSON.stringify(await getEndpoint(svc, t, ep.id))).not.toContain(ep.secret);
  });

  it('rates, counts, streak and last_* follow the deliveries; the 24 h and 7 d windows move with the clock', async () => {
    const t = await hookUser(svc);
    const ep = await createEndpoint(svc, t, rx.url('/h/win'));
    const s1 = await deliver(t, ep, true);
    let h = await health(svc, t, ep.id);
    expect(h).toMatchObject({
      succeeded_24h: 1,
      dead_letter_24h: 0,
      success_rate_24h: 1,
      success_rate_7d: 1,
      last_success_at: s1.last_attempt_at,
      last_failure_at: null,
      last_error: null,
    });

    advance(svc, 2 * DAY); // s1 leaves the 24 h window, stays in the 7 d one
    const f1 = await deliver(t, ep, false);
    const f2 = await deliver(t, ep, false);
    h = await health(svc, t, ep.id);
    expect(h).toMatchObject({
      succeeded_24h: 0,
      dead_letter_24h: 2,
      success_rate_24h: 0,
      succeeded_7d: 1,
      dead_letter_7d: 2,
      consecutive_failures: 2,
      dlq_count: 2,
      last_success_at: s1.last_attempt_at,
      last_failure_at: f2.last_attempt_at,
      last_error: 'HTTP 500',
    });
    expect(h.success_rate_7d).toBeCloseTo(1 / 3, 10);
    expect(f1.last_attempt_at < f2.last_attempt_at).toBe(true);

    const s2 = await deliver(t, ep, true);
    const f3 = await deliver(t, ep, false);
    h = await health(svc, t, ep.id);
    expect(h).toMatchObject({
      succeeded_24h: 1,
      dead_letter_24h: 3,
      success_rate_24h: 0.25,
      succeeded_7d: 2,
      dead_letter_7d: 3,
      success_rate_7d: 0.4,
      consecutive_failures: 1, // only f3 is newer than the latest success
      dlq_count: 3,
      last_success_at: s2.last_attempt_at,
      last_failure_at: f3.last_attempt_at,
      last_error: 'HTTP 500',
      replays_24h: 0,
    });
    const item = async () =>
      ((await as(t, `${svc.api}/webhooks`)).body.data as Json[]).find((e) => e.id === ep.id);
    expect(await item()).toMatchObject({
      status: 'ACTIVE',
      success_rate_24h: 0.25,
      consecutive_failures: 1,
      dlq_count: 3,
      replays_24h: 0,
    });

    // 25 h later the 24 h window is empty again: null, not 1.0 and not 0; the 7 d one still holds all.
    advance(svc, 25 * HOUR);
    h = await health(svc, t, ep.id);
    expect(h).toMatchObject({
      succeeded_24h: 0,
      dead_letter_24h: 0,
      success_rate_24h: null,
      succeeded_7d: 2,
      dead_letter_7d: 3,
      success_rate_7d: 0.4,
      consecutive_failures: 1,
      dlq_count: 3, // the dead-letter count is not windowed
      last_success_at: s2.last_attempt_at,
      last_error: 'HTTP 500',
    });
    expect((await item()).success_rate_24h).toBeNull();

    // s1 was 2 d + 25 h ago; after 5 more days it has left the 7 d window but the rest has not.
    advance(svc, 5 * DAY - 2 * HOUR);
    h = await health(svc, t, ep.id);
    expect(h).toMatchObject({ succeeded_7d: 1, dead_letter_7d: 3, success_rate_7d: 0.25 });
    // And 8 days on, nothing is left in either window.
    advance(svc, 8 * DAY);
    h = await health(svc, t, ep.id);
    expect(h).toMatchObject({
      succeeded_24h: 0,
      dead_letter_24h: 0,
      success_rate_24h: null,
      succeeded_7d: 0,
      dead_letter_7d: 0,
      success_rate_7d: null,
      dlq_count: 3,
      consecutive_failures: 1,
    });
  });

  it('the health of an endpoint is its owner’s: another user gets 404 NOT_FOUND', async () => {
    const t = await hookUser(svc);
    const other = await hookUser(svc);
    const ep = await createEndpoint(svc, t, rx.url('/h/own'));
    for (const path of [
      `/webhooks/${ep.id}/health`,
      `/webhooks/${ep.id}`,
      `/webhooks/${ep.id}/deliveries`,
    ]) {
      const res = await as(other, `${svc.api}${path}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    await until(
      async () => (await as(other, `${svc.api}/webhooks`)).body.data as Json[],
      (d) => d.length === 0,
      'other user sees no endpoint',
    );
  });
});

/** CONTRACT.md: WEBHOOK_RETRY_SCHEDULE is the delays in seconds before each attempt, the first too. */
describe('webhooks: the first entry of WEBHOOK_RETRY_SCHEDULE delays the first attempt', () => {
  let svc: Running;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    svc = await startWebhookApp({ env: { WEBHOOK_RETRY_SCHEDULE: '5,60' } });
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });

  it('schedule 5,60: nothing is sent before 5 s of service time, then the delivery goes', async () => {
    const t = await hookUser(svc);
    const ep = await createEndpoint(svc, t, rx.url('/h/later'));
    rx.on('/h/later', { status: 200 });
    const d = await sendTest(svc, t, ep.id);
    const pending = await deliveryIn(svc, t, ep.id, d.id, 'PENDING');
    expect(pending.attempts).toBe(0);
    expect(pending.next_attempt_at).toBe(new Date(svc.clock.now() + 5000).toISOString());
    await new Promise((r) => setTimeout(r, 400));
    expect(rx.at('/h/later')).toHaveLength(0);
    advance(svc, 4_000);
    await new Promise((r) => setTimeout(r, 400));
    expect(rx.at('/h/later')).toHaveLength(0);
    advance(svc, 1_000);
    await deliveryIn(svc, t, ep.id, d.id, 'SUCCEEDED');
    expect(rx.at('/h/later')).toHaveLength(1);
  });
});
