import { expect } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { RESPONDER } from './access.js';
import type { JsonResponse, Running } from './harness.js';
import { as, keyFor, ORDER_SCOPES, trader, type Svc, type Trader } from './orders.js';

/** A requester's scopes (orders) and a responder's (orders plus rfq:respond). */
export const REQUESTER_SCOPES = [...ORDER_SCOPES, 'notifications:read', 'websocket'];
export const RESPONDER_SCOPES = [...REQUESTER_SCOPES, 'rfq:respond', 'wallet:write'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** The seeded approved responder, with a paper key (or a live one). */
export function responder(svc: Svc, environment: 'test' | 'live' = 'test'): Promise<Trader> {
  return trader(svc, RESPONDER, { scopes: RESPONDER_SCOPES, environment });
}

/** The same user's key for the other world. */
export function liveKey(svc: Svc, t: Trader, scopes = RESPONDER_SCOPES): Promise<Trader> {
  return keyFor(svc, t.email, t.token, { environment: 'live', scopes });
}

/** RFQ calls with one credential. */
export function rfqClient(svc: Svc) {
  const call = (
    t: Pick<Trader, 'key'>,
    method: string,
    path: string,
    json?: unknown,
    headers?: Record<string, string>,
  ) => as(t, `${svc.api}/rfq${path}`, { method, json, headers });
  return {
    call,
    createRaw: (t: Trader, body: unknown) => call(t, 'POST', '', body),
    async create(t: Trader, marketId: string, quantity: number, expires?: number): Promise<Json> {
      const res = await call(t, 'POST', '', {
        market_id: marketId,
        quantity,
        ...(expires === undefined ? {} : { expires_in_seconds: expires }),
      });
      expect([res.status, res.text]).toEqual([201, expect.any(String)]);
      return res.body;
    },
    quoteRaw: (t: Trader, rfqId: string, body: unknown) =>
      call(t, 'POST', `/${rfqId}/quotes`, body),
    async quote(t: Trader, rfqId: string, body: Record<string, number>): Promise<Json> {
      const res = await call(t, 'POST', `/${rfqId}/quotes`, body);
      expect([res.status, res.text]).toEqual([201, expect.any(String)]);
      return res.body;
    },
    quotes: (t: Trader, rfqId: string) => call(t, 'GET', `/${rfqId}/quotes`),
    acceptRaw: (t: Trader, quoteId: string, body: unknown, headers?: Record<string, string>) =>
      call(t, 'POST', `/quotes/${quoteId}/accept`, body, headers),
    async accept(t: Trader, quoteId: string, action: string, side: string): Promise<Json> {
      const res = await call(t, 'POST', `/quotes/${quoteId}/accept`, { action, side });
      expect([res.status, res.text]).toEqual([200, expect.any(String)]);
      return res.body;
    },
    withdraw: (t: Trader, quoteId: string) => call(t, 'DELETE', `/quotes/${quoteId}`),
    get: (t: Trader, rfqId: string) => call(t, 'GET', `/${rfqId}`),
    cancel: (t: Trader, rfqId: string) => call(t, 'DELETE', `/${rfqId}`),
    open: (t: Trader, query = '') => call(t, 'GET', `/open${query}`),
  };
}

/** GET /wallet of a key: balance, reserved and available cents. */
export async function walletCents(
  svc: Svc,
  t: Pick<Trader, 'key'>,
): Promise<{ balance: number; reserved: number; available: number }> {
  const res: JsonResponse = await as(t, `${svc.api}/wallet`);
  expect(res.status).toBe(200);
  return {
    balance: res.body.balance_cents as number,
    reserved: res.body.reserved_cents as number,
    available: res.body.available_cents as number,
  };
}

/** Moves the service clock (the app runs on a ManualClock). */
export function advance(svc: Running, ms: number): void {
  (svc.clock as ManualClock).advance(ms);
}
