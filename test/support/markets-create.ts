import type { JsonResponse } from './harness.js';
import { as, keyFor, ORDER_SCOPES, trader, type Svc, type Trader } from './orders.js';

/** A test key that may create markets, trade them and listen to them. */
export const CREATE_SCOPES = [...ORDER_SCOPES, 'markets:write', 'websocket'];

/** A close_time well after the harness clock (2026-11-22T12:00Z). */
export const LATER = '2027-01-01T00:00:00.000Z';

/** A user's paper key (and live key) with CREATE_SCOPES; a fresh verified account unless seeded. */
export async function creator(svc: Svc, email?: string): Promise<{ paper: Trader; live: Trader }> {
  const paper = await trader(svc, email, { scopes: CREATE_SCOPES });
  const live = await keyFor(svc, paper.email, paper.token, {
    scopes: CREATE_SCOPES.filter((s) => s !== 'websocket'),
    environment: 'live',
  });
  return { paper, live };
}

/** A minimal valid POST /markets body. */
export function marketBody(slug: string, extra: Record<string, unknown> = {}) {
  return { title: `Market ${slug}`, slug, category: 'CULTURE', close_time: LATER, ...extra };
}

export function createMarket(svc: Svc, t: Trader, body: unknown): Promise<JsonResponse> {
  return as(t, `${svc.api}/markets`, { method: 'POST', json: body });
}

export function patchMarket(svc: Svc, t: Trader, id: string, body: unknown) {
  return as(t, `${svc.api}/markets/${id}`, { method: 'PATCH', json: body });
}

export function resolveMarket(svc: Svc, t: Trader, id: string, outcome: string) {
  return as(t, `${svc.api}/markets/${id}/resolve`, { method: 'POST', json: { outcome } });
}

/** Creates a market and returns it, failing the test on anything but 201. */
// Response bodies are read field by field, as JsonResponse's are.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = { id: string } & Record<string, any>;

export async function created(svc: Svc, t: Trader, body: unknown): Promise<Body> {
  const res = await createMarket(svc, t, body);
  if (res.status !== 201) throw new Error(`POST /markets: ${res.status} ${res.text}`);
  return res.body as Body;
}
