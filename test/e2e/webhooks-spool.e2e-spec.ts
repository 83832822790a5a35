import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Running } from '../support/harness.js';
import { limit, paperQuery, place, TRADABLE, trader, type Trader } from '../support/orders.js';
import { startService, type ServiceProcess } from '../support/process.js';
import { Receiver } from '../support/receiver.js';
import {
  createEndpoint,
  HOOK_SCOPES,
  hookUser,
  platformQuery,
  sleep,
  startWebhookApp,
  until,
  WEBHOOK_ENV,
  type Json,
} from '../support/webhooks.js';
import { insertionOrder } from '../support/db-introspection.js';
import { failWrites } from '../support/fail-writes.js';
import { dropDatabaseOf, openDatabaseOf, serviceDatabaseEnv } from '../support/test-database.js';

/**
 * No webhook event is lost between the engine's commit and the outbox (issue 7, durability of
 * issue 4): a batch's webhook events commit in the engine database with its orders (the webhook
 * spool), then move to the platform database's outbox. Here the platform database really refuses
 * the move (a trigger on webhook_events), while the order is still answered 201; the events must
 * arrive once the database takes writes again: on the retry timer, after a restart, and after a
 * kill -9. A move repeated after a crash (spool not yet cleaned) must not record an event twice.
 */

const refusals = new Map<string, () => void>();
/** Makes the platform database refuse (or take again) new webhook events. */
function refuseEvents(dataDir: string, refuse: boolean): void {
  if (refuse) {
    if (!refusals.has(dataDir))
      refusals.set(dataDir, failWrites(dataDir, 'platform', 'webhook_events', 'INSERT'));
  } else {
    refusals.get(dataDir)?.();
    refusals.delete(dataDir);
  }
}

const spoolSize = (svc: { dataDir: string }): number =>
  paperQuery<{ n: number }>(svc, 'SELECT COUNT(*) AS n FROM webhook_spool')[0].n;

const storedCreated = (svc: { dataDir: string }, orderId: string): Json[] =>
  platformQuery<{ payload: string }>(
    svc,
    "SELECT payload FROM webhook_events WHERE type = 'order.created'",
  )
    .map((r) => JSON.parse(r.payload))
    .filter((e: Json) => e.data.order.id === orderId);

const receivedFor = (rx: Receiver, path: string, orderId: string) =>
  rx.at(path).filter((r) => r.json?.data?.order?.id === orderId);

describe('webhooks: the spool keeps events the platform database refused', () => {
  it('moves them on the retry timer and after a restart, each event once', async () => {
    const rx = await Receiver.start();
    let svc: Running = await startWebhookApp();
    try {
      const t = await hookUser(svc);
      await createEndpoint(svc, t, rx.url('/spool'), ['order.created']);
      const m = TRADABLE[0];

      // Baseline: moved at once, nothing left in the spool.
      const a = await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 10, 1));
      await rx.waitFor('/spool', 1);
      expect(receivedFor(rx, '/spool', a.id)).toHaveLength(1);
      expect(spoolSize(svc)).toBe(0);

      // The platform database refuses: the order is still taken, its event waits in the spool.
      refuseEvents(svc.dataDir, true);
      const b = await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 10, 2));
      expect(b.status).toBe('OPEN');
      expect(spoolSize(svc)).toBe(1);
      expect(storedCreated(svc, b.id)).toHaveLength(0);
      expect(svc.logs.some((l) => l.includes('stay spooled and are retried'))).toBe(true);
      await sleep(300);
      expect(receivedFor(rx, '/spool', b.id)).toHaveLength(0);

      // It takes writes again: the retry timer moves the event and it is delivered.
      refuseEvents(svc.dataDir, false);
      await until(
        () => receivedFor(rx, '/spool', b.id).length,
        (n) => n === 1,
        'the refused event delivered after the retry',
      );
      expect(spoolSize(svc)).toBe(0);
      expect(storedCreated(svc, b.id)).toHaveLength(1);
      expect(storedCreated(svc, b.id)[0].created_at).toBe(b.created_at);

      // Refused again, then the service stops before any retry could succeed.
      refuseEvents(svc.dataDir, true);
      const c = await place(svc, t, limit(m, 'BUY', 'YES', m.reference - 10, 3));
      expect(spoolSize(svc)).toBe(1);
      await svc.close({ keepData: true });
      refuseEvents(svc.dataDir, false);
      svc = await startWebhookApp({ dataDir: svc.dataDir });
      await until(
        () => receivedFor(rx, '/spool', c.id).length,
        (n) => n === 1,
        'the spooled event delivered after the restart',
      );
      expect(spoolSize(svc)).toBe(0);
      const [event] = storedCreated(svc, c.id);
      expect(event).toMatchObject({ type: 'order.created', environment: 'test' });
      expect(event.data.order).toMatchObject({ id: c.id, quantity: 3, status: 'OPEN' });

      // A crash after the move but before the spool's cleanup: the same batch is spooled again.
      // Moving it once more finds its event stored and records nothing new.
      const events = platformQuery<{ n: number }>(svc, 'SELECT COUNT(*) AS n FROM webhook_events');
      const dlv = platformQuery<{ n: number }>(svc, 'SELECT COUNT(*) AS n FROM webhook_deliveries');
      await svc.close({ keepData: true });
      const paper = openDatabaseOf(svc.dataDir, 'paper');
      try {
        paper.prepare('INSERT INTO webhook_spool (payload, created_at) VALUES (?, ?)').run(
          JSON.stringify([
            {
              id: event.id,
              createdAt: event.created_at,
              type: 'order.created',
              userId: t.userId,
              data: event.data,
            },
          ]),
          event.created_at,
        );
      } finally {
        paper.close();
      }
      svc = await startWebhookApp({ dataDir: svc.dataDir });
      await until(
        () => spoolSize(svc),
        (n) => n === 0,
        'the spool emptied at boot',
      );
      await sleep(300);
      expect(platformQuery(svc, 'SELECT COUNT(*) AS n FROM webhook_events')).toEqual(events);
      expect(platformQuery(svc, 'SELECT COUNT(*) AS n FROM webhook_deliveries')).toEqual(dlv);
      expect(receivedFor(rx, '/spool', c.id)).toHaveLength(1);
    } finally {
      await svc.close();
      await rx.close();
    }
  });
});

describe('webhooks: a spool backlog', () => {
  it('is moved oldest first in chunks, to the endpoints of the commit only, with one error logged', async () => {
    const rx = await Receiver.start();
    const svc: Running = await startWebhookApp();
    try {
      const t = await hookUser(svc);
      await createEndpoint(svc, t, rx.url('/first'), ['order.created']);
      // Another user's endpoint, subscribed to another type: neither makes a batch spooled.
      const other = await hookUser(svc);
      await createEndpoint(svc, other, rx.url('/other'), ['order.filled']);
      const bystander = await hookUser(svc);
      const m = TRADABLE[2];
      const resting = (q: number) => limit(m, 'BUY', 'YES', m.reference - 10, q);

      refuseEvents(svc.dataDir, true);
      await place(svc, bystander, resting(1));
      await place(svc, other, resting(1));
      expect(spoolSize(svc)).toBe(0);

      const placed: string[] = [];
      for (let i = 0; i < 150; i++) placed.push((await place(svc, t, resting(1 + (i % 7)))).id);
      expect(spoolSize(svc)).toBe(150);
      // One error for the outage, not one per batch.
      expect(svc.logs.filter((l) => l.includes('stay spooled and are retried'))).toHaveLength(1);
      // An endpoint created after the commits does not receive their events.
      await createEndpoint(svc, t, rx.url('/later'), ['order.created']);

      refuseEvents(svc.dataDir, false);
      const got = await rx.waitFor('/first', 150, 10_000);
      expect(new Set(got.map((r) => r.json.data.order.id))).toEqual(new Set(placed));
      await until(
        () => spoolSize(svc),
        (n) => n === 0,
        'the spool drained',
      );
      // Recorded in commit order (webhook_events is insert-only).
      const recorded = platformQuery<{ payload: string }>(
        svc,
        `SELECT payload FROM webhook_events WHERE type = 'order.created'
         ORDER BY ${insertionOrder(svc.dataDir, 'platform')}`,
      ).map((r) => JSON.parse(r.payload).data.order.id as string);
      expect(recorded).toEqual(placed);
      expect(svc.logs.some((l) => l.includes('moving to the outbox again'))).toBe(true);

      // Afterwards a new order reaches both endpoints at once.
      const after = await place(svc, t, resting(9));
      await rx.waitFor('/later', 1);
      await rx.waitFor('/first', 151);
      expect(rx.at('/later').map((r) => r.json.data.order.id)).toEqual([after.id]);
      expect(receivedFor(rx, '/first', after.id)).toHaveLength(1);
      expect(rx.at('/other')).toHaveLength(0);
    } finally {
      await svc.close();
      await rx.close();
    }
  });
});

describe('webhooks: events of an acknowledged order survive kill -9 before the outbox write', () => {
  it('the event spooled with the order is delivered after the restart', async () => {
    const rx = await Receiver.start();
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-spool-kill-'));
    // On PostgreSQL + Redis in that pass (the same database again after the kill).
    const env = { ...WEBHOOK_ENV, LOG_LEVEL: 'warn', ...(await serviceDatabaseEnv(dataDir)) };
    let svc: ServiceProcess = await startService({ dataDir, env });
    try {
      const t: Trader = await trader(svc, `spool-${process.pid}@hooks.test`, {
        scopes: HOOK_SCOPES,
      });
      await createEndpoint(svc as unknown as Running, t, rx.url('/killed'), ['order.created']);
      const m = TRADABLE[1];

      refuseEvents(dataDir, true);
      const o = await place(svc, t, limit(m, 'SELL', 'NO', 100 - (m.reference - 10), 4));
      expect(o.status).toBe('OPEN');
      // Answered: the order and its spooled event are committed; the outbox never got it.
      await svc.stop('SIGKILL');
      expect(spoolSize(svc)).toBe(1);
      expect(storedCreated(svc, o.id)).toHaveLength(0);

      refuseEvents(dataDir, false);
      svc = await startService({ dataDir, env });
      const got = await rx.waitFor('/killed', 1, 10_000);
      expect(got.map((r) => r.json.data.order.id)).toEqual([o.id]);
      expect(got[0].json).toMatchObject({ type: 'order.created', environment: 'test' });
      expect(storedCreated(svc, o.id)).toHaveLength(1);
      expect(spoolSize(svc)).toBe(0);
    } finally {
      await svc.stop('SIGKILL');
      await rx.close();
      rmSync(dataDir, { recursive: true, force: true });
      await dropDatabaseOf(dataDir);
    }
  });
});
