import { describe, expect, it } from '@jest/globals';
import { dummyPasswordHash, hashPassword, verifyPassword } from './password.js';

describe('password hashing', () => {
  it('writes the given cost into the hash and verifies with the N the hash names', async () => {
    const cheap = await hashPassword('correct-horse', 1024);
    expect(cheap).toMatch(/^scrypt\$1024\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    const dear = await hashPassword('correct-horse', 2048);
    expect(dear).toMatch(/^scrypt\$2048\$8\$1\$/);
    // Either hash verifies whatever cost new hashes are made with now.
    expect(await verifyPassword('correct-horse', cheap)).toBe(true);
    expect(await verifyPassword('correct-horse', dear)).toBe(true);
    expect(await verifyPassword('wrong-horse', cheap)).toBe(false);
    // The N is part of what is checked: the same salt and key under another N do not match.
    expect(await verifyPassword('correct-horse', cheap.replace('$1024$', '$2048$'))).toBe(false);
  });

  it('verifies a hash above the old fixed 64 MiB scrypt memory limit', async () => {
    const big = await hashPassword('pw', 65_536);
    expect(await verifyPassword('pw', big)).toBe(true);
  });

  it('refuses malformed hashes and an N outside 1024..1048576 without hashing', async () => {
    expect(await verifyPassword('pw', 'plain')).toBe(false);
    expect(await verifyPassword('pw', 'bcrypt$1$2$3$4$5')).toBe(false);
    const h = await hashPassword('pw', 1024);
    expect(await verifyPassword('pw', h.replace('$1024$', '$512$'))).toBe(false);
    expect(await verifyPassword('pw', h.replace('$1024$', '$2097152$'))).toBe(false);
    expect(await verifyPassword('pw', h.replace('$1024$', '$x$'))).toBe(false);
  });

  it('the dummy hash has the configured cost and no password matches it', async () => {
    expect(dummyPasswordHash(32_768)).toMatch(/^scrypt\$32768\$8\$1\$/);
    const dummy = dummyPasswordHash(1024);
    expect(dummy).toMatch(/^scrypt\$1024\$8\$1\$/);
    for (const pw of ['', 'password', '0'.repeat(43)]) {
      expect(await verifyPassword(pw, dummy)).toBe(false);
    }
  });
});
