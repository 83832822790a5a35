import { DomainError } from '../../errors/domain-error.js';

/** What the key-state stage reads of a key. */
export interface KeyState {
  id: string;
  prefix: string;
  revokedAt: string | null;
  expiresAt: string | null;
}

/** Key state, right after the key is found: 401 API_KEY_REVOKED. */
export function refuseRevoked(key: KeyState): void {
  if (key.revokedAt !== null) {
    throw new DomainError('API_KEY_REVOKED', `API key ${key.prefix}... was revoked`, {
      key_id: key.id,
    });
  }
}

/**
 * Key state, against `now`, the clock of the key's world (an ephemeral world's own): 401
 * API_KEY_EXPIRED. Returns the expiry (epoch ms), null for a key without one.
 */
export function checkExpiry(key: KeyState, now: number): number | null {
  const expiresAt = key.expiresAt === null ? null : Date.parse(key.expiresAt);
  if (expiresAt !== null && expiresAt <= now) {
    throw new DomainError(
      'API_KEY_EXPIRED',
      `API key ${key.prefix}... expired at ${key.expiresAt}`,
      { key_id: key.id, expired_at: key.expiresAt },
    );
  }
  return expiresAt;
}
