import { http } from './harness.js';

/** Logs a seeded account in and returns its session token. */
export async function sessionFor(api: string, email = 'trader@sandbox.test'): Promise<string> {
  const res = await http(`${api}/auth/login`, {
    method: 'POST',
    json: { email, password: 'sandbox-password' },
  });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
  return res.body.token as string;
}

export interface CreatedKey {
  id: string;
  key: string;
  signing_secret?: string;
  scopes: string[];
}

/** Creates an API key with a session token. */
export async function createKey(
  api: string,
  token: string,
  body: Record<string, unknown> = {},
): Promise<CreatedKey> {
  const res = await http(`${api}/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    json: { name: 'test key', environment: 'test', ...body },
  });
  if (res.status !== 201) throw new Error(`create key failed: ${res.status} ${res.text}`);
  return res.body as CreatedKey;
}
