import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, http, type Running } from '../support/harness.js';
import { OpenApiConformance } from '../support/openapi-conformance.js';
import { as, type Trader } from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import {
  advance,
  attempted,
  createEndpoint,
  deliveries,
  deliveryIn,
  getEndpoint,
  HOUR,
  hookUser,
  post,
  startWebhookApp,
  verify,
  type Json,
} from '../support/webhooks.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/modules/webhooks/webhook-outbox.service.js';

/**
 * The workbench's attempt log (GET /webhooks/{id}/deliveries/{delivery_id}), the samples of every
 * event type (POST /webhooks/{id}/test {type}), the rotation grace window on the endpoint, bad
 * input, other users' endpoints, and the simulated-failure counter across a restart.
 */
describe('webhooks workbench: attempt log, samples, grace window, bad input', () => {
  let svc: Running;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    svc = await startWebhookApp();
  });
  afterAll(async () => {
    await svc.close();
    await rx.close();
  });

  const detail = (t: Trader, id: string, deliveryId: string) =>
    as(t, `${svc.api}/webhooks/${id}/deliveries/${deliveryId}`);

  it('each attempt shows the request as sent, the status, the first 4 KiB of the answer and the duration; never a secret', async () => {
    const t = await hookUser(svc);
    let n = 0;
    // First a slow 500 with a 10 000-byte body, then a 200 of exactly 4096 bytes.
    rx.on('/log/a', () =>
      ++n === 1
        ? { status: 500, delayMs: 150, body: 'e'.repeat(10_000) }
        : { status: 200, body: 'k'.repeat(4096) },
    );
    const ep = await createEndpoint(svc, t, rx.url('/log/a'));
    // During a grace window two secrets sign: neither may appear.
    const rot = await post(svc, t, `/webhooks/${ep.id}/rotate-secret`, { grace_hours: 2 });
    expect(rot.status).toBe(200);
    const d = (await post(svc, t, `/webhooks/${ep.id}/test`)).body;
    await attempted(svc, t, ep.id, d.id, 1);
    advance(svc, 1_200);
    await deliveryIn(svc, t, ep.id, d.id, 'SUCCEEDED');
    const got = rx.at('/log/a');
    expect(got).toHaveLength(2);

    const res = await detail(t, ep.id, d.id);
    expect(res.status).toBe(200);
    const { attempt_log: log, ...delivery } = res.body as Json;
    expect(delivery).toEqual((await deliveries(svc, t, ep.id)).find((x: Json) => x.id === d.id));
    expect(log).toHaveLength(2);
    for (const [i, a] of (log as Json[]).entries()) {
      expect(a.number).toBe(i + 1);
      expect(a.simulated).toBe(false);
      expect(a.request.method).toBe('POST');
      expect(a.request.url).toBe(rx.url('/log/a'));
      // The body and headers are those the receiver got, byte for byte.
      expect(a.request.body).toBe(got[i].body);
      for (const h of [
        'content-type',
        'content-length',
        'user-agent',
        'svc-webhook-signature',
        'svc-webhook-secret-version',
        'svc-webhook-id',
        'svc-webhook-event',
      ]) {
        expect(a.request.headers[h]).toBe(got[i].headers[h]);
      }
      expect(a.request.headers['svc-webhook-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=/);
    }
    expect(log[0]).toMatchObject({
      outcome: 'HTTP_ERROR',
      response: { status: 500, body: 'e'.repeat(4096), body_truncated: true },
      error: 'HTTP 500',
    });
    expect(log[0].duration_ms).toBeGreaterThanOrEqual(140);
    expect(log[0].started_at).toBe(delivery.created_at);
    expect(log[1]).toMatchObject({
      outcome: 'SUCCEEDED',
      response: { status: 200, body: 'k'.repeat(4096), body_truncated: false },
      error: null,
    });
    expect(Number.isInteger(log[1].duration_ms)).toBe(true);
    // The signature is shown; no secret, in any spelling, anywhere.
    for (const secret of [ep.secret, rot.body.secret]) {
      expect(res.text).not.toContain(secret);
      expect(res.text).not.toContain(secret.slice('whsec_'.length));
    }
  });

  it('a simulated refusal reads exactly as a real one; nothing is sent while failures are pending', async () => {
    const t = await hookUser(svc);
    const closed = await Receiver.start();
    const port = closed.port;
    await closed.close(); // nothing listens there now
    const real = await createEndpoint(svc, t, `http://127.0.0.1:${port}/gone`);
    const sim = await createEndpoint(svc, t, rx.url('/log/sim'));
    await post(svc, t, `/webhooks/${sim.id}/simulate-failures`, {
      count: 1,
      mode: 'CONNECTION_REFUSED',
    });
    const dr = (await post(svc, t, `/webhooks/${real.id}/test`)).body;
    const ds = (await post(svc, t, `/webhooks/${sim.id}/test`)).body;
    await attempted(svc, t, real.id, dr.id, 1);
    await attempted(svc, t, sim.id, ds.id, 1);
    const [a] = (await detail(t, real.id, dr.id)).body.attempt_log;
    const [b] = (await detail(t, sim.id, ds.id)).body.attempt_log;
    expect(a).toMatchObject({ outcome: 'CONNECTION_REFUSED', simulated: false, response: null });
    expect(b).toMatchObject({ outcome: 'CONNECTION_REFUSED', simulated: true, response: null });
    expect(b.error).toBe(a.error.replace(`:${port}`, `:${rx.port}`));
    expect(rx.at('/log/sim')).toHaveLength(0);
  });

  it('a sample of every event type, signed, validates against the document’s webhook schema; sent whether subscribed or not', async () => {
    const t = await hookUser(svc);
    const doc = (await http(`${svc.api}/openapi.json`)).body;
    const oas = new OpenApiConformance(doc);
    // Subscribed to one type only: samples of every type still go out.
    const ep = await createEndpoint(svc, t, rx.url('/log/samples'), ['order.created']);
    expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    const sent: Json[] = [];
    for (const type of WEBHOOK_EVENT_TYPES) {
      const res = await post(svc, t, `/webhooks/${ep.id}/test`, { type });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ event_type: type, status: 'PENDING', is_replay: false });
      sent.push(res.body);
    }
    const got = await rx.waitFor('/log/samples', WEBHOOK_EVENT_TYPES.length);
    for (const [i, type] of WEBHOOK_EVENT_TYPES.entries()) {
      const r = got.find((x) => x.headers['svc-webhook-id'] === sent[i].id)!;
      expect(r.headers['svc-webhook-event']).toBe(type);
      const evt = verify(r, ep.secret, svc.clock.now()) as Json;
      expect(evt).toMatchObject({ id: sent[i].event_id, type, environment: 'test' });
      expect(oas.webhookProblems(type, r.json)).toEqual([]);
    }
    // A sample's ids are fresh each time (a receiver that dedupes by order id never drops one).
    const again = await post(svc, t, `/webhooks/${ep.id}/test`, { type: 'order.filled' });
    await deliveryIn(svc, t, ep.id, again.body.id, 'SUCCEEDED');
    const filled = rx.at('/log/samples').filter((r) => r.json.type === 'order.filled');
    expect(filled).toHaveLength(2);
    expect(filled[0].json.data.order_id).not.toBe(filled[1].json.data.order_id);
    // The schema check can fail: a sample missing a field does not validate.
    const broken = { ...filled[0].json, data: { ...filled[0].json.data } };
    delete broken.data.filled_quantity;
    expect(oas.webhookProblems('order.filled', broken)).not.toEqual([]);
    // Without a body the ping is sent, as before.
    const ping = await as(t, `${svc.api}/webhooks/${ep.id}/test`, { method: 'POST' });
    expect(ping.status).toBe(202);
    expect(ping.body.event_type).toBe('webhook.test');
  });

  it('GET /webhooks/{id} shows the rotation grace window (previous_secret_expires_at), null when none', async () => {
    const t = await hookUser(svc);
    const ep = await createEndpoint(svc, t, rx.url('/log/grace'));
    expect(ep.previous_secret_expires_at).toBeNull();
    expect((await getEndpoint(svc, t, ep.id)).previous_secret_expires_at).toBeNull();
    const rot = await post(svc, t, `/webhooks/${ep.id}/rotate-secret`, { grace_hours: 2 });
    const until = new Date(svc.clock.now() + 2 * HOUR).toISOString();
    expect(rot.body).toMatchObject({
      previous_secret_valid_until: until,
      previous_secret_expires_at: until,
    });
    expect((await getEndpoint(svc, t, ep.id)).previous_secret_expires_at).toBe(until);
    const listed = (await as(t, `${svc.api}/webhooks`)).body.data as Json[];
    expect(listed.find((e) => e.id === ep.id).previous_secret_expires_at).toBe(until);
    advance(svc, 2 * HOUR - 1_000);
    expect((await getEndpoint(svc, t, ep.id)).previous_secret_expires_at).toBe(until);
    advance(svc, 2_000);
    expect((await getEndpoint(svc, t, ep.id)).previous_secret_expires_at).toBeNull();
    // A rotation without grace leaves none.
    await post(svc, t, `/webhooks/${ep.id}/rotate-secret`, { grace_hours: 0 });
    expect((await getEndpoint(svc, t, ep.id)).previous_secret_expires_at).toBeNull();
  });

  it('bad input is 400 naming the field and changes nothing; unknown and other users’ endpoints and deliveries are 404', async () => {
    const t = await hookUser(svc);
    const other = await hookUser(svc);
    const ep = await createEndpoint(svc, t, rx.url('/log/bad'));
    const path = `/webhooks/${ep.id}/simulate-failures`;
    expect((await post(svc, t, path, { count: 5, mode: 'TIMEOUT' })).status).toBe(200);
    const cases: [unknown, string][] = [
      [{ count: 0, mode: 'HTTP_500' }, 'count'],
      [{ count: 1001, mode: 'HTTP_500' }, 'count'],
      [{ count: 2.5, mode: 'HTTP_500' }, 'count'],
      [{ count: '3', mode: 'HTTP_500' }, 'count'],
      [{ mode: 'HTTP_500' }, 'count'],
      [{ count: 3, mode: 'HTTP_404' }, 'mode'],
      [{ count: 3 }, 'mode'],
    ];
    for (const [body, field] of cases) {
      const err = expectContractError(await post(svc, t, path, body), 400, 'VALIDATION_FAILED');
      expect(err.details.fields.map((f: Json) => f.field)).toContain(field);
    }
    const pending = await as(t, `${svc.api}${path}`);
    expect(pending.body).toEqual({ endpoint_id: ep.id, pending: 5, mode: 'TIMEOUT' });
    // 1 and 1000 are the bounds.
    expect((await post(svc, t, path, { count: 1000, mode: 'HTTP_500' })).body.pending).toBe(1000);
    expect((await post(svc, t, path, { count: 1, mode: 'HTTP_500' })).body.pending).toBe(1);

    const unknown = expectContractError(
      await post(svc, t, `/webhooks/${ep.id}/test`, { type: 'order.exploded' }),
      400,
      'VALIDATION_FAILED',
    );
    expect(unknown.details.fields.map((f: Json) => f.field)).toEqual(['type']);
    expect(await deliveries(svc, t, ep.id)).toHaveLength(0);

    // Another user's endpoint, an unknown one, a malformed id: 404, and nothing changes.
    const d = (await post(svc, t, `/webhooks/${ep.id}/test`)).body;
    await attempted(svc, t, ep.id, d.id, 1); // it used up the one pending failure
    await post(svc, t, path, { count: 7, mode: 'TIMEOUT' });
    for (const id of [ep.id, 'whe_00000000000000000000', 'nope']) {
      const who = id === ep.id ? other : t;
      const notFound = [
        await post(svc, who, `/webhooks/${id}/simulate-failures`, { count: 3, mode: 'TIMEOUT' }),
        await as(who, `${svc.api}/webhooks/${id}/simulate-failures`),
        await as(who, `${svc.api}/webhooks/${id}/simulate-failures`, { method: 'DELETE' }),
        await post(svc, who, `/webhooks/${id}/test`, { type: 'order.created' }),
        await detail(who, id, d.id),
      ];
      for (const res of notFound) {
        expect(expectContractError(res, 404, 'NOT_FOUND').details).toMatchObject({
          endpoint_id: id,
        });
      }
    }
    expect((await as(t, `${svc.api}${path}`)).body).toMatchObject({ pending: 7, mode: 'TIMEOUT' });
    // A delivery that does not exist, or belongs to another endpoint of the same user.
    const second = await createEndpoint(svc, t, rx.url('/log/bad2'));
    for (const [id, deliveryId] of [
      [ep.id, 'dlv_00000000000000000000'],
      [second.id, d.id],
    ]) {
      const err = expectContractError(await detail(t, id, deliveryId), 404, 'NOT_FOUND');
      expect(err.details).toEqual({ endpoint_id: id, delivery_id: deliveryId });
    }
    // A DISABLED endpoint takes no simulated failures.
    await as(t, `${svc.api}/webhooks/${second.id}`, { method: 'DELETE' });
    expectContractError(
      await post(svc, t, `/webhooks/${second.id}/simulate-failures`, { count: 1, mode: 'TIMEOUT' }),
      409,
      'WEBHOOK_DISABLED',
    );
  });
});

describe('webhooks workbench: the simulated-failure counter survives a restart', () => {
  it('pending failures are still pending after a restart, and still fail the next attempts', async () => {
    const rx = await Receiver.start();
    let svc: Running = await startWebhookApp({ env: { WEBHOOK_POLL_MS: '60000' } });
    try {
      const t = await hookUser(svc);
      const ep = await createEndpoint(svc, t, rx.url('/restart/sim'));
      await post(svc, t, `/webhooks/${ep.id}/simulate-failures`, { count: 2, mode: 'TIMEOUT' });
      await svc.close({ keepData: true });
      svc = await startWebhookApp({ dataDir: svc.dataDir });
      const pending = await as(t, `${svc.api}/webhooks/${ep.id}/simulate-failures`);
      expect(pending.body).toEqual({ endpoint_id: ep.id, pending: 2, mode: 'TIMEOUT' });
      const d = (await post(svc, t, `/webhooks/${ep.id}/test`)).body;
      await attempted(svc, t, ep.id, d.id, 1);
      advance(svc, 1_200);
      await attempted(svc, t, ep.id, d.id, 2);
      advance(svc, 1_200);
      await deliveryIn(svc, t, ep.id, d.id, 'SUCCEEDED');
      const log = (await as(t, `${svc.api}/webhooks/${ep.id}/deliveries/${d.id}`)).body
        .attempt_log as Json[];
      expect(log.map((a) => a.outcome)).toEqual(['TIMEOUT', 'TIMEOUT', 'SUCCEEDED']);
      expect(rx.at('/restart/sim')).toHaveLength(1);
    } finally {
      await svc.close();
      await rx.close();
    }
  });
});
