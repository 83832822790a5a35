import { expect } from '@jest/globals';
import type { JsonResponse } from './harness.js';
import { as, type Svc, type Trader } from './orders.js';

/** POST /sandbox/scenarios with the trader's key (the raw answer). */
export function scenarioRaw(
  svc: Svc,
  t: Pick<Trader, 'key'>,
  body: unknown,
): Promise<JsonResponse> {
  return as(t, `${svc.api}/sandbox/scenarios`, { method: 'POST', json: body });
}

/** POST /sandbox/scenarios, asserting 201; answers the scenario. */
export async function scenario(
  svc: Svc,
  t: Pick<Trader, 'key'>,
  body: Record<string, unknown>,
): Promise<{ id: string; remaining: number; [k: string]: unknown }> {
  const res = await scenarioRaw(svc, t, body);
  if (res.status !== 201) throw new Error(`scenario: ${res.status} ${res.text}`);
  expect(res.body.id).toMatch(/^scn_[a-z0-9]+$/);
  return res.body;
}

/** GET /sandbox/scenarios/{id}, asserting 200. */
export async function scenarioById(
  svc: Svc,
  t: Pick<Trader, 'key'>,
  id: string,
): Promise<{ id: string; remaining: number; times: number }> {
  const res = await as(t, `${svc.api}/sandbox/scenarios/${id}`);
  if (res.status !== 200) throw new Error(`get scenario: ${res.status} ${res.text}`);
  return res.body;
}

/** Every scenario of the trader (all pages). */
export async function allScenarios(svc: Svc, t: Pick<Trader, 'key'>): Promise<{ id: string }[]> {
  const out: { id: string }[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor === null ? '?limit=2' : `?limit=2&cursor=${cursor}`;
    const res = await as(t, `${svc.api}/sandbox/scenarios${q}`);
    if (res.status !== 200) throw new Error(`list scenarios: ${res.status} ${res.text}`);
    out.push(...(res.body.data as { id: string }[]));
    cursor = res.body.next_cursor as string | null;
  } while (cursor !== null);
  return out;
}
