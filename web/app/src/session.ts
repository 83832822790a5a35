// Signing in: a session (POST /auth/login) mints one test key for this tab (POST /api-keys,
// environment test), kept in sessionStorage and reused while it is valid. The session token is
// not kept; a live key is never created or accepted.
import { ApiError, get, request, useKey } from './api.js';
import type { Me } from './types.js';

const KEY_ITEM = 'svc-app.test-key';

/** What the app does: read and trade on the paper engine, its sandbox, watchlists and comments. */
export const APP_SCOPES = [
  'markets:read',
  'orders:read',
  'orders:write',
  'wallet:read',
  'wallet:write',
  'websocket',
  'comments:read',
  'comments:write',
  'watchlist:read',
  'watchlist:write',
];

export function storedKey(): string | null {
  const key = sessionStorage.getItem(KEY_ITEM);
  return key !== null && key.startsWith('svc_test_') ? key : null;
}

/** The caller with the stored key, or null (no key, or no longer valid: it is forgotten). */
export async function restore(): Promise<Me | null> {
  const key = storedKey();
  if (key === null) return null;
  useKey(key);
  try {
    const me = await get<Me>('/auth/me');
    if (me.credential.environment === 'test') return me;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 401) throw err;
  }
  signOut();
  return null;
}

export async function signIn(email: string, password: string): Promise<Me> {
  const session = await request<{ token: string }>('POST', '/auth/login', {
    body: { email, password },
  });
  const created = await request<{ key: string; environment: string }>('POST', '/api-keys', {
    token: session.token,
    body: {
      name: `demo app ${new Date().toISOString().slice(0, 16)}`,
      environment: 'test',
      scopes: APP_SCOPES,
      acknowledge_write_scopes: true,
      expires_in_days: 1,
    },
  });
  if (created.environment !== 'test' || !created.key.startsWith('svc_test_')) {
    throw new Error('The service returned a key that is not a test key; it was not used');
  }
  sessionStorage.setItem(KEY_ITEM, created.key);
  useKey(created.key);
  return get<Me>('/auth/me');
}

export function signOut(): void {
  sessionStorage.removeItem(KEY_ITEM);
  useKey(null);
}
