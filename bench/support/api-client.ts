import type { EngineRuntime } from '../../src/modules/trading/engine-runtime.js';

/** A JSON request to the API under test: its status and parsed body. */
export type JsonCall = (
  path: string,
  init?: RequestInit & { json?: unknown },
) => Promise<{ status: number; body: Record<string, unknown> }>;

/** JSON requests relative to `api` (`http://127.0.0.1:<port>/api/v1`), for in-process benches. */
export function jsonClient(api: string): JsonCall {
  return async (path, init = {}) => {
    const headers = new Headers(init.headers);
    if (init.json !== undefined) headers.set('content-type', 'application/json');
    const res = await fetch(`${api}${path}`, {
      ...init,
      headers,
      body: init.json === undefined ? init.body : JSON.stringify(init.json),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
}

/** A test key of the seeded trader with `scopes`: its secret, its id and the trader's user id. */
export async function traderTestKey(
  json: JsonCall,
  scopes: string[],
): Promise<{ key: string; keyId: string; userId: string }> {
  const login = await json('/auth/login', {
    method: 'POST',
    json: { email: 'trader@sandbox.test', password: 'sandbox-password' },
  });
  const created = await json('/api-keys', {
    method: 'POST',
    headers: { authorization: `Bearer ${String(login.body.token)}` },
    json: {
      name: 'bench',
      environment: 'test',
      scopes,
      ...(scopes.some((s) => s.endsWith(':write')) ? { acknowledge_write_scopes: true } : {}),
    },
  });
  if (created.status !== 201) {
    throw new Error(`create key: ${created.status} ${JSON.stringify(created.body)}`);
  }
  const key = String(created.body.key);
  const me = await json('/auth/me', { headers: { 'x-api-key': key } });
  return { key, keyId: String(created.body.id), userId: (me.body.user as { id: string }).id };
}

/**
 * The engine's OPEN markets: the seeds also hold markets already CLOSED or RESOLVED (past sports
 * events), which refuse orders.
 */
export function openMarkets(rt: EngineRuntime): string[] {
  return rt.reads.marketIds().filter((id) => rt.marketSummary(id)?.status === 'OPEN');
}
