import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock/clock.js';
import { SecretBox } from '../../common/crypto/secret-box.js';
import { matchTotp, newTotpSecret } from '../../common/crypto/totp.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { ConfigService } from '../../config/config.service.js';
import { UsersService } from '../users/users.service.js';

/** Wrong codes allowed before step-up locks, and how long it stays locked. */
export const MFA_MAX_FAILED_ATTEMPTS = 5;
export const MFA_LOCK_SECONDS = 900;

@Injectable()
export class MfaService {
  private readonly box: SecretBox;

  constructor(
    private readonly users: UsersService,
    private readonly clock: Clock,
    private readonly config: ConfigService,
  ) {
    this.box = new SecretBox(config.secrets.encryptionKey);
  }

  /**
   * TOTP enrolment (RFC 6238, SHA-1, 6 digits, 30 s). Replacing an enrolled seed needs a step-up
   * with the current one within the step-up window, and never lifts a lock: a session token alone
   * (a stolen one, say) must not swap the authenticator and so defeat the withdrawal step-up.
   */
  async enroll(userId: string): Promise<{ secret: string; otpauth_url: string }> {
    const user = await this.users.byId(userId);
    if (user === null) throw new DomainError('UNAUTHENTICATED', 'The account no longer exists');
    if (user.mfaSecretEnc !== null) {
      const now = this.clock.now();
      assertNotLocked(user.mfaLockedUntil, now);
      if (user.stepUpUntil === null || Date.parse(user.stepUpUntil) <= now) {
        throw new DomainError(
          'MFA_STEP_UP_REQUIRED',
          'MFA is already enrolled: step up with a code from the current authenticator (POST /api/v1/security/mfa/step-up), then enrol again within the step-up window',
        );
      }
    }
    const secret = newTotpSecret();
    user.mfaSecretEnc = this.box.seal(secret);
    user.mfaLastCounter = 0;
    user.mfaFailedAttempts = 0;
    user.stepUpUntil = null;
    await this.users.repo.save(user);
    const label = encodeURIComponent(`Sandbox Exchange:${user.email}`);
    return {
      secret,
      otpauth_url: `otpauth://totp/${label}?secret=${secret}&issuer=Sandbox%20Exchange&algorithm=SHA1&digits=6&period=30`,
    };
  }

  /**
   * Verifies a TOTP code and caches the step-up for MFA_STEP_UP_TTL_SECONDS. A code (time step)
   * is accepted once; MFA_MAX_FAILED_ATTEMPTS wrong codes lock step-up for MFA_LOCK_SECONDS.
   */
  async stepUp(userId: string, code: string): Promise<{ stepped_up_until: string }> {
    const user = await this.users.byId(userId);
    if (user === null) throw new DomainError('UNAUTHENTICATED', 'The account no longer exists');
    if (user.mfaSecretEnc === null) {
      throw new DomainError('MFA_NOT_ENROLLED', 'Enrol first: POST /api/v1/security/mfa/enroll');
    }
    const now = this.clock.now();
    assertNotLocked(user.mfaLockedUntil, now);
    const counter = matchTotp(this.box.open(user.mfaSecretEnc), code, Math.floor(now / 1000));
    if (counter === null || counter <= user.mfaLastCounter) {
      user.mfaFailedAttempts += 1;
      const locked = user.mfaFailedAttempts >= MFA_MAX_FAILED_ATTEMPTS;
      if (locked) {
        user.mfaLockedUntil = new Date(now + MFA_LOCK_SECONDS * 1000).toISOString();
        user.mfaFailedAttempts = 0;
      }
      await this.users.repo.save(user);
      throw new DomainError(
        'MFA_CODE_INVALID',
        counter === null
          ? 'Wrong or expired code'
          : 'This code was already used; wait for the next one',
        { attempts_before_lock: locked ? 0 : MFA_MAX_FAILED_ATTEMPTS - user.mfaFailedAttempts },
      );
    }
    const until = new Date(now + this.config.values.mfaStepUpTtlSeconds * 1000).toISOString();
    user.mfaLastCounter = counter;
    user.mfaFailedAttempts = 0;
    user.mfaLockedUntil = null;
    user.stepUpUntil = until;
    await this.users.repo.save(user);
    return { stepped_up_until: until };
  }

  /** True while the user's last step-up is fresh (withdrawals ask this). */
  async hasFreshStepUp(userId: string): Promise<boolean> {
    const user = await this.users.byId(userId);
    return user?.stepUpUntil != null && Date.parse(user.stepUpUntil) > this.clock.now();
  }
}

/** 429 MFA_LOCKED while a lock from too many wrong codes lasts (step-up and re-enrolment). */
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
