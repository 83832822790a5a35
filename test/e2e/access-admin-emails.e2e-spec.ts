import { afterEach, describe, expect, it } from '@jest/globals';
import {
  ADMIN,
  asSession,
  login,
  register,
  SEED_PASSWORD,
  TRADER,
  verificationToken,
  verifiedAccount,
} from '../support/access.js';
import { expectError, http, startApp, type Running } from '../support/harness.js';

/**
 * The demo accounts' password is public (README, seeds/accounts.json): a production boot seeded
 * an admin anyone could log in as. Production seeds none; ADMIN_EMAILS names the admins, as
 * verified accounts.
 */
describe('admins: no public demo accounts on production; ADMIN_EMAILS', () => {
  let svc: Running | undefined;
  afterEach(async () => {
    await svc?.close();
    svc = undefined;
  });

  it('production seeds no demo account; a verified account named in ADMIN_EMAILS is an admin', async () => {
    svc = await startApp({
      env: { APP_ENV: 'production', ADMIN_EMAILS: ' Ops@Corp.test , other@corp.test' },
    });
    for (const email of [ADMIN, TRADER]) {
      const res = await http(`${svc.api}/auth/login`, {
        method: 'POST',
        json: { email, password: SEED_PASSWORD },
      });
      expectError(res, 401, 'INVALID_CREDENTIALS');
    }
    // Named but not verified yet: no admin (anyone can register an address they do not own).
    expect((await register(svc, 'ops@corp.test', 'correct-horse-battery')).status).toBe(201);
    const unverified = await login(svc, 'ops@corp.test', 'correct-horse-battery');
    const me0 = await asSession(unverified, `${svc.api}/auth/me`);
    expect(me0.body.user.roles).toEqual([]);
    // Told what would grant it: verifying the email (it would, for an address in ADMIN_EMAILS).
    for (const [method, path] of [
      ['GET', '/admin/tier-requests'],
      ['POST', '/admin/tier-requests/tier_nope/approve'],
      ['POST', '/admin/tier-requests/tier_nope/deny'],
    ]) {
      expectError(
        await asSession(unverified, `${svc.api}${path}`, { method }),
        403,
        'EMAIL_NOT_VERIFIED',
      );
    }
    // Verified: the admin role, and the admin operations with it.
    const ops = await verifiedAccountAfterRegister(svc, 'ops@corp.test');
    const me = await asSession(ops, `${svc.api}/auth/me`);
    expect(me.body.user.roles).toEqual(['ADMIN']);
    expect(me.body.credential.scopes).toEqual(
      expect.arrayContaining(['admin:read', 'admin:write']),
    );
    expect((await asSession(ops, `${svc.api}/admin/tier-requests`)).status).toBe(200);
    // Anyone else is not.
    const user = await verifiedAccount(svc, 'user@corp.test');
    expect((await asSession(user, `${svc.api}/auth/me`)).body.user.roles).toEqual([]);
    expectError(await asSession(user, `${svc.api}/admin/tier-requests`), 403, 'INSUFFICIENT_SCOPE');
  });

  it('elsewhere the demo admin stays; ADMIN_EMAILS adds admins beside it', async () => {
    svc = await startApp({ env: { ADMIN_EMAILS: 'lead@corp.test' } });
    const demo = await login(svc, ADMIN);
    expect((await asSession(demo, `${svc.api}/auth/me`)).body.user.roles).toEqual(['ADMIN']);
    const lead = await verifiedAccount(svc, 'lead@corp.test');
    expect((await asSession(lead, `${svc.api}/auth/me`)).body.user.roles).toEqual(['ADMIN']);
  });
});

/** Verifies an account registered earlier (the newest mailed token) and logs in. */
async function verifiedAccountAfterRegister(svc: Running, email: string): Promise<string> {
  const token = verificationToken(svc, email);
  const v = await http(`${svc.api}/auth/verify-email`, { method: 'POST', json: { token } });
  expect(v.status).toBe(200);
  return login(svc, email, 'correct-horse-battery');
}
