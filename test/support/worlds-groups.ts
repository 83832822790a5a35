import { expect } from '@jest/globals';
import type { Running } from './harness.js';
import { as, type Trader } from './orders.js';
import { worldDatabaseExists } from './test-database.js';

/** An ephemeral world and its key (a Trader-like `{key}` for `as`). */
export interface WorldHandle {
  id: string;
  key: string;
}

/** POST /sandbox/worlds with the caller's key, asserting 201. */
export async function openWorld(
  svc: Pick<Running, 'api'>,
  t: Pick<Trader, 'key'>,
  body: Record<string, unknown> = {},
): Promise<WorldHandle> {
  const r = await as(t, `${svc.api}/sandbox/worlds`, { method: 'POST', json: body });
  expect(r.status).toBe(201);
  return { id: r.body.id as string, key: r.body.key as string };
}

/** DELETE /sandbox/worlds/{id}, asserting 204, its file gone and its key refused. */
export async function deleteWorld(
  svc: Pick<Running, 'api' | 'dataDir'>,
  t: Pick<Trader, 'key'>,
  w: WorldHandle,
): Promise<void> {
  const r = await as(t, `${svc.api}/sandbox/worlds/${w.id}`, { method: 'DELETE' });
  expect(r.status).toBe(204);
  expect(worldDatabaseExists(svc.dataDir, w.id)).toBe(false);
  expect((await as(w, `${svc.api}/wallet`)).status).toBe(401);
}

/** The ids of a list answer's `data`. */
export const idsOf = (body: { data: { id: string }[] }): string[] => body.data.map((r) => r.id);
