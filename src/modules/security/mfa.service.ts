import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, Repository } from 'typeorm';
import { Clock } from '../../common/clock/clock.js';
import { SecretBox } from '../../common/crypto/secret-box.js';
import { matchTotp, newTotpSecret } from '../../common/crypto/totp.js';
import { DomainError } from '../../common/errors/domain-error.js';
import type { SqlStatement } from '../../common/sql/sql-connection.js';
import type { Credential } from '../../common/http/request-context.js';
import { ConfigService } from '../../config/config.service.js';
import { connectionOf, PLATFORM_DB } from '../../database/databases.js';
import { UsersService } from '../users/users.service.js';
import { MfaLockoutEntity } from './entities/mfa-lockout.entity.js';

/**
 * The lockout bucket of a credential: the user's API keys together, or the user's sessions
 * together. Two buckets, so a leaked key cannot lock the owner's sessions out of step-up, while
 * minting new keys (with a session) buys no fresh guesses: at most 2 x 5 per lock period.
 */
export function lockoutIdOf(c: Pick<Credential, 'keyId' | 'userId'>): string {
  return c.keyId === null ? `session:${c.userId}` : `keys:${c.userId}`;
}

/** Wrong codes allowed before step-up locks, and how long it stays locked. */
export const MFA_MAX_FAILED_ATTEMPTS = 5;
export const MFA_LOCK_SECONDS = 900;

/** The platform SQL of enrolment and step-up, prepared once per connection. */
interface MfaStatements {
  enrolFirst: SqlStatement<[object]>;
  enrolAgain: SqlStatement<[object]>;
  forgetWrongCodes: SqlStatement<[string]>;
  openLockout: SqlStatement<[string, string]>;
  reserveAttempt: SqlStatement<[object], { failed_attempts: number }>;
  lockout: SqlStatement<[string], { locked_until: string | null }>;
  useStep: SqlStatement<[object]>;
  clearLockout: SqlStatement<[string]>;
}

/**
 * Enrolment and step-up decide in the database, with conditional writes, so they hold across
 * every instance on one database (and every request of one): a time step is taken by the one
 * UPDATE that finds the last used step below it, and each attempt takes a numbered slot of the
 * lock's budget before its code is even checked, so no burst of guesses, however parallel, has
 * more than MFA_MAX_FAILED_ATTEMPTS codes checked per lock period.
 */
@Injectable()
export class MfaService {
  private readonly box: SecretBox;
  private readonly lockouts: Repository<MfaLockoutEntity>;
  private statements: MfaStatements | null = null;

  constructor(
    private readonly users: UsersService,
    private readonly clock: Clock,
    private readonly config: ConfigService,
    @InjectDataSource(PLATFORM_DB) private readonly db: DataSource,
  ) {
    this.box = new SecretBox(config.secrets.encryptionKey);
    this.lockouts = db.getRepository(MfaLockoutEntity);
  }

  private get sql(): MfaStatements {
    if (this.statements !== null) return this.statements;
    const db = connectionOf(this.db);
    this.statements = {
      enrolFirst: db.prepare(
        `UPDATE users SET mfa_secret_enc = @secret, mfa_last_counter = 0, step_up_until = NULL
         WHERE id = @id AND mfa_secret_enc IS NULL`,
      ),
      // The step-up that allowed it is spent here: one step-up, one re-enrolment.
      enrolAgain: db.prepare(
        `UPDATE users SET mfa_secret_enc = @secret, mfa_last_counter = 0, step_up_until = NULL
         WHERE id = @id AND mfa_secret_enc = @old AND step_up_until > @now`,
      ),
      forgetWrongCodes: db.prepare(
        'UPDATE mfa_lockouts SET failed_attempts = 0 WHERE user_id = ? AND locked_until IS NULL',
      ),
      openLockout: db.prepare(
        `INSERT INTO mfa_lockouts (credential_id, user_id, failed_attempts, locked_until)
         VALUES (?, ?, 0, NULL) ON CONFLICT (credential_id) DO NOTHING`,
      ),
      // Slot n of the budget; the last slot sets the lock at once (its code, if right, lifts
      // it), so attempts that arrive while it is being checked are already refused. An expired
      // lock starts a fresh budget.
      reserveAttempt: db.prepare(
        `UPDATE mfa_lockouts
         SET failed_attempts = CASE WHEN locked_until IS NULL THEN failed_attempts + 1 ELSE 1 END,
             locked_until = CASE WHEN locked_until IS NULL AND failed_attempts + 1 >= @max
                                 THEN @until ELSE NULL END
         WHERE credential_id = @id AND (locked_until IS NULL OR locked_until <= @now)
         RETURNING failed_attempts`,
      ),
      lockout: db.prepare('SELECT locked_until FROM mfa_lockouts WHERE credential_id = ?'),
      // Only a later step than the last used one, and only while the seed the code was checked
      // against is still the enrolled one (a re-enrolment in between voids it).
      useStep: db.prepare(
        `UPDATE users SET mfa_last_counter = @counter, step_up_until = @until
         WHERE id = @id AND mfa_last_counter < @counter AND mfa_secret_enc = @secret`,
      ),
      clearLockout: db.prepare('DELETE FROM mfa_lockouts WHERE credential_id = ?'),
    };
    return this.statements;
  }

  private async lockoutOf(credentialId: string, userId: string): Promise<MfaLockoutEntity> {
    return (
      (await this.lockouts.findOneBy({ credentialId })) ?? {
        credentialId,
        userId,
        failedAttempts: 0,
        lockedUntil: null,
      }
    );
  }

  /**
   * TOTP enrolment (RFC 6238, SHA-1, 6 digits, 30 s). Replacing an enrolled seed needs a step-up
   * with the current one within the step-up window, and never lifts a lock: a session token alone
   * (a stolen one, say) must not swap the authenticator and so defeat the withdrawal step-up.
   */
  async enroll(userId: string): Promise<{ secret: string; otpauth_url: string }> {
    const user = await this.users.byId(userId);
    if (user === null) throw new DomainError('UNAUTHENTICATED', 'The account no longer exists');
    const now = this.clock.now();
    if (user.mfaSecretEnc !== null) {
      // Enrolment takes a session: the sessions' lock is the one that applies.
      assertNotLocked(
        (await this.lockoutOf(lockoutIdOf({ keyId: null, userId }), userId)).lockedUntil,
        now,
      );
      if (user.stepUpUntil === null || Date.parse(user.stepUpUntil) <= now) {
        throw stepUpRequired();
      }
    }
    const secret = newTotpSecret();
    const sealed = this.box.seal(secret);
    // Only the MFA columns (a profile changed meanwhile stays), and only if the seed is still the
    // one read above: of two enrolments at once, on any instances, one wins; the other finds an
    // enrolled seed (or its step-up spent) and is told to step up.
    const written =
      user.mfaSecretEnc === null
        ? this.sql.enrolFirst.run({ id: userId, secret: sealed })
        : this.sql.enrolAgain.run({
            id: userId,
            secret: sealed,
            old: user.mfaSecretEnc,
            now: new Date(now).toISOString(),
          });
    if (written.changes === 0) throw stepUpRequired();
    // Wrong codes against the old seed no longer count (a lock, though, stays).
    this.sql.forgetWrongCodes.run(userId);
    const label = encodeURIComponent(`Sandbox Exchange:${user.email}`);
    return {
      secret,
      otpauth_url: `otpauth://totp/${label}?secret=${secret}&issuer=Sandbox%20Exchange&algorithm=SHA1&digits=6&period=30`,
    };
  }

  /**
   * Verifies a TOTP code and caches the step-up for MFA_STEP_UP_TTL_SECONDS. A code (time step)
   * is accepted once; MFA_MAX_FAILED_ATTEMPTS wrong codes lock step-up for MFA_LOCK_SECONDS for
   * the credential that sent them (an API key, or the user's sessions): a leaked key, even a
   * read-only one, can lock out only itself, not the owner's withdrawals with another credential.
   */
  async stepUp(c: Credential, code: string): Promise<{ stepped_up_until: string }> {
    const userId = c.userId;
    const user = await this.users.byId(userId);
    if (user === null) throw new DomainError('UNAUTHENTICATED', 'The account no longer exists');
    if (user.mfaSecretEnc === null) {
      throw new DomainError('MFA_NOT_ENROLLED', 'Enrol first: POST /api/v1/security/mfa/enroll');
    }
    const now = this.clock.now();
    const credentialId = lockoutIdOf(c);
    const slot = this.reserveAttempt(credentialId, userId, now);
    const counter = matchTotp(this.box.open(user.mfaSecretEnc), code, Math.floor(now / 1000));
    const until = new Date(now + this.config.values.mfaStepUpTtlSeconds * 1000).toISOString();
    const accepted =
      counter !== null &&
      counter > user.mfaLastCounter &&
      this.sql.useStep.run({ id: userId, counter, until, secret: user.mfaSecretEnc }).changes === 1;
    if (!accepted) {
      // The attempt was counted when it took its slot; the last slot's lock is already set.
      throw new DomainError(
        'MFA_CODE_INVALID',
        counter === null
          ? 'Wrong or expired code'
          : 'This code was already used; wait for the next one',
        { attempts_before_lock: Math.max(0, MFA_MAX_FAILED_ATTEMPTS - slot) },
      );
    }
    // A right code resets the count (and lifts the lock its own slot may have set).
    this.sql.clearLockout.run(credentialId);
    return { stepped_up_until: until };
  }

  /**
   * Takes the next slot of the credential's attempt budget (1..MFA_MAX_FAILED_ATTEMPTS) in one
   * conditional write; 429 MFA_LOCKED while its lock lasts.
   */
  private reserveAttempt(credentialId: string, userId: string, now: number): number {
    const params = {
      id: credentialId,
      now: new Date(now).toISOString(),
      max: MFA_MAX_FAILED_ATTEMPTS,
      until: new Date(now + MFA_LOCK_SECONDS * 1000).toISOString(),
    };
    this.sql.openLockout.run(credentialId, userId);
    // Twice at most: a lock that ends between the refused write and the read is retried once.
    for (let i = 0; i < 2; i++) {
      const slot = this.sql.reserveAttempt.get(params);
      if (slot !== undefined) return slot.failed_attempts;
      assertNotLocked(this.sql.lockout.get(credentialId)?.locked_until ?? null, now);
    }
    // Only if a lock was set and lifted twice in between: refused as locked all the same.
    throw lockedError(params.until, now);
  }

  /** True while the user's last step-up is fresh (withdrawals ask this). */
  async hasFreshStepUp(userId: string): Promise<boolean> {
    const user = await this.users.byId(userId);
    return user?.stepUpUntil != null && Date.parse(user.stepUpUntil) > this.clock.now();
  }
}

function stepUpRequired(): DomainError {
  return new DomainError(
    'MFA_STEP_UP_REQUIRED',
    'MFA is already enrolled: step up with a code from the current authenticator (POST /api/v1/security/mfa/step-up), then enrol again within the step-up window',
  );
}

/** 429 MFA_LOCKED while a credential's lock from too many wrong codes lasts (step-up and re-enrolment). */
function assertNotLocked(lockedUntil: string | null, now: number): void {
  if (lockedUntil === null || Date.parse(lockedUntil) <= now) return;
  throw lockedError(lockedUntil, now);
}

function lockedError(lockedUntil: string, now: number): DomainError {
  const retry = Math.max(1, Math.ceil((Date.parse(lockedUntil) - now) / 1000));
  return new DomainError(
    'MFA_LOCKED',
    `Too many wrong codes; step-up and re-enrolment are locked for ${retry} s`,
    { locked_until: lockedUntil, max_failed_attempts: MFA_MAX_FAILED_ATTEMPTS },
    { 'Retry-After': String(retry) },
  );
}
