import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { asSession } from '../support/access.js';
import { expectContractError, type Running } from '../support/harness.js';
import {
  approveTier,
  as,
  expectValidation,
  keyFor,
  limit,
  place,
  TRADABLE,
  type Trader,
} from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import {
  advance,
  attempted,
  createEndpoint,
  createEndpointRaw,
  deliveries,
  deliveryIn,
  getEndpoint,
  HOOK_SCOPES,
  hookUser,
  post,
  sendTest,
  sleep,
  startWebhookApp,
  until,
  type Json,
} from '../support/webhooks.js';

/**
 * SPEC.md States and transitions (DELETE -> DISABLED, terminal, queue cancelled), Limits: webhook
 * limits (caps by the highest tier among the user's active keys; ACTIVE and SUSPENDED count,
 * DISABLED do not; a lowered cap stops no existing endpoint) and the webhooks scopes.
 * WEBHOOK_RETRY_SCHEDULE=0,1,1.
 */
describe('webhooks: disable, terminal state, caps and scopes', () => {
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

  /** Drives n fresh test events to dead letters (three failed attempts each). */
  async function deadLetters(t: Trader, ep: Json, n: number): Promise<void> {
    const ds: Json[] = [];
    for (let i = 0; i < n; i++) ds.push(await sendTest(svc, t, ep.id));
    for (const step of [1, 2]) {
      for (const d of ds) await attempted(svc, t, ep.id, d.id, step);
      advance(svc, 1_200);
    }
    await until(
      () => deliveries(svc, t, ep.id, 'DEAD_LETTERED'),
      (all) => ds.every((d) => all.some((x: Json) => x.id === d.id)),
      `${n} dead letters`,
    );
  }

  it('DELETE: DISABLED, queued deliveries CANCELLED and never sent, no new deliveries', async () => {
    const t = await hookUser(svc);
    rx.on('/l/del', { status: 500 });
    const ep = await createEndpoint(svc, t, rx.url('/l/del'));
    const queued: Json[] = [];
    for (let i = 0; i < 3; i++) queued.push(await sendTest(svc, t, ep.id));
    for (const d of queued) await attempted(svc, t, ep.id, d.id, 1);
    expect(rx.at('/l/del')).toHaveLength(3);

    const del = await as(t, `${svc.api}/webhooks/${ep.id}`, { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ id: ep.id, status: 'DISABLED' });
    const after = await deliveries(svc, t, ep.id);
    expect(after.map((d: Json) => [d.id, d.status]).sort()).toEqual(
      queued.map((d) => [d.id, 'CANCELLED']).sort(),
    );
    expect(after.every((d: Json) => d.next_attempt_at === null && d.attempts === 1)).toBe(true);

    // Their retries never go out; new events create no delivery for the endpoint.
    advance(svc, 3_600_000);
    const m = TRADABLE[0];
    await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 12, 1));
    await sleep(250);
    expect(rx.at('/l/del')).toHaveLength(3);
    expect(await deliveries(svc, t, ep.id)).toHaveLength(3);
    expect((await getEndpoint(svc, t, ep.id)).status).toBe('DISABLED');
  });

  it('DELETE of a SUSPENDED endpoint cancels its HELD queue; DISABLED is terminal (409 on update, rotate, test, replay and reactivate)', async () => {
    const t = await hookUser(svc);
    rx.on('/l/term', { status: 500 });
    const ep = await createEndpoint(svc, t, rx.url('/l/term'));
    await deadLetters(t, ep, 20);
    await until(
      () => getEndpoint(svc, t, ep.id),
      (e) => e.status === 'SUSPENDED',
      'SUSPENDED',
    );
    const held = await sendTest(svc, t, ep.id);
    expect(held.status).toBe('HELD');
    const seen = rx.at('/l/term').length;

    const del = await as(t, `${svc.api}/webhooks/${ep.id}`, { method: 'DELETE' });
    expect(del.body.status).toBe('DISABLED');
    expect((await deliveries(svc, t, ep.id, 'HELD')).length).toBe(0);
    expect((await deliveries(svc, t, ep.id, 'CANCELLED')).map((d: Json) => d.id)).toEqual([
      held.id,
    ]);

    const dead = (await deliveries(svc, t, ep.id, 'DEAD_LETTERED'))[0];
    const path = `/webhooks/${ep.id}`;
    expectContractError(
      await as(t, `${svc.api}${path}`, { method: 'PATCH', json: { description: 'x' } }),
      409,
      'WEBHOOK_DISABLED',
    );
    expectContractError(await post(svc, t, `${path}/rotate-secret`), 409, 'WEBHOOK_DISABLED');
    expectContractError(await post(svc, t, `${path}/test`), 409, 'WEBHOOK_DISABLED');
    expectContractError(
      await post(svc, t, `${path}/deliveries/${dead.id}/replay`),
      409,
      'WEBHOOK_DISABLED',
    );
    const re = expectContractError(
      await post(svc, t, `${path}/reactivate`),
      409,
      'WEBHOOK_NOT_SUSPENDED',
    );
    expect(re.details).toMatchObject({ status: 'DISABLED' });
    // DELETE again changes nothing; re-enabling restores nothing.
    expect((await as(t, `${svc.api}${path}`, { method: 'DELETE' })).body.status).toBe('DISABLED');
    await sleep(150);
    expect(rx.at('/l/term')).toHaveLength(seen);
    expect((await deliveries(svc, t, ep.id, 'CANCELLED')).length).toBe(1);
  });

  it('PATCH updates url, events and description of a live endpoint', async () => {
    const t = await hookUser(svc);
    const ep = await createEndpoint(svc, t, rx.url('/l/before'), ['order.created']);
    const res = await as(t, `${svc.api}/webhooks/${ep.id}`, {
      method: 'PATCH',
      json: { url: rx.url('/l/after'), events: ['webhook.test'], description: 'moved' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      url: rx.url('/l/after'),
      events: ['webhook.test'],
      description: 'moved',
      status: 'ACTIVE',
    });
    await deliveryIn(svc, t, ep.id, (await sendTest(svc, t, ep.id)).id, 'SUCCEEDED');
    expect(rx.at('/l/after')).toHaveLength(1);
    expect(rx.at('/l/before')).toHaveLength(0);
    expectValidation(
      await as(t, `${svc.api}/webhooks/${ep.id}`, { method: 'PATCH', json: { events: ['nope'] } }),
      'events',
    );
  });

  it('caps: FREE 3 (ACTIVE and SUSPENDED count, DISABLED do not), PRO 10 after approval, ENTERPRISE 25', async () => {
    const t = await hookUser(svc);
    const eps: Json[] = [];
    for (let i = 0; i < 3; i++) eps.push(await createEndpoint(svc, t, rx.url(`/l/cap/${i}`)));
    const capErr = async (cap: number, count: number, tier: string): Promise<void> => {
      const e = expectContractError(
        await createEndpointRaw(svc, t, { url: rx.url('/l/cap/x'), events: ['*'] }),
        422,
        'WEBHOOK_ENDPOINT_CAP_REACHED',
      );
      expect(e.details).toEqual({ cap, current_count: count, tier });
    };
    await capErr(3, 3, 'FREE');

    // A SUSPENDED endpoint still counts.
    rx.on('/l/cap/0', { status: 500 });
    await deadLetters(t, eps[0], 20);
    await until(
      () => getEndpoint(svc, t, eps[0].id),
      (e) => e.status === 'SUSPENDED',
      'SUSPENDED',
    );
    await capErr(3, 3, 'FREE');

    // A DISABLED one does not.
    await as(t, `${svc.api}/webhooks/${eps[1].id}`, { method: 'DELETE' });
    eps[1] = await createEndpoint(svc, t, rx.url('/l/cap/3'));
    await capErr(3, 3, 'FREE');

    await approveTier(svc, t, 'PRO');
    for (let i = 3; i < 10; i++) await createEndpoint(svc, t, rx.url(`/l/cap/p${i}`));
    await capErr(10, 10, 'PRO');

    await approveTier(svc, t, 'ENTERPRISE');
    for (let i = 10; i < 25; i++) await createEndpoint(svc, t, rx.url(`/l/cap/e${i}`));
    await capErr(25, 25, 'ENTERPRISE');
  });

  it('a lowered cap (the PRO key revoked) keeps existing endpoints delivering but blocks new ones until under the cap', async () => {
    const pro = await hookUser(svc);
    const free = await keyFor(svc, pro.email, pro.token, {
      scopes: HOOK_SCOPES,
      environment: 'test',
    });
    await approveTier(svc, pro, 'PRO');
    const eps: Json[] = [];
    for (let i = 0; i < 5; i++) eps.push(await createEndpoint(svc, pro, rx.url(`/l/low/${i}`)));

    const revoked = await asSession(pro.token, `${svc.api}/api-keys/${pro.keyId}/revoke`, {
      method: 'POST',
    });
    expect(revoked.status).toBe(200);
    const e = expectContractError(
      await createEndpointRaw(svc, free, { url: rx.url('/l/low/new'), events: ['*'] }),
      422,
      'WEBHOOK_ENDPOINT_CAP_REACHED',
    );
    expect(e.details).toEqual({ cap: 3, current_count: 5, tier: 'FREE' });

    // Every existing endpoint still gets events (an order of this user goes to all five).
    const m = TRADABLE[2];
    const order = await place(svc, free, limit(m, 'BUY', 'YES', m.reference - 10, 2));
    for (let i = 0; i < 5; i++) {
      const [r] = await rx.waitFor(`/l/low/${i}`, 1);
      expect(r.json).toMatchObject({ type: 'order.created', data: { order: { id: order.id } } });
    }
    expect((await getEndpoint(svc, free, eps[0].id)).status).toBe('ACTIVE');

    // Deleting down to 2 (under the cap of 3) allows one more.
    for (const ep of eps.slice(0, 3))
      await as(free, `${svc.api}/webhooks/${ep.id}`, { method: 'DELETE' });
    await createEndpoint(svc, free, rx.url('/l/low/new'));
    const e2 = expectContractError(
      await createEndpointRaw(svc, free, { url: rx.url('/l/low/new2'), events: ['*'] }),
      422,
      'WEBHOOK_ENDPOINT_CAP_REACHED',
    );
    expect(e2.details).toEqual({ cap: 3, current_count: 3, tier: 'FREE' });
  });

  it('scopes: webhooks:read to read, webhooks:write to change; bad bodies are 400', async () => {
    const owner = await hookUser(svc);
    const ep = await createEndpoint(svc, owner, rx.url('/l/scopes'));
    const reader = await keyFor(svc, owner.email, owner.token, {
      scopes: ['webhooks:read'],
      environment: 'test',
    });
    const none = await keyFor(svc, owner.email, owner.token, {
      scopes: ['markets:read'],
      environment: 'test',
    });
    const writes: [string, string, unknown?][] = [
      ['POST', '/webhooks', { url: rx.url('/l/x'), events: ['*'] }],
      ['PATCH', `/webhooks/${ep.id}`, { description: 'x' }],
      ['DELETE', `/webhooks/${ep.id}`],
      ['POST', `/webhooks/${ep.id}/rotate-secret`, {}],
      ['POST', `/webhooks/${ep.id}/reactivate`],
      ['POST', `/webhooks/${ep.id}/test`],
      ['POST', `/webhooks/${ep.id}/deliveries/dlv_x/replay`],
    ];
    for (const [method, path, json] of writes) {
      const err = expectContractError(
        await as(reader, `${svc.api}${path}`, { method, json }),
        403,
        'INSUFFICIENT_SCOPE',
      );
      expect(err.details.required_scopes).toEqual(['webhooks:write']);
    }
    for (const path of [
      '/webhooks',
      `/webhooks/${ep.id}`,
      `/webhooks/${ep.id}/health`,
      `/webhooks/${ep.id}/deliveries`,
    ]) {
      expect((await as(reader, `${svc.api}${path}`)).status).toBe(200);
      const err = expectContractError(
        await as(none, `${svc.api}${path}`),
        403,
        'INSUFFICIENT_SCOPE',
      );
      expect(err.details.required_scopes).toEqual(['webhooks:read']);
    }
    expect((await getEndpoint(svc, owner, ep.id)).status).toBe('ACTIVE');

    expectValidation(await createEndpointRaw(svc, owner, { url: rx.url('/l/v') }), 'events');
    expectValidation(
      await createEndpointRaw(svc, owner, { url: rx.url('/l/v'), events: ['order.exploded'] }),
      'events',
    );
    expectValidation(
      await createEndpointRaw(svc, owner, { url: 'not a url', events: ['*'] }),
      'url',
    );
    expectValidation(
      await createEndpointRaw(svc, owner, { url: 'ftp://example.com/x', events: ['*'] }),
      'url',
    );
    // null is no value: 400 naming the field (it reached the service and failed there, a 500).
    for (const field of ['events', 'description', 'url']) {
      expectValidation(
        await as(owner, `${svc.api}/webhooks/${ep.id}`, {
          method: 'PATCH',
          json: { [field]: null },
        }),
        field,
      );
    }
    expectValidation(
      await createEndpointRaw(svc, owner, {
        url: rx.url('/l/v'),
        events: ['*'],
        description: null,
      }),
      'description',
    );
    expect(await getEndpoint(svc, owner, ep.id)).toMatchObject({ status: 'ACTIVE' });
  });
});
