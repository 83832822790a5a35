// Signing in: a session (POST /auth/login) mints one test key for this tab (POST /api-keys,
// environment test), kept in sessionStorage and reused while it is valid. The session token is
// not kept; a live key is never created or accepted. The tab may switch to an ephemeral world it
// created (POST /sandbox/worlds): that world's key, shown once, is kept beside the tab's key and
// used for REST and the feed while the world is active.
import { ApiError, get, request, useKey } from './api.js';
import type { Me } from './types.js';

const KEY_ITEM = 'svc-app.test-key';
const WORLDS_ITEM = 'svc-app.worlds';
const ACTIVE_ITEM = 'svc-app.world';

/** A world this tab created: its id, name and key. */
export interface TabWorld {
  id: string;
  name: string | null;
  key: string;
}

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

/** The worlds whose keys this tab holds, by id. */
export function tabWorlds(): Record<string, TabWorld> {
  try {
    const parsed = JSON.parse(sessionStorage.getItem(WORLDS_ITEM) ?? '{}') as unknown;
    return typeof parsed === 'object' && parsed !== null
      ? (parsed as Record<string, TabWorld>)
      : {};
  } catch {
    return {};
  }
}

export function rememberWorld(w: TabWorld): void {
  if (!w.key.startsWith('svc_test_')) throw new Error('A world key is a test key');
  sessionStorage.setItem(WORLDS_ITEM, JSON.stringify({ ...tabWorlds(), [w.id]: w }));
}

/** Drops a world's key (deleted or expired); the tab leaves it if it was active. */
export function forgetWorld(id: string): void {
  const all = tabWorlds();
  delete all[id];
  sessionStorage.setItem(WORLDS_ITEM, JSON.stringify(all));
  if (sessionStorage.getItem(ACTIVE_ITEM) === id) setActiveWorld(null);
}

/** The world the tab is in, or null for the shared paper world. */
export function activeWorld(): TabWorld | null {
  const id = sessionStorage.getItem(ACTIVE_ITEM);
  const w = id === null ? undefined : tabWorlds()[id];
  // Only a test key is ever used, whatever the tab's storage was made to hold.
  return w !== undefined && typeof w.key === 'string' && w.key.startsWith('svc_test_') ? w : null;
}

/** Switches the tab's requests to a world it holds the key of, or back to the paper world. */
export function setActiveWorld(id: string | null): void {
  if (id === null || tabWorlds()[id] === undefined) sessionStorage.removeItem(ACTIVE_ITEM);
  else sessionStorage.setItem(ACTIVE_ITEM, id);
  useKey(currentKey());
}

/** The key the tab's requests and feed use: the active world's, else the tab's. */
export function currentKey(): string | null {
  return activeWorld()?.key ?? storedKey();
}

/**
 * The caller with the stored key, or null (no key, or no longer valid: it is forgotten). A world
 * key that stopped (the world was deleted or expired) sends the tab back to the paper world.
 */
export async function restore(): Promise<Me | null> {
  if (storedKey() === null) return null;
  for (;;) {
    useKey(currentKey());
    try {
      const me = await get<Me>('/auth/me');
      if (me.credential.environment === 'test') return me;
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 401) throw err;
    }
    const world = activeWorld();
    if (world === null) break;
    forgetWorld(world.id);
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
  sessionStorage.removeItem(WORLDS_ITEM);
  sessionStorage.removeItem(ACTIVE_ITEM);
  useKey(null);
}
