import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { totpAt } from '../../src/common/crypto/totp.js';
import {
  MFA_LOCK_SECONDS,
  MFA_MAX_FAILED_ATTEMPTS,
} from '../../src/modules/security/mfa.service.js';
import {
  asKey,
  asSession,
  createKey,
  login,
  RESPONDER,
  startAccessApp,
  TRADER,
  UNVERIFIED,
} from '../support/access.js';
import { expectError, type JsonResponse, type Running } from '../support/harness.js';
import { openDatabaseOf } from '../support/test-database.js';

describe('MFA: TOTP enrol and step-up', () => {
  let svc: Running;
  let session: string;
  let secret: string;
  const clock = () => svc.clock as ManualClock;
  const codeNow = (offsetSteps = 0) =>
    totpAt(secret, Math.floor(svc.clock.nowSeconds() / 30) + offsetSteps);
  const stepUp = (code: string, token = session): Promise<JsonResponse> =>
    asSession(token, `${svc.api}/security/mfa/step-up`, { method: 'POST', json: { code } });
  const stepUpUntilInDb = (email: string): string | null => {
    const db = openDatabaseOf(svc.dataDir, 'platform', { readonly: true });
    try {
      return (
        db.prepare('SELECT step_up_until FROM users WHERE email = ?').get(email) as {
          step_up_until: string | null;
        }
      ).step_up_until;
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    svc = await startAccessApp({ now: '2026-11-22T12:00:10.000Z' });
    session = await login(svc, TRADER);
  });
  afterAll(async () => {
    await svc.close();
  });

  it('step-up before enrolment is 409 MFA_NOT_ENROLLED', async () => {
    const other = await login(svc, RESPONDER);
    const err = expectError(await stepUp('123456', other), 409, 'MFA_NOT_ENROLLED');
    expect(err.message).toContain('/security/mfa/enroll');
  });

  it('enrol (session) returns a base32 secret and an otpauth URL; the seed is stored sealed', async () => {
    const res = await asSession(session, `${svc.api}/security/mfa/enroll`, { method: 'POST' });
    expect(res.status).toBe(201);
    secret = res.body.secret;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const url = new URL(res.body.otpauth_url);
    expect(url.protocol).toBe('otpauth:');
    expect(url.searchParams.get('secret')).toBe(secret);
    expect(url.searchParams.get('digits')).toBe('6');
    expect(url.searchParams.get('period')).toBe('30');
    expect(decodeURIComponent(url.pathname)).toContain(TRADER);
    const db = openDatabaseOf(svc.dataDir, 'platform', { readonly: true });
    const row = db.prepare('SELECT mfa_secret_enc FROM users WHERE email = ?').get(TRADER) as {
      mfa_secret_enc: string;
    };
    db.close();
    expect(row.mfa_secret_enc).toMatch(/^v1\./);
    expect(row.mfa_secret_enc).not.toContain(secret);
  });

  it('the right code steps up until now + 300 s exactly; the same code again is 422 MFA_CODE_INVALID', async () => {
    const code = codeNow();
    const ok = await stepUp(code);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ stepped_up_until: '2026-11-22T12:05:10.000Z' });
    expect(stepUpUntilInDb(TRADER)).toBe('2026-11-22T12:05:10.000Z');

    const replay = expectError(await stepUp(code), 422, 'MFA_CODE_INVALID');
    expect(replay.message).toContain('already used');
    // The previous step's code (clock-drift window) is older than the used one: refused too.
    expectError(await stepUp(codeNow(-1)), 422, 'MFA_CODE_INVALID');
    // The step-up itself is unchanged by the refusals.
    expect(stepUpUntilInDb(TRADER)).toBe('2026-11-22T12:05:10.000Z');

    // The next time step's code works and extends the window from the new now.
    clock().advance(30_000);
    const again = await stepUp(codeNow());
    expect(again.status).toBe(200);
    expect(again.body.stepped_up_until).toBe('2026-11-22T12:05:40.000Z');
  });

  it('a code that is not 6 digits is 400 VALIDATION_FAILED', async () => {
    for (const code of ['12345', '1234567', 'abcdef']) {
      const err = expectError(await stepUp(code), 400, 'VALIDATION_FAILED');
      expect(err.details.fields[0].field).toBe('code');
    }
  });

  it(`${MFA_MAX_FAILED_ATTEMPTS} wrong codes lock step-up: the 5th is 422 (0 attempts left), the next is 429 MFA_LOCKED with Retry-After`, async () => {
    clock().advance(30_000);
    expect(MFA_MAX_FAILED_ATTEMPTS).toBe(5);
    expect(MFA_LOCK_SECONDS).toBe(900);
    const wrong = codeNow() === '000000' ? '111111' : '000000';
    for (let i = 1; i <= 5; i++) {
      const err = expectError(await stepUp(wrong), 422, 'MFA_CODE_INVALID');
      expect(err.details.attempts_before_lock).toBe(5 - i);
    }
    // Locked now: even the right code is refused, with an integer Retry-After.
    const locked = await stepUp(codeNow());
    const err = expectError(locked, 429, 'MFA_LOCKED');
    expect(locked.headers.get('retry-after')).toBe('900');
    expect(err.details).toMatchObject({
      locked_until: new Date(svc.clock.now() + 900_000).toISOString(),
      max_failed_attempts: 5,
    });

    clock().advance(899_000);
    const still = await stepUp(codeNow());
    expectError(still, 429, 'MFA_LOCKED');
    expect(still.headers.get('retry-after')).toBe('1');
    expect(Number.isInteger(Number(still.headers.get('retry-after')))).toBe(true);

    // Past the lock a fresh code works.
    clock().advance(1_000);
    const fresh = await stepUp(codeNow());
    expect(fresh.status).toBe(200);
    expect(fresh.body.stepped_up_until).toBe(new Date(svc.clock.now() + 300_000).toISOString());
  });

  it('a success resets the failure count', async () => {
    clock().advance(30_000);
    const wrong = codeNow() === '000000' ? '111111' : '000000';
    for (let i = 0; i < 4; i++) expectError(await stepUp(wrong), 422, 'MFA_CODE_INVALID');
    expect((await stepUp(codeNow())).status).toBe(200);
    clock().advance(30_000);
    const err = expectError(await stepUp(wrong), 422, 'MFA_CODE_INVALID');
    expect(err.details.attempts_before_lock).toBe(4);
  });

  it("a leaked key's wrong codes lock the user's keys, not the sessions; a new key gets no fresh tries", async () => {
    clock().advance(30_000);
    const leaked = await createKey(svc, session, { name: 'leaked-read-only' });
    const other = await createKey(svc, session, { name: 'other-key' });
    const viaKey = (key: string, code: string) =>
      asKey(key, `${svc.api}/security/mfa/step-up`, { method: 'POST', json: { code } });
    const wrong = codeNow() === '000000' ? '111111' : '000000';
    for (let i = 1; i <= 5; i++) {
      const err = expectError(await viaKey(leaked.key, wrong), 422, 'MFA_CODE_INVALID');
      expect(err.details.attempts_before_lock).toBe(5 - i);
    }
    expectError(await viaKey(leaked.key, codeNow()), 429, 'MFA_LOCKED');
    // The user's keys share the lock, a key minted now included (no fresh guesses to buy).
    expectError(await viaKey(other.key, codeNow()), 429, 'MFA_LOCKED');
    const minted = await createKey(svc, session, { name: 'minted-after' });
    expectError(await viaKey(minted.key, codeNow()), 429, 'MFA_LOCKED');
    // The owner's session is not locked out.
    expect((await stepUp(codeNow())).status).toBe(200);
    // After the lock the keys step up again.
    clock().advance(900_000);
    expect((await viaKey(other.key, codeNow())).status).toBe(200);
  });

  it('step-up is available to the user with an API key; enrolment needs a session', async () => {
    const k = await createKey(svc, await login(svc, UNVERIFIED), { name: 'mfa-key' });
    expectError(
      await asKey(k.key, `${svc.api}/security/mfa/enroll`, { method: 'POST' }),
      403,
      'SESSION_REQUIRED',
    );
    expectError(
      await asKey(k.key, `${svc.api}/security/mfa/step-up`, {
        method: 'POST',
        json: { code: '123456' },
      }),
      409,
      'MFA_NOT_ENROLLED',
    );
    const traderKey = await createKey(svc, session, { name: 'trader-mfa-key' });
    clock().advance(30_000);
    const ok = await asKey(traderKey.key, `${svc.api}/security/mfa/step-up`, {
      method: 'POST',
      json: { code: codeNow() },
    });
    expect(ok.status).toBe(200);
  });
});

describe('MFA under concurrent requests', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startAccessApp();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('one code fired 5 times at once steps up once; 30 wrong codes at once still lock after 5', async () => {
    const session = await login(svc, TRADER);
    const step = (code: string) =>
      asSession(session, `${svc.api}/security/mfa/step-up`, { method: 'POST', json: { code } });
    const en = await asSession(session, `${svc.api}/security/mfa/enroll`, { method: 'POST' });
    const secret: string = en.body.secret;
    const code = totpAt(secret, Math.floor(svc.clock.nowSeconds() / 30));
    const same = await Promise.all(Array.from({ length: 5 }, () => step(code)));
    expect(same.map((r) => r.status).sort()).toEqual([200, 422, 422, 422, 422]);

    // Re-enrolling resets the counters; then a burst of wrong codes.
    const en2 = await asSession(session, `${svc.api}/security/mfa/enroll`, { method: 'POST' });
    const fresh = totpAt(en2.body.secret, Math.floor(svc.clock.nowSeconds() / 30));
    const wrong = fresh === '000000' ? '111111' : '000000';
    const burst = await Promise.all(Array.from({ length: 30 }, () => step(wrong)));
    const counts = burst.reduce<Record<number, number>>(
      (acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }),
      {},
    );
    expect(counts).toEqual({ 422: 5, 429: 25 });
    expectError(await step(fresh), 429, 'MFA_LOCKED');
  });
});

describe('MFA: replacing an enrolled authenticator', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startAccessApp();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('a session alone cannot replace it (403 MFA_STEP_UP_REQUIRED); a fresh step-up can, and ends the step-up', async () => {
    const session = await login(svc, TRADER);
    const clock = svc.clock as ManualClock;
    const enrol = () => asSession(session, `${svc.api}/security/mfa/enroll`, { method: 'POST' });
    const step = (code: string) =>
      asSession(session, `${svc.api}/security/mfa/step-up`, { method: 'POST', json: { code } });
    const first = await enrol();
    expect(first.status).toBe(201);
    const oldSecret: string = first.body.secret;
    const codeOf = (secret: string) => totpAt(secret, Math.floor(svc.clock.nowSeconds() / 30));
    const refused = expectError(await enrol(), 403, 'MFA_STEP_UP_REQUIRED');
    expect(refused.message).toContain('/security/mfa/step-up');
    // The old authenticator still works: nothing was replaced.
    expect((await step(codeOf(oldSecret))).status).toBe(200);
    // After the step-up window it is refused again.
    clock.advance(301_000);
    expectError(await enrol(), 403, 'MFA_STEP_UP_REQUIRED');
    expect((await step(codeOf(oldSecret))).status).toBe(200);
    const second = await enrol();
    expect(second.status).toBe(201);
    expect(second.body.secret).not.toBe(oldSecret);
    // The new seed ends the step-up: replacing it again needs a step-up with the new one.
    expectError(await enrol(), 403, 'MFA_STEP_UP_REQUIRED');
    clock.advance(30_000);
    expectError(await step(codeOf(oldSecret)), 422, 'MFA_CODE_INVALID');
    expect((await step(codeOf(second.body.secret))).status).toBe(200);
  });

  it('a locked step-up stays locked: re-enrolment is 429 MFA_LOCKED and lifts nothing', async () => {
    const session = await login(svc, RESPONDER);
    const step = (code: string) =>
      asSession(session, `${svc.api}/security/mfa/step-up`, { method: 'POST', json: { code } });
    const en = await asSession(session, `${svc.api}/security/mfa/enroll`, { method: 'POST' });
    const secret: string = en.body.secret;
    const right = totpAt(secret, Math.floor(svc.clock.nowSeconds() / 30));
    const wrong = right === '000000' ? '111111' : '000000';
    for (let i = 0; i < MFA_MAX_FAILED_ATTEMPTS; i++) await step(wrong);
    expectError(await step(right), 429, 'MFA_LOCKED');
    const again = expectError(
      await asSession(session, `${svc.api}/security/mfa/enroll`, { method: 'POST' }),
      429,
      'MFA_LOCKED',
    );
    expect(again.details.max_failed_attempts).toBe(MFA_MAX_FAILED_ATTEMPTS);
    expectError(await step(right), 429, 'MFA_LOCKED');
  });
});

describe('MFA_STEP_UP_TTL_SECONDS sets the step-up window', () => {
  let svc: Running;
  beforeAll(async () => {
    svc = await startAccessApp({ env: { MFA_STEP_UP_TTL_SECONDS: '120' } });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('stepped_up_until is now + the configured TTL', async () => {
    const session = await login(svc, TRADER);
    const en = await asSession(session, `${svc.api}/security/mfa/enroll`, { method: 'POST' });
    const code = totpAt(en.body.secret, Math.floor(svc.clock.nowSeconds() / 30));
    const res = await asSession(session, `${svc.api}/security/mfa/step-up`, {
      method: 'POST',
      json: { code },
    });
    expect(res.status).toBe(200);
    expect(res.body.stepped_up_until).toBe('2026-11-22T12:02:00.000Z');
  });
});
