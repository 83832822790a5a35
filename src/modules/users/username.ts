import { randomBytes } from 'node:crypto';

/** What a username may be: 3..30 of lower-case letters, digits and underscores. */
export const USERNAME_PATTERN = /^[a-z0-9_]{3,30}$/;

/**
 * A generated username for an account: the email's local part reduced to `[a-z0-9_]` (at most
 * 20 characters, `user` when nothing is left or it is too short) and `_` with four random hex
 * digits, e.g. `trader_4f2a`. Callers retry with a fresh suffix when it is taken.
 */
export function generatedUsername(email: string, suffix = randomBytes(2).toString('hex')): string {
  const local = email.split('@')[0] ?? '';
  let base = local
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 20)
    .replace(/_+$/, '');
  if (base.length < 3) base = 'user';
  return `${base}_${suffix}`;
}
