import { describe, expect, it } from '@jest/globals';
import { createServer, type Server, type Socket } from 'node:net';
import type { Running } from '../support/harness.js';
import { NOON } from '../support/orders.js';
import {
  advance,
  attempted,
  createEndpoint,
  deliveries,
  hookUser,
  sendTest,
  startWebhookApp,
  until,
  type Json,
} from '../support/webhooks.js';

/** A receiver that answers every request with `101 Switching Protocols` (and then hangs up). */
async function switchingReceiver(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.once('data', () =>
      s.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n'),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('webhooks: receivers that misbehave', () => {
  it('a 101 answer is a failed attempt, retried and dead-lettered; shutdown is not held', async () => {
    const rx = await switchingReceiver();
    const svc: Running = await startWebhookApp();
    let closed = false;
    try {
      const t = await hookUser(svc);
      const ep = await createEndpoint(svc, t, `http://127.0.0.1:${rx.port}/switch`, ['*']);
      const d = await sendTest(svc, t, ep.id);
      // WEBHOOK_RETRY_SCHEDULE 0,1,1: three attempts, then the dead letter (it used to stay
      // PENDING with no attempt for ever, holding one of the endpoint's in-flight slots).
      for (let n = 1; n <= 2; n++) {
        await attempted(svc, t, ep.id, d.id, n);
        advance(svc, 1_500);
      }
      const dead = await until(
        () => deliveries(svc, t, ep.id),
        (ds) => ds.some((x: Json) => x.id === d.id && x.status === 'DEAD_LETTERED'),
        'the 101 delivery dead-lettered',
        10_000,
      );
      const row = dead.find((x: Json) => x.id === d.id);
      expect(row.attempts).toBe(3);
      expect(row.last_error).toContain('101');
      await svc.close();
      closed = true;
    } finally {
      if (!closed) await svc.close();
      await rx.close();
    }
  }, 30_000);

  it('the test event answers its own delivery after the service clock stepped back', async () => {
    const later = new Date(Date.parse(NOON) + 86_400_000).toISOString();
    let svc: Running = await startWebhookApp({ now: later, env: { WEBHOOK_POLL_MS: '60000' } });
    try {
      const t = await hookUser(svc);
      const ep = await createEndpoint(svc, t, 'http://127.0.0.1:9/none', ['*']);
      for (let i = 0; i < 6; i++) await sendTest(svc, t, ep.id);
      await svc.close({ keepData: true });
      // Back a day: new delivery ids sort before the six.
      svc = await startWebhookApp({
        dataDir: svc.dataDir,
        now: NOON,
        env: { WEBHOOK_POLL_MS: '60000' },
      });
      const d = await sendTest(svc, t, ep.id);
      expect(d).toMatchObject({ event_type: 'webhook.test', status: 'PENDING', is_replay: false });
      const all = await deliveries(svc, t, ep.id);
      expect(all).toHaveLength(7);
      expect(all.filter((x: Json) => x.id === d.id)).toHaveLength(1);
    } finally {
      await svc.close();
    }
  });
});
