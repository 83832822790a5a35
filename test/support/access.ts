import { expect } from '@jest/globals';
import { signatureHeaders } from '../../examples/sign-request.js';
import { http, startApp, type JsonResponse, type Running, type StartOptions } from './harness.js';
import { openDatabaseOf } from './test-database.js';

/**
 * startApp with the per-IP/per-key limits off (RATE_LIMITS_ENABLED=false) unless the caller sets
 * it: these suites send many auth-category requests under a clock that does not move by itself,
 * and the limits have their own suite. The ManualClock starts at 2026-11-22T12:00:00Z.
 */
export function startAccessApp(opts: StartOptions = {}): Promise<Running> {
  return startApp({ ...opts, env: { RATE_LIMITS_ENABLED: 'false', ...opts.env } });
}

/** The seeded demo accounts of CONTRACT.md (password {@link SEED_PASSWORD}). */
export const TRADER = 'trader@sandbox.test';
export const UNVERIFIED = 'unverified@sandbox.test';
export const RESPONDER = 'responder@sandbox.test';
export const ADMIN = 'admin@sandbox.test';
export const SEED_PASSWORD = 'sandbox-password';

export const READ_SCOPES = [
  'markets:read',
  'orders:read',
  'wallet:read',
  'users:read',
  'comments:read',
  'watchlist:read',
  'notifications:read',
  'webhooks:read',
  'sports:read',
  'crypto:read',
  'data:read',
  'websocket',
];

/** svc_<env>_ + 32 base62 characters. */
export const KEY_FORMAT = /^svc_(live|test)_[0-9A-Za-z]{32}$/;

type Svc = Pick<Running, 'api' | 'dataDir'>;
type Init = RequestInit & { json?: unknown };

/** Logs in and returns the session JWT. */
export async function login(svc: Svc, email: string, password = SEED_PASSWORD): Promise<string> {
  const res = await http(`${svc.api}/auth/login`, { method: 'POST', json: { email, password } });
  if (res.status !== 200) throw new Error(`login ${email}: ${res.status} ${res.text}`);
  return res.body.token as string;
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** A request with a session token. */
export function asSession(token: string, url: string, init: Init = {}): Promise<JsonResponse> {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${token}`);
  return http(url, { ...init, headers });
}

/** A request with an API key. */
export function asKey(key: string, url: string, init: Init = {}): Promise<JsonResponse> {
  const headers = new Headers(init.headers);
  headers.set('x-api-key', key);
  return http(url, { ...init, headers });
}

/** POST /api-keys with a session; returns the raw response. */
export function createKeyRaw(
  svc: Svc,
  token: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  return asSession(token, `${svc.api}/api-keys`, { method: 'POST', json: body, headers });
}

export interface CreatedKey {
  id: string;
  name: string;
  environment: 'live' | 'test';
  prefix: string;
  scopes: string[];
  tier: string;
  expires_at: string | null;
  signing_required: boolean;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  key: string;
  signing_secret?: string;
}

/** POST /api-keys, asserting 201. Defaults: a live key named after the call. */
export async function createKey(
  svc: Svc,
  token: string,
  body: Record<string, unknown> = {},
): Promise<CreatedKey> {
  const res = await createKeyRaw(svc, token, { name: 'test-key', environment: 'live', ...body });
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${res.text}`);
  return res.body as CreatedKey;
}

export interface SignOptions {
  key: string;
  secret: string;
  method?: string;
  /** Path and query as sent, e.g. /api/v1/markets?limit=1. */
  path: string;
  /** JSON text sent as it is. */
  body?: string;
  /** Unix seconds (the service clock); required because the harness clock is not wall time. */
  timestamp: number;
  /** Sign this instead of what is sent (tampering tests). */
  signPath?: string;
  signBody?: string;
  /** Replace the computed signature. */
  signature?: string;
}

/** A signed request, signed with the TypeScript example (examples/sign-request.ts). */
export function signedFetch(svc: Pick<Running, 'baseUrl'>, o: SignOptions): Promise<JsonResponse> {
  const method = o.method ?? 'GET';
  const sig = signatureHeaders({
    signingSecret: o.secret,
    method,
    pathWithQuery: o.signPath ?? o.path,
    body: o.signBody ?? o.body,
    timestamp: o.timestamp,
  });
  const headers: Record<string, string> = { 'x-api-key': o.key, ...sig };
  if (o.signature !== undefined) headers['X-Svc-Signature'] = o.signature;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  return http(`${svc.baseUrl}${o.path}`, { method, headers, body: o.body });
}

export interface OutboxRow {
  id: string;
  to_address: string;
  kind: string;
  subject: string;
  body: string;
  created_at: string;
}

/** Every row of mail_outbox (read-only connection to DATA_DIR/platform.sqlite). */
export function outbox(svc: Pick<Running, 'dataDir'>, to?: string): OutboxRow[] {
  const db = openDatabaseOf(svc.dataDir, 'platform', { readonly: true });
  try {
    const rows = db
      .prepare(
        'SELECT id, to_address, kind, subject, body, created_at FROM mail_outbox ORDER BY id',
      )
      .all() as OutboxRow[];
    return to === undefined ? rows : rows.filter((r) => r.to_address === to);
  } finally {
    db.close();
  }
}

/** Registers a fresh account and returns its email and password (unverified). */
export async function register(
  svc: Svc,
  email: string,
  password = 'correct-horse-battery',
): Promise<JsonResponse> {
  return http(`${svc.api}/auth/register`, { method: 'POST', json: { email, password } });
}

/** The verification token mailed to `email` (the newest one). */
export function verificationToken(svc: Pick<Running, 'dataDir'>, email: string): string {
  const mails = outbox(svc, email).filter((m) => m.kind === 'EMAIL_VERIFICATION');
  expect(mails.length).toBeGreaterThan(0);
  const m = /"token": "([0-9A-Za-z]+)"/.exec(mails[mails.length - 1].body);
  if (m === null) throw new Error(`no token in ${mails[mails.length - 1].body}`);
  return m[1];
}

/** A fresh verified account: register, verify with the mailed token, log in. */
export async function verifiedAccount(svc: Svc, email: string): Promise<string> {
  const password = 'correct-horse-battery';
  expect((await register(svc, email, password)).status).toBe(201);
  const token = verificationToken(svc, email);
  const v = await http(`${svc.api}/auth/verify-email`, { method: 'POST', json: { token } });
  expect(v.status).toBe(200);
  return login(svc, email, password);
}

/** GET /auth/me with a key. */
export function meWithKey(svc: Svc, key: string): Promise<JsonResponse> {
  return asKey(key, `${svc.api}/auth/me`);
}
