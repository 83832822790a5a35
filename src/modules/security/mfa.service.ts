import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, Repository } from 'typeorm';
import { Clock } from '../../common/clock/clock.js';
import { SecretBox } from '../../common/crypto/secret-box.js';
import { matchTotp, newTotpSecret } from '../../common/crypto/totp.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { KeyedSerializer } from '../../common/keyed-serializer.js';
import type { Credential } from '../../common/http/request-context.js';
import { ConfigService } from '../../config/config.service.js';
import { PLATFORM_DB } from '../../database/databases.js';
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

@Injectable()
export class MfaService {
  private readonly box: SecretBox;
  private readonly lockouts: Repository<MfaLockoutEntity>;

  /**
   * A user's enrolment and step-ups run one at a time: each reads the last used time step and the
   * wrong-code count, then writes them, and parallel requests must not all read the same values
   * (a code accepted twice, a burst of wrong codes never locking). On SQLite the awaits of one
   * request happened to run without interleaving (synchronous I/O); on PostgreSQL they do not.
   * One process serves a database (the DATA_DIR lock, the DATABASE_URL instance lock).
   */
  private readonly sections = new KeyedSerializer();

  constructor(
    private readonly users: UsersService,
    private readonly clock: Clock,
    private readonly config: ConfigService,
    @InjectDataSource(PLATFORM_DB) db: DataSource,
  ) {
    this.box = new SecretBox(config.secrets.encryptionKey);
    this.lockouts = db.getRepository(MfaLockoutEntity);
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
  enroll(userId: string): Promise<{ secret: string; otpauth_url: string }> {
    return this.sections.run(userId, () => this.enrollNow(userId));
  }

  private async enrollNow(userId: string): Promise<{ secret: string; otpauth_url: string }> {
    const user = await this.users.byId(userId);
    if (user === null) throw new DomainError('UNAUTHENTICATED', 'The account no longer exists');
    if (user.mfaSecretEnc !== null) {
      const now = this.clock.now();
      // Enrolment takes a session: the sessions' lock is the one that applies.
      assertNotLocked(
        (await this.lockoutOf(lockoutIdOf({ keyId: null, userId }), userId)).lockedUntil,
        now,
      );
      if (user.stepUpUntil === null || Date.parse(user.stepUpUntil) <= now) {
        throw new DomainError(
          'MFA_STEP_UP_REQUIRED',
          'MFA is already enrolled: step up with a code from the current authenticator (POST /api/v1/security/mfa/step-up), then enrol again within the step-up window',
        );
      }
    }
    const secret = newTotpSecret();
    // Only the MFA columns: `user` was read before the awaits above, and saving it whole would
    // write back a profile (username, bio, ...) changed in between.
    await this.users.repo.update(
      { id: userId },
      { mfaSecretEnc: this.box.seal(secret), mfaLastCounter: 0, stepUpUntil: null },
    );
    // Wrong codes against the old seed no longer count (a lock, though, stays).
    await this.lockouts.update({ userId }, { failedAttempts: 0 });
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
  stepUp(c: Credential, code: string): Promise<{ stepped_up_until: string }> {
    return this.sections.run(c.userId, () => this.stepUpNow(c, code));
  }

  private async stepUpNow(c: Credential, code: string): Promise<{ stepped_up_until: string }> {
    const userId = c.userId;
    const user = await this.users.byId(userId);
    if (user === null) throw new DomainError('UNAUTHENTICATED', 'The account no longer exists');
    if (user.mfaSecretEnc === null) {
      throw new DomainError('MFA_NOT_ENROLLED', 'Enrol first: POST /api/v1/security/mfa/enroll');
    }
    const now = this.clock.now();
    const lockout = await this.lockoutOf(lockoutIdOf(c), userId);
    assertNotLocked(lockout.lockedUntil, now);
    const counter = matchTotp(this.box.open(user.mfaSecretEnc), code, Math.floor(now / 1000));
    if (counter === null || counter <= user.mfaLastCounter) {
      lockout.failedAttempts += 1;
      const locked = lockout.failedAttempts >= MFA_MAX_FAILED_ATTEMPTS;
      if (locked) {
        lockout.lockedUntil = new Date(now + MFA_LOCK_SECONDS * 1000).toISOString();
        lockout.failedAttempts = 0;
      }
      await this.lockouts.save(lockout);
      throw new DomainError(
        'MFA_CODE_INVALID',
        counter === null
          ? 'Wrong or expired code'
          : 'This code was already used; wait for the next one',
        { attempts_before_lock: locked ? 0 : MFA_MAX_FAILED_ATTEMPTS - lockout.failedAttempts },
      );
    }
    const until = new Date(now + this.config.values.mfaStepUpTtlSeconds * 1000).toISOString();
    // Only the MFA columns, as in enrol: the rest of `user` may be stale by now.
    await this.users.repo.update({ id: userId }, { mfaLastCounter: counter, stepUpUntil: until });
    if (lockout.failedAttempts > 0 || lockout.lockedUntil !== null) {
      await this.lockouts.delete({ credentialId: lockout.credentialId });
    }
    return { stepped_up_until: until };
  }

  /** True while the user's last step-up is fresh (withdrawals ask this). */
  async hasFreshStepUp(userId: string): Promise<boolean> {
    const user = await this.users.byId(userId);
    return user?.stepUpUntil != null && Date.parse(user.stepUpUntil) > this.clock.now();
  }
}

/** 429 MFA_LOCKED while a credential's lock from too many wrong codes lasts (step-up and re-enrolment). */
function assertNotLocked(lockedUntil: string | null, now: number): void {
  if (lockedUntil === null || Date.parse(lockedUntil) <= now) return;
  const retry = Math.ceil((Date.parse(lockedUntil) - now) / 1000);
  throw new DomainError(
    'MFA_LOCKED',
    `Too many wrong codes; step-up and re-enrolment are locked for ${retry} s`,
    { locked_until: lockedUntil, max_failed_attempts: MFA_MAX_FAILED_ATTEMPTS },
    { 'Retry-After': String(retry) },
  );
}
