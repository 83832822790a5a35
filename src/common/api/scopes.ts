/** Scopes of SPEC.md's scope table. */
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
] as const;

export const WRITE_SCOPES = [
  'orders:write',
  'markets:write',
  'wallet:write',
  'users:write',
  'comments:write',
  'watchlist:write',
  'notifications:write',
  'webhooks:write',
  'rfq:respond',
] as const;

export const SANDBOX_SCOPES = ['env:paper'] as const;
export const ADMIN_SCOPES = ['admin:read', 'admin:write'] as const;

export type Scope =
  | (typeof READ_SCOPES)[number]
  | (typeof WRITE_SCOPES)[number]
  | (typeof SANDBOX_SCOPES)[number]
  | (typeof ADMIN_SCOPES)[number];

export const ALL_SCOPES: readonly Scope[] = [
  ...READ_SCOPES,
  ...WRITE_SCOPES,
  ...SANDBOX_SCOPES,
  ...ADMIN_SCOPES,
];

/** One of the SPEC's write scopes (they need acknowledge_write_scopes and a verified email). */
export function isWriteScope(s: string): boolean {
  return (WRITE_SCOPES as readonly string[]).includes(s);
}

/** A new key without explicit scopes gets the read-only scopes. */
export const DEFAULT_KEY_SCOPES: readonly Scope[] = READ_SCOPES;
