import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { expectError, http, type Running } from '../support/harness.js';
import { WebhooksService } from '../../src/modules/webhooks/webhooks.service.js';
import { createKey, sessionFor } from '../support/keys.js';
import { startWebhookApp, until } from '../support/webhooks.js';

const SCOPES = { scopes: ['webhooks:read', 'webhooks:write'], acknowledge_write_scopes: true };

describe('webhooks: environment isolation, update races, delivery timeouts', () => {
  let svc: Running | undefined;
  afterEach(async () => {
    await svc?.close();
    svc = undefined;
  });

  it("a test key can neither see nor control the same user's live endpoints (and the reverse)", async () => {
    svc = await startWebhookApp();
    const token = await sessionFor(svc.api);
    const live = await createKey(svc.api, token, { ...SCOPES, environment: 'live' });
    const test = await createKey(svc.api, token, { ...SCOPES, environment: 'test' });
    const as = (key: string) => ({ 'x-api-key': key });
    const liveEp = await http(`${svc.api}/webhooks`, {
      method: 'POST',
      headers: as(live.key),
      json: { url: 'http://127.0.0.1:9/live', events: ['*'] },
    });
    const testEp = await http(`${svc.api}/webhooks`, {
      method: 'POST',
      headers: as(test.key),
      json: { url: 'http://127.0.0.1:9/test', events: ['*'] },
    });
    expect([liveEp.body.environment, testEp.body.environment]).toEqual(['live', 'test']);
    const listed = await http(`${svc.api}/webhooks`, { headers: as(test.key) });
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([testEp.body.id]);
    const id = liveEp.body.id as string;
    for (const [method, path] of [
      ['GET', `/webhooks/${id}`],
      ['GET', `/webhooks/${id}/health`],
      ['GET', `/webhooks/${id}/deliveries`],
      ['POST', `/webhooks/${id}/rotate-secret`],
      ['POST', `/webhooks/${id}/test`],
      ['PATCH', `/webhooks/${id}`],
      ['DELETE', `/webhooks/${id}`],
    ] as const) {
      const res = await http(`${svc.api}${path}`, {
        method,
        headers: as(test.key),
        ...(method === 'PATCH' || method === 'POST' ? { json: {} } : {}),
      });
      expect(expectError(res, 404, 'NOT_FOUND').details).toEqual({ endpoint_id: id });
    }
    expectError(
      await http(`${svc.api}/webhooks/${testEp.body.id}`, { headers: as(live.key) }),
      404,
      'NOT_FOUND',
    );
    // The live endpoint is untouched: same secret version, still active.
    const still = await http(`${svc.api}/webhooks/${id}`, { headers: as(live.key) });
    expect(still.body).toMatchObject({ status: 'ACTIVE', secret_version: 1 });
  });

  it('a PATCH still checking its URL never revives an endpoint DELETEd meanwhile', async () => {
    svc = await startWebhookApp();
    const key = await createKey(svc.api, await sessionFor(svc.api), SCOPES);
    const h = { 'x-api-key': key.key };
    const ep = await http(`${svc.api}/webhooks`, {
      method: 'POST',
      headers: h,
      json: { url: 'http://127.0.0.1:9/hook', events: ['*'] },
    });
    const me = await http(`${svc.api}/auth/me`, { headers: h });
    const cred = {
      type: 'API_KEY' as const,
      userId: me.body.user.id as string,
      keyId: key.id,
      environment: 'test' as const,
      world: 'test' as const,
      scopes: me.body.credential.scopes,
      tier: 'FREE' as const,
    };
    // The service the controllers call: an update suspends at its (asynchronous) URL check; a
    // DELETE handled in that window must win, and the update must not write the old row back.
    const webhooks = svc.app.get(WebhooksService, { strict: false });
    const update = webhooks.update(cred, ep.body.id, { url: 'http://127.0.0.1:9/other' });
    expect(webhooks.disable(cred, ep.body.id).status).toBe('DISABLED');
    await expect(update).rejects.toMatchObject({ code: 'WEBHOOK_DISABLED' });
    const after = await http(`${svc.api}/webhooks/${ep.body.id}`, { headers: h });
    expect(after.body).toMatchObject({ status: 'DISABLED', url: 'http://127.0.0.1:9/hook' });
  });

  it('a receiver dripping its answer past the timeout fails the attempt, and its socket is closed', async () => {
    const sockets = new Set<Socket>();
    const drip = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
      // One byte of the status line every 150 ms: the socket is never idle, the answer never done.
      const line = 'HTTP/1.1 200 OK\r\n';
      let i = 0;
      const t = setInterval(() => {
        if (socket.destroyed) return clearInterval(t);
        socket.write(line[i % line.length]);
        i++;
      }, 150);
      socket.on('close', () => clearInterval(t));
    });
    await new Promise<void>((r) => drip.listen(0, '127.0.0.1', () => r()));
    const port = (drip.address() as { port: number }).port;
    try {
      svc = await startWebhookApp({
        env: { WEBHOOK_TIMEOUT_MS: '600', WEBHOOK_RETRY_SCHEDULE: '0' },
      });
      const key = await createKey(svc.api, await sessionFor(svc.api), SCOPES);
      const h = { 'x-api-key': key.key };
      const ep = await http(`${svc.api}/webhooks`, {
        method: 'POST',
        headers: h,
        json: { url: `http://127.0.0.1:${port}/hook`, events: ['webhook.test'] },
      });
      const started = Date.now();
      await http(`${svc.api}/webhooks/${ep.body.id}/test`, { method: 'POST', headers: h });
      const list = await until(
        async () =>
          (await http(`${svc!.api}/webhooks/${ep.body.id}/deliveries`, { headers: h })).body
            .data[0],
        (d) => d !== undefined && d.status === 'DEAD_LETTERED',
        'the dead-lettered delivery',
      );
      expect(Date.now() - started).toBeLessThan(3000);
      expect(list.last_error).toMatch(/no response within 600 ms/);
      await new Promise((r) => setTimeout(r, 300));
      expect(sockets.size).toBe(0);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => drip.close(() => r(undefined)));
    }
  });
});
