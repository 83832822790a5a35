import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Running } from '../support/harness.js';
import { as } from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import {
  advance,
  attempted,
  createEndpoint,
  deliveries,
  deliveryIn,
  hookUser,
  post,
  sendTest,
  sleep,
  startWebhookApp,
} from '../support/webhooks.js';

/**
 * Webhook endpoints of an ephemeral world: delivered like any other, each delivery due, retried
 * and dead-lettered on the world's own clock (POST /sandbox/clock with the world key), which
 * moves neither the paper world's deliveries nor the service clock.
 */
describe('webhooks of an ephemeral world run on the world clock', () => {
  let svc: Running;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    rx.otherwise({ status: 200 });
    svc = await startWebhookApp({ env: { SANDBOX_CLOCK_CONTROL: 'true' } });
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });

  it("a world's retries follow its clock only; the paper world's follow the service clock", async () => {
    const t = await hookUser(svc);
    const made = await post(svc, t, '/sandbox/worlds', { seed: 3 });
    expect(made.status).toBe(201);
    const wk = { key: made.body.key as string };
    const paperEp = await createEndpoint(svc, t, rx.url('/paper'));
    const worldEp = await createEndpoint(svc, wk, rx.url('/world'));
    for (const [k, ep] of [
      [t, paperEp],
      [wk, worldEp],
    ] as const) {
      const sim = await post(svc, k, `/webhooks/${ep.id}/simulate-failures`, {
        count: 5,
        mode: 'HTTP_500',
      });
      expect(sim.status).toBe(200);
    }
    const dp = await sendTest(svc, t, paperEp.id);
    const dw = await sendTest(svc, wk, worldEp.id);
    // The world's endpoint is attempted (its first attempt is due at once), as the paper one.
    await attempted(svc, t, paperEp.id, dp.id, 1);
    const first = await attempted(svc, wk, worldEp.id, dw.id, 1);
    expect(first).toMatchObject({ status: 'PENDING', response_status: 500 });

    // The world's clock moves past the retry (schedule 0,1,1): only the world's delivery retries.
    const serviceBefore = svc.clock.now();
    const moved = await post(svc, wk, '/sandbox/clock', { advance_seconds: 2 });
    expect(moved.status).toBe(200);
    expect(svc.clock.now()).toBe(serviceBefore);
    await attempted(svc, wk, worldEp.id, dw.id, 2);
    await sleep(200);
    expect((await deliveries(svc, t, paperEp.id))[0]).toMatchObject({ id: dp.id, attempts: 1 });
    // Once more: the world's delivery is dead-lettered at its last attempt, at the world's time.
    await post(svc, wk, '/sandbox/clock', { advance_seconds: 2 });
    const dead = await deliveryIn(svc, wk, worldEp.id, dw.id, 'DEAD_LETTERED');
    expect(dead.attempts).toBe(3);
    expect(Date.parse(dead.last_attempt_at)).toBeGreaterThanOrEqual(serviceBefore + 4000);
    expect((await deliveries(svc, t, paperEp.id))[0].attempts).toBe(1);

    // The event names its world; nothing reached the receiver (every attempt simulated).
    const detail = await as(wk, `${svc.api}/webhooks/${worldEp.id}/deliveries/${dw.id}`);
    expect(detail.status).toBe(200);
    expect(JSON.parse(detail.body.attempt_log[0].request.body)).toMatchObject({
      type: 'webhook.test',
      world_id: made.body.id,
    });
    expect(rx.at('/world')).toHaveLength(0);

    // The service clock still drives the paper world's retry.
    advance(svc, 2_000);
    await attempted(svc, t, paperEp.id, dp.id, 2);
  });
});
