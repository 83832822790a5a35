import Stripe from 'stripe';
import { verifiedAccount } from './access.js';
import { http, startApp, type JsonResponse, type Running, type StartOptions } from './harness.js';
import { ManualClock } from '../../src/common/clock/clock.js';
import { ORDER_SCOPES, NOON, as, keyFor, trader, type Trader } from './orders.js';
import type { Received } from './receiver.js';
import { openDatabaseOf } from './test-database.js';

// Webhook bodies are read field by field.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** The worker polls every 20 ms, three attempts 0 s / 1 s / 1 s apart, the price feed stopped. */
export const WEBHOOK_ENV: Record<string, string> = {
  WEBHOOK_POLL_MS: '20',
  WEBHOOK_RETRY_SCHEDULE: '0,1,1',
  SANDBOX_FEED_INTERVAL_MS: '0',
  RATE_LIMITS_ENABLED: 'false',
};

export function startWebhookApp(opts: StartOptions = {}): Promise<Running> {
  return startApp({ now: NOON, ...opts, env: { ...WEBHOOK_ENV, ...opts.env } });
}

export const HOOK_SCOPES = [
  ...ORDER_SCOPES,
  'webhooks:read',
  'webhooks:write',
  'notifications:read',
  'notifications:write',
];

let seq = 0;

/** A fresh verified user (or the named seeded one) with a key holding the webhook scopes. */
export async function hookUser(
  svc: Running,
  opts: { email?: string; environment?: 'test' | 'live'; scopes?: string[] } = {},
): Promise<Trader> {
  const body = { scopes: opts.scopes ?? HOOK_SCOPES, environment: opts.environment ?? 'test' };
  if (opts.email !== undefined) return trader(svc, opts.email, body);
  const email = `wh-${process.pid}-${Date.now()}-${++seq}@hooks.test`;
  const token = await verifiedAccount(svc, email);
  return keyFor(svc, email, token, body);
}

/** Moves the service clock of an in-process app. */
export function advance(svc: Running, ms: number): void {
  (svc.clock as ManualClock).advance(ms);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until `pred` holds (wall time), returning the last value; throws with it otherwise. */
export async function until<T>(
  fn: () => Promise<T> | T,
  pred: (v: T) => boolean,
  what = 'condition',
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (pred(v)) return v;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v).slice(0, 800)}`);
    }
    await sleep(15);
  }
}

export function createEndpointRaw(
  svc: Running,
  t: Pick<Trader, 'key'>,
  body: Record<string, unknown>,
): Promise<JsonResponse> {
  return as(t, `${svc.api}/webhooks`, { method: 'POST', json: body });
}

/** POST /webhooks, asserting 201; the body includes the one-time `secret`. */
export async function createEndpoint(
  svc: Running,
  t: Pick<Trader, 'key'>,
  url: string,
  events: string[] = ['*'],
): Promise<Json> {
  const res = await createEndpointRaw(svc, t, { url, events });
  if (res.status !== 201) throw new Error(`create endpoint: ${res.status} ${res.text}`);
  return res.body;
}

/** Every delivery of an endpoint (all pages), newest first. */
export async function deliveries(
  svc: Running,
  t: Pick<Trader, 'key'>,
  endpointId: string,
  status?: string,
): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ limit: '200' });
    if (status !== undefined) q.set('status', status);
    if (cursor !== null) q.set('cursor', cursor);
    const res = await as(t, `${svc.api}/webhooks/${endpointId}/deliveries?${q.toString()}`);
    if (res.status !== 200) throw new Error(`deliveries: ${res.status} ${res.text}`);
    out.push(...(res.body.data as Json[]));
    cursor = res.body.next_cursor as string | null;
  } while (cursor !== null);
  return out;
}

export async function health(svc: Running, t: Pick<Trader, 'key'>, id: string): Promise<Json> {
  const res = await as(t, `${svc.api}/webhooks/${id}/health`);
  if (res.status !== 200) throw new Error(`health: ${res.status} ${res.text}`);
  return res.body;
}

export async function getEndpoint(svc: Running, t: Pick<Trader, 'key'>, id: string): Promise<Json> {
  const res = await as(t, `${svc.api}/webhooks/${id}`);
  if (res.status !== 200) throw new Error(`get endpoint: ${res.status} ${res.text}`);
  return res.body;
}

/** POST /webhooks/{id}/test, asserting 202; returns the delivery. */
export async function sendTest(svc: Running, t: Pick<Trader, 'key'>, id: string): Promise<Json> {
  const res = await as(t, `${svc.api}/webhooks/${id}/test`, { method: 'POST' });
  if (res.status !== 202) throw new Error(`test event: ${res.status} ${res.text}`);
  return res.body;
}

export function post(
  svc: Running,
  t: Pick<Trader, 'key'>,
  path: string,
  json?: unknown,
): Promise<JsonResponse> {
  return as(t, `${svc.api}${path}`, { method: 'POST', json });
}

/** Waits until a delivery reaches `status`; returns it. */
export async function deliveryIn(
  svc: Running,
  t: Pick<Trader, 'key'>,
  endpointId: string,
  deliveryId: string,
  status: string,
  timeoutMs = 5000,
): Promise<Json> {
  const list = await until(
    () => deliveries(svc, t, endpointId),
    (ds) => ds.some((d: Json) => d.id === deliveryId && d.status === status),
    `delivery ${deliveryId} ${status}`,
    timeoutMs,
  );
  return list.find((d: Json) => d.id === deliveryId);
}

/** Waits until a delivery has recorded `n` attempts (the worker has seen the answer); returns it. */
export async function attempted(
  svc: Running,
  t: Pick<Trader, 'key'>,
  endpointId: string,
  deliveryId: string,
  n: number,
  timeoutMs = 5000,
): Promise<Json> {
  const list = await until(
    () => deliveries(svc, t, endpointId),
    (ds) => ds.some((d: Json) => d.id === deliveryId && d.attempts >= n),
    `delivery ${deliveryId} with ${n} attempt(s)`,
    timeoutMs,
  );
  return list.find((d: Json) => d.id === deliveryId);
}

/** stripe-node's verifier (an independent implementation of the scheme). */
export const stripe = new Stripe('sk_test_unused_by_webhook_verification');

/**
 * Verifies a received delivery with stripe-node's constructEvent and the given secret, checking
 * the timestamp against `receivedAtMs` (the service clock) with Stripe's default 300 s tolerance.
 */
export function verify(r: Received, secret: string, receivedAtMs: number): Json {
  return stripe.webhooks.constructEvent(
    r.body,
    r.headers['svc-webhook-signature'],
    secret,
    300,
    undefined,
    receivedAtMs,
  );
}

/** Every row of a platform.sqlite table query (read-only, outside the app). */
export function platformQuery<T>(
  svc: Pick<Running, 'dataDir'>,
  sql: string,
  ...params: unknown[]
): T[] {
  const db = openDatabaseOf(svc.dataDir, 'platform', { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

export { http };
