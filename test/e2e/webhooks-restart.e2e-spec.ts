import { describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import type { Running } from '../support/harness.js';
import { limit, NOON, place, TRADABLE } from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import {
  createEndpoint,
  deliveries,
  hookUser,
  startWebhookApp,
  until,
  type Json,
} from '../support/webhooks.js';
import { openDatabaseOf } from '../support/test-database.js';

/**
 * At-least-once across a restart (issue 7): deliveries are stored before they are attempted and
 * stay PENDING until an outcome is recorded, so stopping the service in the middle of a backlog
 * loses nothing. One endpoint's receiver is down (connection refused), another's path answers
 * 500; the app stops while the backlog is queued, and comes back on the same DATA_DIR with both
 * answering 200.
 */
describe('webhooks: at-least-once across a restart', () => {
  it('every queued delivery arrives at least once after the restart', async () => {
    const up = await Receiver.start();
    let down = await Receiver.start();
    const downPort = down.port;
    await down.close(); // nothing listens there now
    up.on('/restart/failing', { status: 500 });

    let svc: Running = await startWebhookApp();
    try {
      const t = await hookUser(svc);
      const refused = await createEndpoint(svc, t, `http://127.0.0.1:${downPort}/restart/down`, [
        'order.created',
      ]);
      const failing = await createEndpoint(svc, t, up.url('/restart/failing'), ['order.created']);

      const m = TRADABLE[0];
      const orders: Json[] = [];
      for (let i = 0; i < 25; i++) {
        orders.push(await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 10, i + 1)));
      }
      // Every event has a stored delivery per endpoint the moment the order call returns.
      const before = {
        refused: await deliveries(svc, t, refused.id),
        failing: await deliveries(svc, t, failing.id),
      };
      expect(before.refused).toHaveLength(25);
      expect(before.failing).toHaveLength(25);
      const queued = before.refused.concat(before.failing);
      expect(queued.every((d: Json) => d.status === 'PENDING')).toBe(true);
      const eventIds = new Set(before.refused.map((d: Json) => d.event_id));
      expect(new Set(before.failing.map((d: Json) => d.event_id))).toEqual(eventIds);

      // Stop in the middle of the backlog (first attempts failing or not yet made).
      await svc.close({ keepData: true });
      const attemptedBeforeStop = up.at('/restart/failing').length;
      expect(attemptedBeforeStop).toBeLessThanOrEqual(25);

      // Both receivers answer 200 now; the service comes back a minute later on the same data.
      up.on('/restart/failing', { status: 200 });
      down = await Receiver.start(downPort);
      svc = await startWebhookApp({
        dataDir: svc.dataDir,
        now: new Date(Date.parse(NOON) + 60_000).toISOString(),
      });

      const gotDown = await down.waitFor('/restart/down', 25, 10_000);
      await until(
        () =>
          new Set(
            up
              .at('/restart/failing')
              .slice(attemptedBeforeStop)
              .map((r) => r.json.id),
          ),
        (s) => s.size === 25,
        'every event at the failing path after the restart',
        10_000,
      );
      expect(new Set(gotDown.map((r) => r.json.id))).toEqual(eventIds);
      const atFailing = new Set(up.at('/restart/failing').map((r) => r.json.id));
      expect(atFailing).toEqual(eventIds);
      // The orders are the ones placed, each once per endpoint (at least once: no loss).
      expect(new Set(gotDown.map((r) => r.json.data.order.id))).toEqual(
        new Set(orders.map((o) => o.id)),
      );

      // And the log agrees: every delivery SUCCEEDED, with the ids it had before the restart.
      for (const [ep, was] of [
        [refused, before.refused],
        [failing, before.failing],
      ] as const) {
        const after = await until(
          () => deliveries(svc, t, ep.id),
          (ds) => ds.every((d: Json) => d.status === 'SUCCEEDED'),
          `every delivery of ${ep.id} SUCCEEDED`,
        );
        expect(after.map((d: Json) => d.id).sort()).toEqual(was.map((d: Json) => d.id).sort());
      }
      const ids = new Set(gotDown.map((r) => r.headers['svc-webhook-id']));
      expect(ids).toEqual(new Set(before.refused.map((d: Json) => d.id)));
    } finally {
      await svc.close();
      await up.close();
      await down.close();
    }
  });
});

describe('webhooks: an order answered during a graceful shutdown keeps its webhook event', () => {
  it('the order in flight at close is stored, answered 201 and has its order.created event', async () => {
    const rx = await Receiver.start();
    const svc = await startWebhookApp({ env: { WEBHOOK_POLL_MS: '60000' } });
    try {
      const t = await hookUser(svc);
      await createEndpoint(svc, t, rx.url('/shutdown'), ['order.created']);
      const m = TRADABLE[0];
      const body = JSON.stringify(limit(m, 'BUY', 'YES', 3, 1));
      // Half a request on a raw socket, the rest once the shutdown has begun.
      const sock = connect({ host: '127.0.0.1', port: Number(new URL(svc.baseUrl).port) });
      await new Promise<void>((r) => sock.once('connect', () => r()));
      let raw = '';
      sock.on('data', (c: Buffer) => (raw += c.toString()));
      // Connection: close, so the whole answer is in once the server closes the socket.
      const answered = new Promise<void>((r) => sock.once('close', () => r()));
      sock.write(
        `POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.key}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`,
      );
      await new Promise((r) => setTimeout(r, 200));
      const closing = svc.close({ keepData: true });
      await new Promise((r) => setTimeout(r, 300));
      sock.write(body.slice(10));
      await closing;
      await answered;
      expect(raw.split('\r\n')[0]).toBe('HTTP/1.1 201 Created');
      const orderId = JSON.parse(raw.slice(raw.indexOf('{'))).id as string;
      const db = openDatabaseOf(svc.dataDir, 'platform', { readonly: true });
      try {
        const events = db
          .prepare("SELECT payload FROM webhook_events WHERE type = 'order.created'")
          .all() as { payload: string }[];
        const ids = events.map((e) => JSON.parse(e.payload).data.order.id as string);
        expect(ids).toContain(orderId);
      } finally {
        db.close();
      }
    } finally {
      await rx.close();
    }
  });
});

describe('webhooks: a slow receiver does not hold a stopping service', () => {
  it('closing answers new requests 503 at once and waits SHUTDOWN_DRAIN_MS, not the receiver; the delivery comes again after the restart', async () => {
    const rx = await Receiver.start();
    rx.on('/slow', { status: 200, delayMs: 30_000 });
    let svc: Running = await startWebhookApp({ env: { SHUTDOWN_DRAIN_MS: '1000' } });
    try {
      const t = await hookUser(svc);
      const ep = await createEndpoint(svc, t, rx.url('/slow'), ['order.created']);
      const m = TRADABLE[0];
      await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 10, 1));
      const first = await rx.waitFor('/slow', 1, 5_000);
      // In flight: counted once it ends (or, cut short, at the next start).
      expect((await deliveries(svc, t, ep.id))[0]).toMatchObject({
        status: 'PENDING',
        attempts: 0,
      });
      const t0 = Date.now();
      const closing = svc.close({ keepData: true });
      await new Promise((r) => setTimeout(r, 200));
      // While the worker waits for its delivery, the service takes no new work.
      const late = await fetch(`${svc.api}/orders`, {
        method: 'POST',
        headers: { 'x-api-key': t.key, 'content-type': 'application/json' },
        body: JSON.stringify(limit(m, 'BUY', 'YES', m.reference - 10, 2)),
      });
      expect(late.status).toBe(503);
      expect(late.headers.get('cache-control')).toBe('no-store');
      expect(((await late.json()) as Json).error.code).toBe('SERVICE_UNAVAILABLE');
      expect((await fetch(`${svc.api}/health/ready`)).status).toBe(503);
      await closing;
      // SHUTDOWN_DRAIN_MS (1 s), not the receiver's 30 s.
      expect(Date.now() - t0).toBeLessThan(10_000);

      // The delivery cut short is attempted again after the restart (at least once).
      rx.on('/slow', { status: 200 });
      svc = await startWebhookApp({
        dataDir: svc.dataDir,
        now: new Date(Date.parse(NOON) + 60_000).toISOString(),
      });
      const again = await rx.waitFor('/slow', 2, 10_000);
      expect(again[1].json.id).toBe(first[0].json.id);
      // Both POSTs the receiver got are counted: the one cut short and the one that succeeded.
      const [d] = await until(
        () => deliveries(svc, t, ep.id),
        (ds) => ds[0]?.status === 'SUCCEEDED',
        'the delivery SUCCEEDED',
      );
      expect(d).toMatchObject({ status: 'SUCCEEDED', attempts: 2 });
    } finally {
      await svc.close();
      await rx.close();
    }
  });
});

describe('webhooks: the last allowed attempt cut short by a stop', () => {
  it('is counted at the next start and ends the delivery (dead-lettered, not sent past the schedule)', async () => {
    const rx = await Receiver.start();
    rx.on('/last', { status: 200, delayMs: 30_000 });
    const env = { SHUTDOWN_DRAIN_MS: '300', WEBHOOK_RETRY_SCHEDULE: '0' }; // one attempt in all
    let svc: Running = await startWebhookApp({ env });
    try {
      const t = await hookUser(svc);
      const ep = await createEndpoint(svc, t, rx.url('/last'), ['order.created']);
      const m = TRADABLE[0];
      await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 10, 1));
      await rx.waitFor('/last', 1, 5_000);
      await svc.close({ keepData: true }); // the attempt in flight is cut short
      rx.on('/last', { status: 200 });
      svc = await startWebhookApp({
        dataDir: svc.dataDir,
        now: new Date(Date.parse(NOON) + 60_000).toISOString(),
        env,
      });
      const [d] = await deliveries(svc, t, ep.id);
      expect(d).toMatchObject({
        status: 'DEAD_LETTERED',
        attempts: 1,
        last_error: 'the last attempt was cut short by a restart',
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(rx.at('/last')).toHaveLength(1);
    } finally {
      await svc.close();
      await rx.close();
    }
  });
});
