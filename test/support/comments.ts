import { expect } from '@jest/globals';
import { http, type JsonResponse } from './harness.js';
import { as, keyFor, trader, type Svc, type Trader } from './orders.js';

/** Every comments scope, and what the notification and sandbox checks of the suites need. */
export const COMMENT_SCOPES = [
  'comments:read',
  'comments:write',
  'notifications:read',
  'orders:write',
  'wallet:write',
];

/** A user with a test key holding {@link COMMENT_SCOPES} (a fresh account unless seeded). */
export function commenter(svc: Svc, email: string): Promise<Trader> {
  return trader(svc, email, { scopes: COMMENT_SCOPES });
}

/** Another key of the same user: a test key, or a live one. */
export function otherKey(
  svc: Svc,
  t: Trader,
  environment: 'test' | 'live' = 'test',
  scopes = COMMENT_SCOPES,
): Promise<Trader> {
  return keyFor(svc, t.email, t.token, { scopes, environment });
}

/** POST /markets/{id}/comments with the user's key; the raw answer. */
export function postRaw(
  svc: Svc,
  t: Pick<Trader, 'key'>,
  marketId: string,
  json: unknown,
): Promise<JsonResponse> {
  return as(t, `${svc.api}/markets/${marketId}/comments`, { method: 'POST', json });
}

/** A comment as the API answers it. */
export interface Comment {
  id: string;
  market_id: string;
  parent_id: string | null;
  author: { id: string; username: string; display_name: string | null };
  body: string | null;
  status: 'VISIBLE' | 'HIDDEN' | 'DELETED';
  reply_count: number;
  report_count?: number;
  created_at: string;
  edited_at: string | null;
  environment: 'live' | 'test';
}

/** POST /markets/{id}/comments, asserting 201; the comment. */
export async function post(
  svc: Svc,
  t: Pick<Trader, 'key'>,
  marketId: string,
  body: string,
  parentId?: string,
): Promise<Comment> {
  const res = await postRaw(svc, t, marketId, {
    body,
    ...(parentId !== undefined ? { parent_id: parentId } : {}),
  });
  if (res.status !== 201) throw new Error(`post comment: ${res.status} ${res.text}`);
  return res.body as Comment;
}

/** GET a comments path with a key, or without any credential (`null`). */
export function read(svc: Svc, t: Pick<Trader, 'key'> | null, path: string): Promise<JsonResponse> {
  const url = `${svc.api}${path}`;
  return t === null ? http(url) : as(t, url);
}

/** The ids of a comment page, asserting 200. */
export async function ids(
  svc: Svc,
  t: Pick<Trader, 'key'> | null,
  path: string,
): Promise<string[]> {
  const res = await read(svc, t, path);
  expect(res.status).toBe(200);
  return (res.body.data as { id: string }[]).map((c) => c.id);
}
