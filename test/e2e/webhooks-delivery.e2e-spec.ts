import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { expectContractError, type Running } from '../support/harness.js';
import { as, limit, place, TRADABLE } from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import {
  advance,
  attempted,
  createEndpoint,
  deliveries,
  deliveryIn,
  health,
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
 * The delivery worker (CONTRACT.md Developer webhooks): WEBHOOK_RETRY_SCHEDULE=0,1,1 (three
 * attempts, 0 s, 1 s and 1 s apart, plus up to 10% jitter), dead-lettering after the last one,
 * 3xx as failure, Retry-After on 429/503, a per-attempt timeout (WEBHOOK_TIMEOUT_MS=300 in its own block) that
 * never holds back other endpoints, and replay of dead letters. Retries are driven by advancing
 * the service clock; the worker polls every 20 ms of wall time.
 */
describe('webhooks: retries, dead letters, redirects, Retry-After, timeouts and replay', () => {
  let svc: Running;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    // A generous per-attempt timeout: these tests assert each attempt's answer, and a loaded CI
    // machine must not turn a 302 or a 500 into a timeout. The timeout itself is tested below.
    svc = await startWebhookApp({ env: { WEBHOOK_TIMEOUT_MS: '10000' } });
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });

  it('a failing endpoint gets exactly three attempts on the 0,1,1 schedule, then the delivery is dead-lettered', async () => {
    const t = await hookUser(svc);
    rx.on('/d/fail', { status: 500 });
    const ep = await createEndpoint(svc, t, rx.url('/d/fail'));
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
    // The next attempt is 1 s later, plus at most 10% jitter.
    const wait = ms(first.next_attempt_at) - t0;
    expect(wait).toBeGreaterThanOrEqual(1000);
    expect(wait).toBeLessThanOrEqual(1100);

    // Not before it is due ...
    advance(svc, 900);
    await sleep(150);
    expect(rx.at('/d/fail')).toHaveLength(1);
    // ... then the second and third attempts.
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
    const got = rx.at('/d/fail');
    expect(got).toHaveLength(3);
    expect(new Set(got.map((r) => r.headers['svc-webhook-id']))).toEqual(new Set([d.id]));

    // Dead means dead: no fourth attempt however long we wait.
    advance(svc, 3_600_000);
    await sleep(150);
    expect(rx.at('/d/fail')).toHaveLength(3);
    expect(await health(svc, t, ep.id)).toMatchObject({
      dlq_count: 1,
      dead_letter_24h: 1,
      succeeded_24h: 0,
      success_rate_24h: 0,
      consecutive_failures: 1,
      last_error: 'HTTP 500',
      last_failure_at: dead.last_attempt_at,
      last_success_at: null,
    });
  });

  it('a 3xx answer is a failure and is never followed', async () => {
    const t = await hookUser(svc);
    rx.on('/d/redirect', { status: 302, location: rx.url('/d/landing') });
    rx.on('/d/moved', { status: 308, location: rx.url('/d/landing') });
    const a = await createEndpoint(svc, t, rx.url('/d/redirect'));
    const b = await createEndpoint(svc, t, rx.url('/d/moved'));
    const da = await sendTest(svc, t, a.id);
    const db = await sendTest(svc, t, b.id);
    await attempted(svc, t, a.id, da.id, 1);
    await attempted(svc, t, b.id, db.id, 1);
    advance(svc, 1_200);
    await attempted(svc, t, a.id, da.id, 2);
    await attempted(svc, t, b.id, db.id, 2);
    advance(svc, 1_200);
    const deadA = await deliveryIn(svc, t, a.id, da.id, 'DEAD_LETTERED');
    const deadB = await deliveryIn(svc, t, b.id, db.id, 'DEAD_LETTERED');
    expect(deadA).toMatchObject({ attempts: 3, response_status: 302 });
    expect(deadA.last_error).toMatch(/redirect 302 not followed/);
    expect(deadB).toMatchObject({ attempts: 3, response_status: 308 });
    expect(rx.at('/d/redirect')).toHaveLength(3);
    expect(rx.at('/d/moved')).toHaveLength(3);
    expect(rx.at('/d/landing')).toHaveLength(0);
  });

  it('429 and 503 with Retry-After: the next attempt is not earlier than Retry-After; Retry-After on a 500 is ignored', async () => {
    const t = await hookUser(svc);
    let n429 = 0;
    let n503 = 0;
    rx.on('/d/429', () => (++n429 === 1 ? { status: 429, retryAfter: '120' } : { status: 200 }));
    rx.on('/d/503', () => (++n503 === 1 ? { status: 503, retryAfter: '30' } : { status: 200 }));
    rx.on('/d/500', { status: 500, retryAfter: '600' });
    const e429 = await createEndpoint(svc, t, rx.url('/d/429'));
    const e503 = await createEndpoint(svc, t, rx.url('/d/503'));
    const e500 = await createEndpoint(svc, t, rx.url('/d/500'));
    const t0 = svc.clock.now();
    const d429 = await sendTest(svc, t, e429.id);
    const d503 = await sendTest(svc, t, e503.id);
    const d500 = await sendTest(svc, t, e500.id);

    const a = await attempted(svc, t, e429.id, d429.id, 1);
    expect(a).toMatchObject({ status: 'PENDING', response_status: 429, last_error: 'HTTP 429' });
    expect(ms(a.next_attempt_at)).toBeGreaterThanOrEqual(ms(a.last_attempt_at) + 120_000);
    const b = await attempted(svc, t, e503.id, d503.id, 1);
    expect(ms(b.next_attempt_at)).toBeGreaterThanOrEqual(ms(b.last_attempt_at) + 30_000);
    const c = await attempted(svc, t, e500.id, d500.id, 1);
    expect(ms(c.next_attempt_at) - ms(c.last_attempt_at)).toBeLessThanOrEqual(1_100);

    // The schedule alone would have retried after 1 s: the 429 and 503 endpoints are left alone.
    advance(svc, 2_000);
    await attempted(svc, t, e500.id, d500.id, 2);
    await sleep(150);
    expect(rx.at('/d/429')).toHaveLength(1);
    expect(rx.at('/d/503')).toHaveLength(1);

    // At 30 s the 503 one goes again (and succeeds); at 120 s the 429 one.
    advance(svc, t0 + 31_000 - svc.clock.now());
    await deliveryIn(svc, t, e503.id, d503.id, 'SUCCEEDED');
    await sleep(100);
    expect(rx.at('/d/429')).toHaveLength(1);
    advance(svc, t0 + 121_000 - svc.clock.now());
    const done = await deliveryIn(svc, t, e429.id, d429.id, 'SUCCEEDED');
    expect(done).toMatchObject({ attempts: 2, response_status: 200, last_error: null });
    expect(ms(done.last_attempt_at) - ms(a.last_attempt_at)).toBeGreaterThanOrEqual(120_000);
  });

  it('replay: a new delivery of the same event (is_replay, replay_of), counted in replays_24h only; a successful replay ends the streak', async () => {
    const t = await hookUser(svc);
    let ok = false;
    rx.on('/d/replay', () => ({ status: ok ? 200 : 500 }));
    const ep = await createEndpoint(svc, t, rx.url('/d/replay'));
    const d1 = await sendTest(svc, t, ep.id);
    const d2 = await sendTest(svc, t, ep.id);
    const deadLetter = async (id: string): Promise<void> => {
      await attempted(svc, t, ep.id, id, 1);
      advance(svc, 1_200);
      await attempted(svc, t, ep.id, id, 2);
      advance(svc, 1_200);
      await deliveryIn(svc, t, ep.id, id, 'DEAD_LETTERED');
    };
    await deadLetter(d1.id);
    await deadLetter(d2.id);
    let h = await health(svc, t, ep.id);
    expect(h).toMatchObject({
      consecutive_failures: 2,
      dlq_count: 2,
      dead_letter_24h: 2,
      succeeded_24h: 0,
      success_rate_24h: 0,
      replays_24h: 0,
    });

    // Only dead letters can be replayed: a PENDING one (mid-retry) is refused.
    const d3 = await sendTest(svc, t, ep.id);
    await attempted(svc, t, ep.id, d3.id, 1);
    const refused = expectContractError(
      await post(svc, t, `/webhooks/${ep.id}/deliveries/${d3.id}/replay`),
      409,
      'DELIVERY_NOT_DEAD_LETTERED',
    );
    expect(refused.details).toMatchObject({ status: 'PENDING' });
    advance(svc, 1_200);
    await attempted(svc, t, ep.id, d3.id, 2);
    advance(svc, 1_200);
    await deliveryIn(svc, t, ep.id, d3.id, 'DEAD_LETTERED');
    expect((await health(svc, t, ep.id)).consecutive_failures).toBe(3);

    // A replay that fails again: tracked as a replay, moves neither the rates nor the streak.
    const r1 = await post(svc, t, `/webhooks/${ep.id}/deliveries/${d2.id}/replay`);
    expect(r1.status).toBe(202);
    await deadLetter(r1.body.id);
    h = await health(svc, t, ep.id);
    expect(h).toMatchObject({
      consecutive_failures: 3,
      dead_letter_24h: 3,
      success_rate_24h: 0,
      replays_24h: 1,
      dlq_count: 4,
    });

    // The endpoint recovers; replaying d1 delivers the same event again, and succeeds.
    ok = true;
    const before = rx.at('/d/replay').length;
    const r2 = await post(svc, t, `/webhooks/${ep.id}/deliveries/${d1.id}/replay`);
    expect(r2.status).toBe(202);
    expect(r2.body).toMatchObject({
      id: expect.stringMatching(/^dlv_/),
      event_id: d1.event_id,
      event_type: 'webhook.test',
      is_replay: true,
      replay_of: d1.id,
      status: 'PENDING',
      attempts: 0,
    });
    expect(r2.body.id).not.toBe(d1.id);
    const done = await deliveryIn(svc, t, ep.id, r2.body.id, 'SUCCEEDED');
    expect(done).toMatchObject({ is_replay: true, replay_of: d1.id, attempts: 1 });
    const arrivals = rx.at('/d/replay').slice(before);
    expect(arrivals).toHaveLength(1);
    expect(arrivals[0].headers['svc-webhook-id']).toBe(r2.body.id);
    expect(arrivals[0].json.id).toBe(d1.event_id);

    h = await health(svc, t, ep.id);
    expect(h).toMatchObject({
      consecutive_failures: 0, // the successful replay ended the streak
      succeeded_24h: 0, // replays are not in the rates
      dead_letter_24h: 3,
      success_rate_24h: 0,
      succeeded_7d: 0,
      success_rate_7d: 0,
      replays_24h: 2,
      last_success_at: done.last_attempt_at,
    });
    // The original stays dead-lettered (it is the record of what happened).
    expect((await deliveries(svc, t, ep.id)).find((d: Json) => d.id === d1.id).status).toBe(
      'DEAD_LETTERED',
    );
    const listed = await as(t, `${svc.api}/webhooks`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.find((e: Json) => e.id === ep.id)).toMatchObject({
      replays_24h: 2,
      consecutive_failures: 0,
      dlq_count: 4,
      success_rate_24h: 0,
    });

    // A SUCCEEDED delivery (the replay itself) cannot be replayed; unknown ids are 404.
    expectContractError(
      await post(svc, t, `/webhooks/${ep.id}/deliveries/${r2.body.id}/replay`),
      409,
      'DELIVERY_NOT_DEAD_LETTERED',
    );
    expect(
      expectContractError(
        await post(svc, t, `/webhooks/${ep.id}/deliveries/dlv_nope/replay`),
        404,
        'NOT_FOUND',
      ).details,
    ).toEqual({ endpoint_id: ep.id, delivery_id: 'dlv_nope' });
    // replays_24h is a 24 h window on the service clock.
    advance(svc, 24 * 3_600_000 + 60_000);
    expect((await health(svc, t, ep.id)).replays_24h).toBe(0);
  });
});

/** The per-attempt timeout (WEBHOOK_TIMEOUT_MS=300 here), alone on its app. */
describe('webhooks: a per-attempt timeout that never holds back other endpoints', () => {
  let svc: Running;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    svc = await startWebhookApp({ env: { WEBHOOK_TIMEOUT_MS: '300' } });
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });

  it('a slow endpoint times out (WEBHOOK_TIMEOUT_MS) while another endpoint still gets its deliveries at once', async () => {
    const t = await hookUser(svc);
    rx.on('/d/slow', { status: 200, delayMs: 5_000 });
    rx.on('/d/fast', { status: 200 });
    const slow = await createEndpoint(svc, t, rx.url('/d/slow'), ['order.created']);
    const fast = await createEndpoint(svc, t, rx.url('/d/fast'), ['order.created']);
    const m = TRADABLE[1];
    // The receiver runs on this process's event loop: it records an arrival when the loop gets to
    // it, up to one loop delay after the request came. The largest delay seen bounds that error.
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    loopDelay.enable();
    const started = Date.now();
    const orders: Json[] = [];
    for (let i = 0; i < 8; i++) {
      orders.push(await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 10, 1 + i)));
    }
    const placed = Date.now();
    const got = await rx.waitFor('/d/fast', 8, 2_000);
    // Every fast delivery arrived within 250 ms of its order, however the slow endpoint fares.
    const arrived = Date.now();
    expect(arrived - placed).toBeLessThan(1_000);
    expect(new Set(got.map((r) => r.json.data.order.id))).toEqual(new Set(orders.map((o) => o.id)));
    // The slow endpoint never has more than 4 attempts in flight: each is cut at 300 ms, so a
    // fifth can only arrive once one of the four before it was cut, 300 ms or more after it was
    // sent. (Counting arrivals at a fixed moment instead fails on a loaded machine, where the 8
    // orders alone can take longer than one 300 ms cut.) An arrival is recorded late by at most
    // the largest event-loop delay (282 ms was seen at load 12 with a 18 ms delay), allowed for up
    // to 100 ms: a fifth attempt sent without waiting for a cut arrives within a few ms.
    const slowArrivals = rx.at('/d/slow').map((r) => r.at);
    loopDelay.disable();
    const lateBy = Math.min(100, Math.ceil(loopDelay.max / 1e6) + 5);
    for (let i = 4; i < slowArrivals.length; i++) {
      expect(slowArrivals[i] - slowArrivals[i - 4]).toBeGreaterThanOrEqual(300 - lateBy);
    }

    // Each slow attempt is cut at 300 ms and recorded as a failure, then retried later.
    const slowOnes = await until(
      () => deliveries(svc, t, slow.id),
      (ds) => ds.length === 8 && ds.every((d: Json) => d.attempts === 1),
      'every slow delivery attempted once',
      5_000,
    );
    for (const d of slowOnes) {
      expect(d).toMatchObject({ status: 'PENDING', response_status: null });
      expect(d.last_error).toMatch(/no response within 300 ms/);
    }
    expect(Date.now() - started).toBeLessThan(4_000); // not waiting for the 5 s answers
    const fastOnes = await until(
      () => deliveries(svc, t, fast.id),
      (ds) => ds.length === 8 && ds.every((d: Json) => d.status === 'SUCCEEDED'),
      'every fast delivery SUCCEEDED',
    );
    expect(fastOnes.every((d: Json) => d.attempts === 1)).toBe(true);
    expect((await health(svc, t, slow.id)).last_error).toMatch(/no response within 300 ms/);
  });
});

/**
 * SPEC.md: deliveries to a slow endpoint never delay other endpoints, also when the slow ones fill
 * the global cap on attempts in flight (WEBHOOK_MAX_IN_FLIGHT=2 here).
 */
describe('webhooks: slow endpoints filling the global cap do not hold up another endpoint', () => {
  let svc: Running;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    svc = await startWebhookApp({
      env: { WEBHOOK_MAX_IN_FLIGHT: '2', WEBHOOK_TIMEOUT_MS: '5000' },
    });
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });

  it('the fast endpoint gets every delivery while the slow one holds both global slots', async () => {
    const t = await hookUser(svc);
    rx.on('/c/slow', { status: 200, delayMs: 2_500 });
    rx.on('/c/fast', { status: 200 });
    // Created first, so a pass in list order would serve it first and fill the cap.
    const slow = await createEndpoint(svc, t, rx.url('/c/slow'), ['order.created']);
    const fast = await createEndpoint(svc, t, rx.url('/c/fast'), ['order.created']);
    const m = TRADABLE[2];
    for (let i = 0; i < 3; i++)
      await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 10, 1 + i));
    const fastArrivals = await rx.waitFor('/c/fast', 3, 10_000);
    const slowArrivals = rx.at('/c/slow');
    expect(slowArrivals.length).toBeGreaterThanOrEqual(1);
    // Every fast delivery arrived before the first slow answer could (2.5 s after its attempt
    // arrived): compared with the receiver's own arrival times, not a wall window from the test's
    // side that a loaded machine stretches.
    const firstSlowAnswer = slowArrivals[0].at + 2_500;
    expect(fastArrivals.filter((r) => r.at >= firstSlowAnswer)).toEqual([]);
    const fastOnes = await until(
      () => deliveries(svc, t, fast.id),
      (ds) => ds.length === 3 && ds.every((d: Json) => d.status === 'SUCCEEDED'),
      'every fast delivery SUCCEEDED',
    );
    expect(fastOnes.every((d: Json) => d.attempts === 1)).toBe(true);
    // The slow endpoint's deliveries finish too, in their own time.
    await until(
      () => deliveries(svc, t, slow.id),
      (ds) => ds.length === 3 && ds.every((d: Json) => d.status === 'SUCCEEDED'),
      'every slow delivery SUCCEEDED',
      10_000,
    );
  });

  it('never more attempts in flight than the cap, however many one endpoint has due', async () => {
    const t = await hookUser(svc);
    const DELAY = 1_000;
    rx.on('/c/queue', { status: 200, delayMs: DELAY });
    const ep = await createEndpoint(svc, t, rx.url('/c/queue'), ['order.created']);
    const m = TRADABLE[3];
    for (let i = 0; i < 6; i++)
      await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 12, 1 + i));
    const got = await rx.waitFor('/c/queue', 6, 10_000);
    // Each request is open from its arrival until the receiver answers DELAY ms later.
    const edges = got.flatMap((r) => [
      [r.at, 1],
      [r.at + DELAY, -1],
    ]);
    edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let open = 0;
    let most = 0;
    for (const [, d] of edges) most = Math.max(most, (open += d));
    expect(most).toBe(2); // WEBHOOK_MAX_IN_FLIGHT; the endpoint alone could take 4
    await until(
      () => deliveries(svc, t, ep.id),
      (ds) => ds.length === 6 && ds.every((d: Json) => d.status === 'SUCCEEDED'),
      'every queued delivery SUCCEEDED',
      10_000,
    );
  });
});
