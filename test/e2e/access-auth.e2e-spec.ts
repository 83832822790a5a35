import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import type { ManualClock } from '../../src/common/clock/clock.js';
import {
  asKey,
  asSession,
  createKey,
  login,
  outbox,
  READ_SCOPES,
  register,
  startAccessApp,
  TRADER,
  verificationToken,
} from '../support/access.js';
import { expectError, http, type Running } from '../support/harness.js';
import { openDatabaseOf } from '../support/test-database.js';

const NOW = '2026-11-22T12:00:00.000Z';

describe('accounts: register, verify email, login, /auth/me', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startAccessApp({ now: NOW });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('register mails a verification token; verify-email sets email_verified; tokens are single-use', async () => {
    const email = 'New.Dev@Example.com';
    const reg = await register(svc, email, 'correct-horse-battery');
    expect(reg.status).toBe(201);
    expect(reg.body).toEqual({
      id: expect.stringMatching(/^usr_/),
      email: 'new.dev@example.com',
      email_verified: false,
      // Generated: user_ and eight random hex digits, nothing of the email.
      username: expect.stringMatching(/^user_[0-9a-f]{8}$/),
      roles: [],
    });

    const mails = outbox(svc, 'new.dev@example.com');
    expect(mails).toHaveLength(1);
    expect(mails[0].kind).toBe('EMAIL_VERIFICATION');
    const token = verificationToken(svc, 'new.dev@example.com');

    // Before verification the account can log in but is not verified.
    const session = await login(svc, 'new.dev@example.com', 'correct-horse-battery');
    const before = await asSession(session, `${svc.api}/auth/me`);
    expect(before.body.user.email_verified).toBe(false);
    // SPEC: write scopes require a verified email. The session holds the read scopes only, and a
    // write (a real-money deposit here) is 403 EMAIL_NOT_VERIFIED and changes nothing.
    expect(before.body.credential.scopes).toContain('orders:read');
    expect(before.body.credential.scopes).not.toContain('orders:write');
    expect(before.body.credential.scopes).not.toContain('wallet:write');
    const refused = expectError(
      await asSession(session, `${svc.api}/wallet/deposits`, {
        method: 'POST',
        json: { amount_cents: 500 },
      }),
      403,
      'EMAIL_NOT_VERIFIED',
    );
    expect(refused.details).toMatchObject({ missing_scopes: ['wallet:write'] });
    expect((await asSession(session, `${svc.api}/wallet`)).body.balance_cents).toBe(0);
    // An operation that belongs to an API key says so first, verified or not.
    expectError(
      await asSession(session, `${svc.api}/orders/cancel-on-disconnect`, {
        method: 'POST',
        json: { grace_seconds: 5 },
      }),
      403,
      'API_KEY_REQUIRED',
    );

    expectError(
      await http(`${svc.api}/auth/verify-email`, {
        method: 'POST',
        json: { token: 'x'.repeat(40) },
      }),
      422,
      'VERIFICATION_TOKEN_INVALID',
    );

    const ok = await http(`${svc.api}/auth/verify-email`, { method: 'POST', json: { token } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ id: reg.body.id, email_verified: true });
    const after = await asSession(session, `${svc.api}/auth/me`);
    expect(after.body.user).toEqual({ ...reg.body, email_verified: true });
    // Verified: the same session writes at once.
    expect(after.body.credential.scopes).toContain('wallet:write');
    const deposit = await asSession(session, `${svc.api}/wallet/deposits`, {
      method: 'POST',
      json: { amount_cents: 500 },
    });
    expect(deposit.status).toBe(201);
    expect(deposit.body.wallet.balance_cents).toBe(500);

    // The same token a second time is refused.
    expectError(
      await http(`${svc.api}/auth/verify-email`, { method: 'POST', json: { token } }),
      422,
      'VERIFICATION_TOKEN_INVALID',
    );
  });

  it('a duplicate email (any case) is 409 EMAIL_TAKEN and creates nothing', async () => {
    const before = outbox(svc).length;
    expectError(await register(svc, TRADER), 409, 'EMAIL_TAKEN');
    expectError(await register(svc, 'TRADER@Sandbox.Test'), 409, 'EMAIL_TAKEN');
    expect(outbox(svc).length).toBe(before);
  });

  it('login: wrong password and unknown email are both 401 INVALID_CREDENTIALS', async () => {
    const wrong = await http(`${svc.api}/auth/login`, {
      method: 'POST',
      json: { email: TRADER, password: 'not-the-password' },
    });
    const err = expectError(wrong, 401, 'INVALID_CREDENTIALS');
    expect(err.message).not.toContain('not-the-password');
    expectError(
      await http(`${svc.api}/auth/login`, {
        method: 'POST',
        json: { email: 'nobody@example.com', password: 'sandbox-password' },
      }),
      401,
      'INVALID_CREDENTIALS',
    );
  });

  it('login returns a 12-hour session JWT; /auth/me with it is a SESSION credential', async () => {
    const res = await http(`${svc.api}/auth/login`, {
      method: 'POST',
      json: { email: TRADER, password: 'sandbox-password' },
    });
    expect(res.status).toBe(200);
    expect(res.body.token.split('.')).toHaveLength(3);
    expect(res.body.expires_at).toBe('2026-11-23T00:00:00.000Z');

    const me = await asSession(res.body.token, `${svc.api}/auth/me`);
    expect(me.status).toBe(200);
    expect(me.body.user).toEqual({
      id: expect.stringMatching(/^usr_/),
      email: TRADER,
      email_verified: true,
      username: expect.stringMatching(/^user_[0-9a-f]{8}$/),
      roles: ['CREATOR'], // the seeded trader creates live markets
    });
    expect(me.body.credential).toMatchObject({
      type: 'SESSION',
      key_id: null,
      environment: 'live',
      tier: 'FREE',
    });
    // A session holds every non-admin scope and never env:paper.
    expect(me.body.credential.scopes).toEqual(expect.arrayContaining(READ_SCOPES));
    expect(me.body.credential.scopes).toContain('orders:write');
    expect(me.body.credential.scopes).not.toContain('env:paper');
    expect(me.body.credential.scopes).not.toContain('admin:read');

    const admin = await asSession(await login(svc, 'admin@sandbox.test'), `${svc.api}/auth/me`);
    expect(admin.body.user.roles).toEqual(['ADMIN']);
    expect(admin.body.credential.scopes).toEqual(
      expect.arrayContaining(['admin:read', 'admin:write']),
    );

    // An admin whose email is not verified keeps admin:read, and loses every write scope,
    // admin:write included.
    const db = openDatabaseOf(svc.dataDir, 'platform');
    try {
      db.prepare('UPDATE users SET email_verified = ? WHERE email = ?').run(
        0,
        'admin@sandbox.test',
      );
    } finally {
      db.close();
    }
    const unverified = await asSession(
      await login(svc, 'admin@sandbox.test'),
      `${svc.api}/auth/me`,
    );
    expect(unverified.body.credential.scopes).toContain('admin:read');
    expect(unverified.body.credential.scopes).not.toContain('admin:write');
    expect(unverified.body.credential.scopes).not.toContain('orders:write');
    const db2 = openDatabaseOf(svc.dataDir, 'platform');
    try {
      db2
        .prepare('UPDATE users SET email_verified = ? WHERE email = ?')
        .run(1, 'admin@sandbox.test');
    } finally {
      db2.close();
    }
  });

  it('/auth/me with an API key is an API_KEY credential with key_id, environment, scopes, tier', async () => {
    const session = await login(svc, TRADER);
    const key = await createKey(svc, session, { name: 'me-check' });
    const me = await asKey(key.key, `${svc.api}/auth/me`);
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe(TRADER);
    expect(me.body.credential).toEqual({
      type: 'API_KEY',
      key_id: key.id,
      environment: 'live',
      scopes: READ_SCOPES,
      tier: 'FREE',
    });
  });

  it('a bad JWT, a foreign-signed JWT and a non-Bearer header are 401 UNAUTHENTICATED', async () => {
    const token = await login(svc, TRADER);
    const [h, p, s] = token.split('.');
    const flipped = `${h}.${p}.${s[0] === 'A' ? 'B' : 'A'}${s.slice(1)}`;
    const foreign = `${h}.${p}.${createHmac('sha256', 'not-the-server-secret').update(`${h}.${p}`).digest('base64url')}`;
    // Same claims but a longer expiry: the signature no longer matches.
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 3600 })).toString('base64url')}.${s}`;
    for (const authorization of [
      'Bearer garbage',
      `Bearer ${flipped}`,
      `Bearer ${foreign}`,
      `Bearer ${forged}`,
      `Basic ${Buffer.from('trader:sandbox-password').toString('base64')}`,
      'Bearer',
    ]) {
      const res = await http(`${svc.api}/auth/me`, { headers: { authorization } });
      expectError(res, 401, 'UNAUTHENTICATED');
    }
  });

  it('no credential, an unknown key and a malformed key are 401 UNAUTHENTICATED', async () => {
    expectError(await http(`${svc.api}/auth/me`), 401, 'UNAUTHENTICATED');
    expectError(await http(`${svc.api}/api-keys`), 401, 'UNAUTHENTICATED');
    const unknown = `svc_live_${'A'.repeat(32)}`;
    const err = expectError(await asKey(unknown, `${svc.api}/auth/me`), 401, 'UNAUTHENTICATED');
    expect(JSON.stringify(err)).not.toContain(unknown);
    for (const bad of [
      'svc_live_short',
      'sk_live_' + 'a'.repeat(32),
      `svc_prod_${'A'.repeat(32)}`,
    ]) {
      expectError(await asKey(bad, `${svc.api}/auth/me`), 401, 'UNAUTHENTICATED');
    }
  });

  it('sending both X-API-Key and Authorization is 401 UNAUTHENTICATED', async () => {
    const session = await login(svc, TRADER);
    const key = await createKey(svc, session, { name: 'both' });
    const res = await http(`${svc.api}/auth/me`, {
      headers: { 'x-api-key': key.key, authorization: `Bearer ${session}` },
    });
    expectError(res, 401, 'UNAUTHENTICATED');
  });
});

describe('session and verification expiry follow the service clock', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startAccessApp({ now: NOW });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('a session JWT works until 12 h and is 401 UNAUTHENTICATED 12 h + 1 s after issue', async () => {
    const token = await login(svc, TRADER);
    const clock = svc.clock as ManualClock;
    clock.advance(12 * 3600 * 1000 - 1000);
    expect((await asSession(token, `${svc.api}/auth/me`)).status).toBe(200);
    clock.advance(2000);
    expectError(await asSession(token, `${svc.api}/auth/me`), 401, 'UNAUTHENTICATED');
    // A fresh login works again.
    expect((await asSession(await login(svc, TRADER), `${svc.api}/auth/me`)).status).toBe(200);
  });

  it('a verification token older than 48 h is 422 VERIFICATION_TOKEN_INVALID', async () => {
    expect((await register(svc, 'late@example.com')).status).toBe(201);
    const token = verificationToken(svc, 'late@example.com');
    (svc.clock as ManualClock).advance(48 * 3600 * 1000);
    expectError(
      await http(`${svc.api}/auth/verify-email`, { method: 'POST', json: { token } }),
      422,
      'VERIFICATION_TOKEN_INVALID',
    );
    const me = await asSession(
      await login(svc, 'late@example.com', 'correct-horse-battery'),
      `${svc.api}/auth/me`,
    );
    expect(me.body.user.email_verified).toBe(false);
  });
});

describe('accounts: a new verification email', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startAccessApp({ now: NOW });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('an expired or lost verification token can be replaced by the account itself', async () => {
    const email = 'late.verifier@example.com';
    const password = 'a-long-enough-password';
    expect((await register(svc, email, password)).status).toBe(201);
    const first = verificationToken(svc, email);
    (svc.clock as ManualClock).advance(48 * 3_600_000 + 1_000);
    expectError(
      await http(`${svc.api}/auth/verify-email`, { method: 'POST', json: { token: first } }),
      422,
      'VERIFICATION_TOKEN_INVALID',
    );
    const session = await login(svc, email, password);
    const resend = () =>
      asSession(session, `${svc.api}/auth/verify-email/resend`, { method: 'POST', json: {} });
    const sent = await resend();
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({
      email,
      expires_at: new Date(svc.clock.now() + 48 * 3_600_000).toISOString(),
    });
    const second = verificationToken(svc, email);
    expect(second).not.toBe(first);
    // Only the newest token works: one sent before it is void.
    expect((await resend()).status).toBe(202);
    const third = verificationToken(svc, email);
    expectError(
      await http(`${svc.api}/auth/verify-email`, { method: 'POST', json: { token: second } }),
      422,
      'VERIFICATION_TOKEN_INVALID',
    );
    const ok = await http(`${svc.api}/auth/verify-email`, {
      method: 'POST',
      json: { token: third },
    });
    expect(ok.body).toMatchObject({ email, email_verified: true });
    expectError(await resend(), 409, 'EMAIL_ALREADY_VERIFIED');
    // An API key is not the account's owner at the keyboard: sessions only.
    const key = await createKey(svc, session, { name: 'k', environment: 'live' });
    expectError(
      await asKey(key.key, `${svc.api}/auth/verify-email/resend`, { method: 'POST', json: {} }),
      403,
      'SESSION_REQUIRED',
    );
    expectError(
      await http(`${svc.api}/auth/verify-email/resend`, { method: 'POST', json: {} }),
      401,
      'UNAUTHENTICATED',
    );
  });

  it('ten verification emails a day at most, the registration included', async () => {
    const email = 'many.resends@example.com';
    const password = 'a-long-enough-password';
    expect((await register(svc, email, password)).status).toBe(201);
    const clock = svc.clock as ManualClock;
    const session = await login(svc, email, password);
    const resend = () =>
      asSession(session, `${svc.api}/auth/verify-email/resend`, { method: 'POST', json: {} });
    for (let i = 1; i <= 9; i++) {
      expect((await resend()).status).toBe(202);
      if (i % 3 === 0) clock.advance(60_000); // 3 a minute
    }
    const mails = () => outbox(svc, email).filter((m) => m.kind === 'EMAIL_VERIFICATION').length;
    expect(mails()).toBe(10);
    const refused = await resend();
    expect(expectError(refused, 429, 'QUOTA_EXCEEDED').details).toEqual({
      period: 'day',
      limit: 10,
      resets_at: new Date(svc.clock.now() + (86_400 - 180) * 1000).toISOString(),
    });
    // The registration's token was the first of the ten: free again 24 h after it (3 min ago).
    expect(Number(refused.headers.get('retry-after'))).toBe(86_400 - 180);
    expect(mails()).toBe(10);
    clock.advance(86_400_000);
    const later = await login(svc, email, password);
    const again = await asSession(later, `${svc.api}/auth/verify-email/resend`, {
      method: 'POST',
      json: {},
    });
    expect(again.status).toBe(202);
  });
});
