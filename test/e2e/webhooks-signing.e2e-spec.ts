import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Running } from '../support/harness.js';
import { expectValidation, limit, place, TRADABLE, type Trader } from '../support/orders.js';
import { Receiver, type Received } from '../support/receiver.js';
import {
  advance,
  attempted,
  createEndpoint,
  deliveries,
  deliveryIn,
  HOUR,
  hookUser,
  platformQuery,
  post,
  sendTest,
  startWebhookApp,
  verify,
  type Json,
} from '../support/webhooks.js';

/** The `v1=` candidates of a signature header, in order. */
function candidates(r: Received): string[] {
  return r.headers['svc-webhook-signature']
    .split(',')
    .filter((p) => p.startsWith('v1='))
    .map((p) => p.slice(3));
}

/** The header's timestamp. */
function stamp(r: Received): number {
  return Number(/^t=(\d+),/.exec(r.headers['svc-webhook-signature'])?.[1]);
}

/** The same delivery with only one candidate left in its signature header. */
function only(r: Received, candidate: string): Received {
  return {
    ...r,
    headers: { ...r.headers, 'svc-webhook-signature': `t=${stamp(r)},v1=${candidate}` },
  };
}

/**
 * CONTRACT.md Developer webhooks: the envelope, the headers, the Stripe signature scheme checked
 * with stripe-node's own verifier, and secret rotation with its grace window (SPEC.md Events 3-5).
 * The service clock starts at the wall time so stripe-node's 300 s tolerance is meaningful; the
 * verifier is also told the service clock's "now" after the clock has been advanced.
 */
describe('webhooks: signatures, envelope, headers and secret rotation', () => {
  let svc: Running;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    svc = await startWebhookApp({ now: new Date().toISOString() });
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });

  const now = () => svc.clock.now();

  it('an order.created delivery: stripe-node verifies it with the endpoint secret; envelope and headers as contracted', async () => {
    const t = await hookUser(svc);
    const ep = await createEndpoint(svc, t, rx.url('/sig/a'), ['order.created']);
    expect(ep).toMatchObject({
      id: expect.stringMatching(/^whe_/),
      secret: expect.stringMatching(/^whsec_/),
      secret_version: 1,
      status: 'ACTIVE',
      environment: 'test',
      events: ['order.created'],
    });
    const m = TRADABLE[0];
    const order = await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 10, 3));
    const [r] = await rx.waitFor('/sig/a', 1);

    // stripe-node accepts it with the endpoint secret and returns the parsed envelope.
    const evt = verify(r, ep.secret, now());
    expect(Object.keys(JSON.parse(r.body)).sort()).toEqual([
      'created_at',
      'data',
      'environment',
      'id',
      'schema_version',
      'type',
    ]);
    expect(evt).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-z]+$/),
      type: 'order.created',
      created_at: svc.clock.nowDate().toISOString(),
      schema_version: '2026-05-08',
      environment: 'test',
      data: {
        order: expect.objectContaining({
          id: order.id,
          market_id: m.id,
          action: 'BUY',
          side: 'YES',
          price: m.reference - 10,
          quantity: 3,
        }),
      },
    });

    // Headers: POST, JSON, the Stripe-form signature with the service clock's timestamp.
    expect(r.method).toBe('POST');
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['svc-webhook-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(stamp(r)).toBe(svc.clock.nowSeconds());
    expect(r.headers['svc-webhook-secret-version']).toBe('1');
    expect(r.headers['svc-webhook-event']).toBe('order.created');
    const [d] = await deliveries(svc, t, ep.id);
    expect(d).toMatchObject({
      id: r.headers['svc-webhook-id'],
      event_id: evt.id,
      event_type: 'order.created',
      is_replay: false,
      replay_of: null,
    });
    expect(r.headers['svc-webhook-id']).toMatch(/^dlv_/);
    expect((await deliveryIn(svc, t, ep.id, d.id, 'SUCCEEDED')).attempts).toBe(1);

    // Only order.created was subscribed: nothing else (no fills, no cancels) arrived.
    expect(rx.at('/sig/a')).toHaveLength(1);

    // Anything else is refused by the verifier: another secret, a changed body, a stale clock.
    expect(() => verify(r, 'whsec_not_the_secret', now())).toThrow(/signature/i);
    expect(() =>
      verify({ ...r, body: r.body.replace('"test"', '"live"') }, ep.secret, now()),
    ).toThrow(/signature/i);
    expect(() => verify(r, ep.secret, now() + 301_000)).toThrow(/tolerance/i);
  });

  it('retries of one delivery keep Svc-Webhook-Id, the event and the body; each attempt is freshly signed', async () => {
    const t = await hookUser(svc);
    let calls = 0;
    rx.on('/sig/flaky', () => ({ status: ++calls < 3 ? 500 : 200 }));
    const ep = await createEndpoint(svc, t, rx.url('/sig/flaky'));
    const d = await sendTest(svc, t, ep.id);
    await attempted(svc, t, ep.id, d.id, 1);
    advance(svc, 1_200);
    await attempted(svc, t, ep.id, d.id, 2);
    advance(svc, 1_200);
    const got = await rx.waitFor('/sig/flaky', 3);
    const done = await deliveryIn(svc, t, ep.id, d.id, 'SUCCEEDED');
    expect(done).toMatchObject({ attempts: 3, response_status: 200, event_type: 'webhook.test' });
    expect(got.map((r) => r.headers['svc-webhook-id'])).toEqual([d.id, d.id, d.id]);
    expect(new Set(got.map((r) => r.body)).size).toBe(1);
    expect(got[0].json).toMatchObject({ id: d.event_id, type: 'webhook.test' });
    expect(got.map((r) => r.headers['svc-webhook-event'])).toEqual(Array(3).fill('webhook.test'));
    // The timestamps follow the service clock: each attempt is signed when it is made.
    expect(stamp(got[2]) - stamp(got[0])).toBeGreaterThanOrEqual(2);
    for (const r of got) expect(verify(r, ep.secret, now()).id).toBe(d.event_id);
  });

  it('rotate-secret: both candidates during the default 24 h grace (each verifies with its own secret), version = new; after it only the new one', async () => {
    const t = await hookUser(svc);
    const ep = await createEndpoint(svc, t, rx.url('/sig/rot'));
    const rot = await post(svc, t, `/webhooks/${ep.id}/rotate-secret`);
    expect(rot.status).toBe(200);
    expect(rot.body).toMatchObject({
      id: ep.id,
      secret: expect.stringMatching(/^whsec_/),
      secret_version: 2,
      previous_secret_valid_until: new Date(now() + 24 * HOUR).toISOString(),
    });
    const fresh = rot.body.secret as string;
    expect(fresh).not.toBe(ep.secret);
    // Both secrets are stored encrypted: neither appears anywhere in the endpoint's row.
    const [row] = platformQuery<Record<string, unknown>>(
      svc,
      'SELECT * FROM webhook_endpoints WHERE id = ?',
      ep.id,
    );
    expect(row.secret_version).toBe(2);
    for (const secret of [fresh, ep.secret]) {
      expect(JSON.stringify(row)).not.toContain(secret);
      expect(JSON.stringify(row)).not.toContain(secret.slice('whsec_'.length));
    }
    // The secret is never shown again.
    expect((await deliveries(svc, t, ep.id)).length).toBe(0);

    await sendTest(svc, t, ep.id);
    const [r] = await rx.waitFor('/sig/rot', 1);
    expect(r.headers['svc-webhook-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(r.headers['svc-webhook-secret-version']).toBe('2');
    // stripe-node accepts the header with either secret ...
    expect(verify(r, fresh, now()).type).toBe('webhook.test');
    expect(verify(r, ep.secret, now()).type).toBe('webhook.test');
    // ... and each candidate is the signature of exactly one of them.
    const [c1, c2] = candidates(r);
    expect(verify(only(r, c1), fresh, now()).type).toBe('webhook.test');
    expect(() => verify(only(r, c1), ep.secret, now())).toThrow(/signature/i);
    expect(verify(only(r, c2), ep.secret, now()).type).toBe('webhook.test');
    expect(() => verify(only(r, c2), fresh, now())).toThrow(/signature/i);

    // One minute before the end of the grace window: still both.
    advance(svc, 24 * HOUR - 60_000);
    await sendTest(svc, t, ep.id);
    const [, r2] = await rx.waitFor('/sig/rot', 2);
    expect(candidates(r2)).toHaveLength(2);
    expect(verify(r2, ep.secret, now()).type).toBe('webhook.test');

    // Past it: only the new secret signs; the old one is rejected by the verifier.
    advance(svc, 2 * 60_000);
    await sendTest(svc, t, ep.id);
    const [, , r3] = await rx.waitFor('/sig/rot', 3);
    expect(r3.headers['svc-webhook-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(r3.headers['svc-webhook-secret-version']).toBe('2');
    expect(verify(r3, fresh, now()).type).toBe('webhook.test');
    expect(() => verify(r3, ep.secret, now())).toThrow(/signature/i);
  });

  it('a rotation may ask for a shorter grace (grace_hours 1), or none (0)', async () => {
    const t = await hookUser(svc);
    const ep = await createEndpoint(svc, t, rx.url('/sig/short'));
    const rot = await post(svc, t, `/webhooks/${ep.id}/rotate-secret`, { grace_hours: 1 });
    expect(rot.status).toBe(200);
    expect(rot.body.previous_secret_valid_until).toBe(new Date(now() + HOUR).toISOString());

    advance(svc, HOUR - 60_000);
    await sendTest(svc, t, ep.id);
    const [r1] = await rx.waitFor('/sig/short', 1);
    expect(candidates(r1)).toHaveLength(2);
    expect(verify(r1, ep.secret, now()).type).toBe('webhook.test');

    advance(svc, 2 * 60_000);
    await sendTest(svc, t, ep.id);
    const [, r2] = await rx.waitFor('/sig/short', 2);
    expect(candidates(r2)).toHaveLength(1);
    expect(verify(r2, rot.body.secret, now()).type).toBe('webhook.test');
    expect(() => verify(r2, ep.secret, now())).toThrow(/signature/i);

    // grace_hours 0: the retired secret stops at once.
    const again = await post(svc, t, `/webhooks/${ep.id}/rotate-secret`, { grace_hours: 0 });
    expect(again.body).toMatchObject({ secret_version: 3, previous_secret_valid_until: null });
    await sendTest(svc, t, ep.id);
    const [, , r3] = await rx.waitFor('/sig/short', 3);
    expect(r3.headers['svc-webhook-secret-version']).toBe('3');
    expect(candidates(r3)).toHaveLength(1);
    expect(verify(r3, again.body.secret, now()).type).toBe('webhook.test');
    expect(() => verify(r3, rot.body.secret, now())).toThrow(/signature/i);
  });

  it('grace_hours above the configured window (default 24) is lowered to it; above 72 is refused', async () => {
    const t = await hookUser(svc);
    const ep = await createEndpoint(svc, t, rx.url('/sig/cap'));
    const rot = await post(svc, t, `/webhooks/${ep.id}/rotate-secret`, { grace_hours: 48 });
    expect(rot.status).toBe(200);
    expect(rot.body.previous_secret_valid_until).toBe(new Date(now() + 24 * HOUR).toISOString());
    for (const bad of [73, -1, 1.5, 'x']) {
      expectValidation(
        await post(svc, t, `/webhooks/${ep.id}/rotate-secret`, { grace_hours: bad }),
        'grace_hours',
      );
    }
    // The refused requests rotated nothing.
    const after = await post(svc, t, `/webhooks/${ep.id}/rotate-secret`, {});
    expect(after.body.secret_version).toBe(3);
  });
});

describe('webhooks: WEBHOOK_SECRET_GRACE_HOURS is capped at 72', () => {
  let svc: Running;
  let t: Trader;
  let ep: Json;

  beforeAll(async () => {
    svc = await startWebhookApp({ env: { WEBHOOK_SECRET_GRACE_HOURS: '100' } });
    t = await hookUser(svc);
    ep = await createEndpoint(svc, t, 'http://127.0.0.1:9/never');
  });
  afterAll(async () => {
    await svc.close();
  });

  it('configured 100 h: a rotation keeps the old secret 72 h; a request for 72 gets 72, for 5 gets 5', async () => {
    const base = svc.clock.now();
    const until = (h: number) => new Date(base + h * HOUR).toISOString();
    const a = await post(svc, t, `/webhooks/${ep.id}/rotate-secret`);
    expect(a.body.previous_secret_valid_until).toBe(until(72));
    const b = await post(svc, t, `/webhooks/${ep.id}/rotate-secret`, { grace_hours: 72 });
    expect(b.body.previous_secret_valid_until).toBe(until(72));
    const c = await post(svc, t, `/webhooks/${ep.id}/rotate-secret`, { grace_hours: 5 });
    expect(c.body.previous_secret_valid_until).toBe(until(5));
  });
});
