import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// scrypt r=8, p=1; N comes from PASSWORD_SCRYPT_COST (default 2^15: ~32 MiB and tens of
// milliseconds per hash, OWASP's scrypt guidance). Each stored hash names its own N.
const R = 8;
const P = 1;
const KEYLEN = 32;
/** Stored hashes outside this range are refused instead of allocating what they ask for. */
const MIN_N = 1024;
const MAX_N = 1_048_576;

/** scrypt needs 128·N·r bytes; twice that is 64 MiB at the default N, as before the knob. */
function options(n: number, r: number, p: number): ScryptOptions {
  return { N: n, r, p, maxmem: 2 * 128 * n * r };
}

function scryptAsync(password: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEYLEN, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash` (base64url parts), with N = `cost` (a power of two). */
export async function hashPassword(password: string, cost: number): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, options(cost, R, P));
  return ['scrypt', cost, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/**
 * A well-formed hash at this cost that no password matches: checked when the email is unknown,
 * so a login for a missing account costs what a wrong password for an existing one costs (same
 * N as the hashes this configuration writes).
 */
export function dummyPasswordHash(cost: number): string {
  return `scrypt$${cost}$${R}$${P}$c2FsdHNhbHRzYWx0c2FsdA$${'0'.repeat(43)}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, hash] = parts;
  const N = Number(n);
  if (!Number.isSafeInteger(N) || N < MIN_N || N > MAX_N) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scryptAsync(
    password,
    Buffer.from(salt, 'base64url'),
    options(N, Number(r), Number(p)),
  );
  return key.length === expected.length && timingSafeEqual(key, expected);
}
