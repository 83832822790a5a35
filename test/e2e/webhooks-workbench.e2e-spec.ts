import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { outbox } from '../support/access.js';
import { expectContractError, type Running } from '../support/harness.js';
import { as, keyFor, type Trader } from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import {
  advance,
  attempted,
  createEndpoint,
  deliveries,
  deliveryIn,
  health,
  HOOK_SCOPES,
  hookUser,
  post,
  sendTest,
  sleep,
  startWebhookApp,
  until,
  type Json,
} from '../support/webhooks.js';

const ms = (iso: string) => Date.parse(iso);

/**
 * The webhook workbench (CONTRACT.md): simulated failures drive the whole failure path of a test
 * endpoint whose receiver is healthy (it answers 200 to everything), and every step answers with
 * the statuses and fields the real-failure tests assert (webhooks-delivery, -health, -suspension):
 * retries on the 0,1,1 schedule (moved by the service clock), the dead letter, health, automatic
 * suspension, the held queue, reactivation and replay once the failures are cleared. The receiver
 * gets no request while failures are simulated.
 */
describe('webhooks workbench: simulated failures drive retries, dead letters, health, suspension and replay', () => {
  let svc: Running;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    rx.otherwise({ status: 200 });
    svc = await startWebhookApp();
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });

  const simulate = (t: Trader, id: string, count: number, mode = 'HTTP_500') =>
    post(svc, t, `/webhooks/${id}/simulate-failures`, { count, mode });
  const pending = async (t: Trader, id: string): Promise<Json> => {
    const res = await as(t, `${svc.api}/webhooks/${id}/simulate-failures`);
    expect(res.status).toBe(200);
    return res.body;
  };
  const clear = (t: Trader, id: string) =>
    as(t, `${svc.api}/webhooks/${id}/simulate-failures`, { method: 'DELETE' });

  it('HTTP_500: three attempts on the schedule, the dead letter and its health, no request sent; a second call replaces; replay after clearing succeeds', async () => {
    const t = await hookUser(svc);
    const ep = await createEndpoint(svc, t, rx.url('/wb/a'));
    expect(await pending(t, ep.id)).toEqual({ endpoint_id: ep.id, pending: 0, mode: null });

    // A second call replaces the pending count and mode; it does not add.
    let res = await simulate(t, ep.id, 7, 'TIMEOUT');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ endpoint_id: ep.id, pending: 7, mode: 'TIMEOUT' });
    res = await simulate(t, ep.id, 4, 'HTTP_500');
    expect(res.body).toEqual({ endpoint_id: ep.id, pending: 4, mode: 'HTTP_500' });

    const t0 = svc.clock.now();
    const d = await sendTest(svc, t, ep.id);
    expect(d).toMatchObject({ status: 'PENDING', attempts: 0, is_replay: false });
    const first = await attempted(svc, t, ep.id, d.id, 1);
    expect(first).toMatchObject({
      status: 'PENDING',
      attempts: 1,
      response_status: 500,
      last_error: 'HTTP 500',
      last_attempt_at: new Date(t0).toISOString(),
    });
    const wait = ms(first.next_attempt_at) - t0;
    expect(wait).toBeGreaterThanOrEqual(1000);
    expect(wait).toBeLessThanOrEqual(1100);
    expect((await pending(t, ep.id)).pending).toBe(3);

    // Not before it is due ...
    advance(svc, 900);
    await sleep(150);
    expect((await deliveries(svc, t, ep.id))[0].attempts).toBe(1);
    // ... then the second and third attempts, and the dead letter.
    advance(svc, 300);
    await attempted(svc, t, ep.id, d.id, 2);
    advance(svc, 1_200);
    const dead = await deliveryIn(svc, t, ep.id, d.id, 'DEAD_LETTERED');
    expect(dead).toMatchObject({
      attempts: 3,
      response_status: 500,
      last_error: 'HTTP 500',
      next_attempt_at: null,
    });
    advance(svc, 3_600_000);
    await sleep(150);
    expect(await health(svc, t, ep.id)).toMatchObject({
      status: 'ACTIVE',
      dlq_count: 1,
      dead_letter_24h: 1,
      succeeded_24h: 0,
      success_rate_24h: 0,
      consecutive_failures: 1,
      last_error: 'HTTP 500',
      last_failure_at: dead.last_attempt_at,
      last_success_at: null,
    });
    // The healthy receiver never heard of it.
    expect(rx.at('/wb/a')).toHaveLength(0);
    expect((await deliveries(svc, t, ep.id))[0].attempts).toBe(3);
    expect(await pending(t, ep.id)).toEqual({ endpoint_id: ep.id, pending: 1, mode: 'HTTP_500' });

    // Cleared: the replay reaches the receiver and succeeds, ending the streak.
    const cleared = await clear(t, ep.id);
    expect(cleared.status).toBe(200);
    expect(cleared.body).toEqual({ endpoint_id: ep.id, pending: 0, mode: null });
    const replay = await post(svc, t, `/webhooks/${ep.id}/deliveries/${d.id}/replay`);
    expect(replay.status).toBe(202);
    expect(replay.body).toMatchObject({ is_replay: true, replay_of: d.id, event_id: d.event_id });
    const done = await deliveryIn(svc, t, ep.id, replay.body.id, 'SUCCEEDED');
    expect(done).toMatchObject({ attempts: 1, response_status: 200, last_error: null });
    const [arrival] = await rx.waitFor('/wb/a', 1);
    expect(arrival.headers['svc-webhook-id']).toBe(replay.body.id);
    expect(arrival.json.id).toBe(d.event_id);
    expect(await health(svc, t, ep.id)).toMatchObject({
      consecutive_failures: 0,
      succeeded_24h: 0,
      dead_letter_24h: 1,
      replays_24h: 1,
      dlq_count: 1,
      last_success_at: done.last_attempt_at,
    });
  });

  it('20 dead letters and no success: SUSPENDED with the notice, new events HELD; the failures used up and the endpoint reactivated, the held queue and the replays reach the receiver', async () => {
    const t = await hookUser(svc);
    const ep = await createEndpoint(svc, t, rx.url('/wb/susp'));
    // 20 deliveries x 3 attempts.
    expect((await simulate(t, ep.id, 60)).body.pending).toBe(60);
    const ds: Json[] = [];
    for (let i = 0; i < 20; i++) ds.push(await sendTest(svc, t, ep.id));
    const allAttempted = (n: number) =>
      until(
        () => deliveries(svc, t, ep.id),
        (all) => ds.every((d) => all.some((x: Json) => x.id === d.id && x.attempts >= n)),
        `20 deliveries with ${n} attempt(s)`,
      );
    await allAttempted(1);
    advance(svc, 1_200);
    await allAttempted(2);
    advance(svc, 1_200);
    const h = await until(
      () => health(svc, t, ep.id),
      (x) => x.status === 'SUSPENDED',
      'SUSPENDED',
    );
    expect(h).toMatchObject({
      status: 'SUSPENDED',
      consecutive_failures: 20,
      dlq_count: 20,
      dead_letter_24h: 20,
      success_rate_24h: 0,
      last_error: 'HTTP 500',
      suspended_at: svc.clock.nowDate().toISOString(),
    });
    expect(h.suspension_reason).toMatch(/20 consecutive deliveries dead-lettered/);
    expect((await pending(t, ep.id)).pending).toBe(0);
    expect(rx.at('/wb/susp')).toHaveLength(0);

    // The owner's notice, as for a real failing receiver.
    const notes = await as(t, `${svc.api}/notifications/cursor`);
    expect(notes.body.data).toHaveLength(1);
    expect(notes.body.data[0]).toMatchObject({
      type: 'WEBHOOK_SUSPENDED',
      data: expect.objectContaining({ endpoint_id: ep.id, consecutive_failures: 20 }),
    });
    await until(
      () => outbox(svc, t.email).filter((m) => m.kind === 'WEBHOOK_SUSPENDED'),
      (m) => m.length === 1,
      'the suspension email',
    );

    // Held while suspended: not attempted, not dropped.
    const late = await sendTest(svc, t, ep.id);
    expect(late.status).toBe('HELD');
    advance(svc, 60_000);
    await sleep(150);
    expect(rx.at('/wb/susp')).toHaveLength(0);

    // Reactivated: the held delivery reaches the receiver; replays of the dead letters succeed.
    const re = await post(svc, t, `/webhooks/${ep.id}/reactivate`);
    expect(re.status).toBe(200);
    expect(re.body).toMatchObject({ id: ep.id, status: 'ACTIVE', consecutive_failures: 0 });
    await deliveryIn(svc, t, ep.id, late.id, 'SUCCEEDED');
    const replays: Json[] = [];
    for (const d of ds.slice(0, 3)) {
      const r = await post(svc, t, `/webhooks/${ep.id}/deliveries/${d.id}/replay`);
      expect(r.status).toBe(202);
      replays.push(r.body);
    }
    for (const r of replays) await deliveryIn(svc, t, ep.id, r.id, 'SUCCEEDED');
    const got = await rx.waitFor('/wb/susp', 4);
    expect(got.map((r) => r.headers['svc-webhook-id']).sort()).toEqual(
      [late.id, ...replays.map((r) => r.id)].sort(),
    );
    expect(await health(svc, t, ep.id)).toMatchObject({
      status: 'ACTIVE',
      consecutive_failures: 0,
      dlq_count: 20,
      replays_24h: 3,
      suspended_at: null,
    });
  });

  it('TIMEOUT and CONNECTION_REFUSED fail as a silent or absent receiver would; the attempt log names them', async () => {
    const t = await hookUser(svc);
    const ep = await createEndpoint(svc, t, rx.url('/wb/net'));
    await simulate(t, ep.id, 1, 'TIMEOUT');
    const d = await sendTest(svc, t, ep.id);
    const a1 = await attempted(svc, t, ep.id, d.id, 1);
    expect(a1).toMatchObject({
      status: 'PENDING',
      response_status: null,
      last_error: 'no response within 10000 ms',
    });
    await simulate(t, ep.id, 1, 'CONNECTION_REFUSED');
    advance(svc, 1_200);
    const a2 = await attempted(svc, t, ep.id, d.id, 2);
    expect(a2).toMatchObject({
      status: 'PENDING',
      response_status: null,
      last_error: `connect ECONNREFUSED 127.0.0.1:${rx.port}`,
    });
    expect(rx.at('/wb/net')).toHaveLength(0);
    expect(await health(svc, t, ep.id)).toMatchObject({
      last_error: `connect ECONNREFUSED 127.0.0.1:${rx.port}`,
    });
    // The failures used up, the third attempt reaches the receiver.
    advance(svc, 1_200);
    await deliveryIn(svc, t, ep.id, d.id, 'SUCCEEDED');
    expect(rx.at('/wb/net')).toHaveLength(1);

    const detail = await as(t, `${svc.api}/webhooks/${ep.id}/deliveries/${d.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ id: d.id, status: 'SUCCEEDED', attempts: 3 });
    const log = detail.body.attempt_log as Json[];
    expect(log.map((a) => [a.number, a.outcome, a.simulated])).toEqual([
      [1, 'TIMEOUT', true],
      [2, 'CONNECTION_REFUSED', true],
      [3, 'SUCCEEDED', false],
    ]);
    expect(log[0]).toMatchObject({ response: null, error: 'no response within 10000 ms' });
    expect(log[1]).toMatchObject({
      response: null,
      error: `connect ECONNREFUSED 127.0.0.1:${rx.port}`,
    });
    expect(log[2]).toMatchObject({
      response: { status: 200, body: 'ok', body_truncated: false },
      error: null,
    });
  });

  it('a live endpoint takes no simulated failures and no business samples: 403 LIVE_KEY_SANDBOX_ENDPOINT, nothing changes', async () => {
    const t = await hookUser(svc);
    const owner = await keyFor(svc, t.email, t.token, {
      environment: 'live',
      scopes: HOOK_SCOPES,
    });
    const ep = await createEndpoint(svc, owner, rx.url('/wb/live'));
    expect(ep.environment).toBe('live');
    expectContractError(await simulate(owner, ep.id, 3), 403, 'LIVE_KEY_SANDBOX_ENDPOINT');
    expectContractError(
      await as(owner, `${svc.api}/webhooks/${ep.id}/simulate-failures`, { method: 'DELETE' }),
      403,
      'LIVE_KEY_SANDBOX_ENDPOINT',
    );
    const sample = expectContractError(
      await post(svc, owner, `/webhooks/${ep.id}/test`, { type: 'order.filled' }),
      403,
      'LIVE_KEY_SANDBOX_ENDPOINT',
    );
    expect(sample.details).toMatchObject({ type: 'order.filled' });
    // The owner's test key does not see the live endpoint at all.
    const testKey = await keyFor(svc, t.email, t.token, {
      environment: 'test',
      scopes: HOOK_SCOPES,
    });
    expectContractError(await simulate(testKey, ep.id, 3), 404, 'NOT_FOUND');
    expect(await deliveries(svc, owner, ep.id)).toHaveLength(0);
    // The ping still works on a live endpoint, and reaches the receiver (nothing was simulated).
    const ping = await post(svc, owner, `/webhooks/${ep.id}/test`, { type: 'webhook.test' });
    expect(ping.status).toBe(202);
    const done = await deliveryIn(svc, owner, ep.id, ping.body.id, 'SUCCEEDED');
    expect(done.attempts).toBe(1);
    expect(rx.at('/wb/live')).toHaveLength(1);
  });
});
