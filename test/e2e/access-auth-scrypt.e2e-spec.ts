import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN, login, register, startAccessApp, TRADER } from '../support/access.js';
import { expectError, http, type Running } from '../support/harness.js';
import { openDatabaseOf } from '../support/test-database.js';

const NOW = '2026-11-22T12:00:00.000Z';

function storedHash(svc: Running, email: string): string {
  const db = openDatabaseOf(svc.dataDir, 'platform', { readonly: true });
  try {
    const row = db.prepare('SELECT password_hash FROM users WHERE email = ?').get(email) as {
      password_hash: string;
    };
    return row.password_hash;
  } finally {
    db.close();
  }
}

// The test harness hashes at PASSWORD_SCRYPT_COST=1024 to save minutes of scrypt; this app runs
// with the configuration's default, the production cost, as the README's start command does.
describe('passwords at the default (production) cost', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startAccessApp({ now: NOW, env: { PASSWORD_SCRYPT_COST: '' } });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('stores the password with scrypt N=32768, r=8, p=1, never in clear', async () => {
    expect((await register(svc, 'hash.check@example.com', 'a-very-secret-password')).status).toBe(
      201,
    );
    const hash = storedHash(svc, 'hash.check@example.com');
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(hash).not.toContain('a-very-secret-password');
    // The seeded demo accounts too.
    expect(storedHash(svc, ADMIN)).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(typeof (await login(svc, 'hash.check@example.com', 'a-very-secret-password'))).toBe(
      'string',
    );
  });

  it('a wrong password and an unknown email are both 401 INVALID_CREDENTIALS at this cost', async () => {
    for (const email of [TRADER, 'nobody@example.com']) {
      expectError(
        await http(`${svc.api}/auth/login`, {
          method: 'POST',
          json: { email, password: 'not-the-password' },
        }),
        401,
        'INVALID_CREDENTIALS',
      );
    }
  });
});

describe('PASSWORD_SCRYPT_COST', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startAccessApp({ now: NOW, env: { PASSWORD_SCRYPT_COST: '2048' } });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('new and seeded accounts are hashed at the configured N and log in with it', async () => {
    expect((await register(svc, 'cost@example.com', 'correct-horse-battery')).status).toBe(201);
    expect(storedHash(svc, 'cost@example.com')).toMatch(/^scrypt\$2048\$8\$1\$/);
    expect(storedHash(svc, TRADER)).toMatch(/^scrypt\$2048\$8\$1\$/);
    expect(typeof (await login(svc, 'cost@example.com', 'correct-horse-battery'))).toBe('string');
    expect(typeof (await login(svc, TRADER))).toBe('string');
    expectError(
      await http(`${svc.api}/auth/login`, {
        method: 'POST',
        json: { email: 'cost@example.com', password: 'correct-horse-batterY' },
      }),
      401,
      'INVALID_CREDENTIALS',
    );
  });
});
