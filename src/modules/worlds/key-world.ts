import type { Environment } from '../../common/environment.js';

/** What decides a key's world: its environment and its scopes (a list, or stored comma-joined). */
export interface KeyClass {
  environment: Environment;
  scopes: readonly string[] | string;
}

/**
 * Whether a key is paper-only: a test key, or any key holding `env:paper` (CONTRACT.md, "Worlds").
 * The one home of this rule: routing a request, minting and rotating a key while the sandbox is
 * off, and the world of a key's notifications all ask it.
 */
export function isPaperOnlyKey(key: KeyClass): boolean {
  const scopes = typeof key.scopes === 'string' ? key.scopes.split(',') : key.scopes;
  return key.environment === 'test' || scopes.includes('env:paper');
}

/** The world a key reads and writes: the paper world (`test`) for a paper-only key, else live. */
export function worldOfKey(key: KeyClass): Environment {
  return isPaperOnlyKey(key) ? 'test' : 'live';
}
