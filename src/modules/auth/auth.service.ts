import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { IsNull, type DataSource } from 'typeorm';
import { Clock } from '../../common/clock/clock.js';
import { dummyPasswordHash, hashPassword, verifyPassword } from '../../common/crypto/password.js';
import { randomBase62, sha256Hex } from '../../common/crypto/tokens.js';
import { DomainError } from '../../common/errors/domain-error.js';
import type { Credential } from '../../common/http/request-context.js';
import { IdGenerator } from '../../common/ids/id-generator.js';
import { ConfigService } from '../../config/config.service.js';
import { connectionOf, isUniqueViolation, PLATFORM_DB } from '../../database/databases.js';
import { SessionTokensService } from '../access/session-tokens.service.js';
import { MailService } from '../mail/mail.service.js';
import { UserEntity } from '../users/entities/user.entity.js';
import { normalizeEmail, UsersService } from '../users/users.service.js';
import type { MeDto, SessionDto, UserDto, VerificationSentDto } from './dto/auth.dto.js';
import { EmailVerificationEntity } from './entities/email-verification.entity.js';

const VERIFY_TTL_MS = 48 * 3600 * 1000;
const DAY_MS = 86_400_000;
/** Verification emails an account may get in 24 hours, the registration's included. */
export const RESENDS_PER_DAY = 10;
/** Generated usernames drawn for one sign-up before giving up (each clash is a rare race). */
const USERNAME_ATTEMPTS = 5;

@Injectable()
export class AuthService {
  /** scrypt N of new hashes (PASSWORD_SCRYPT_COST). */
  private readonly scryptCost: number;
  /**
   * Checked against when the email is unknown, so a login for a missing account costs what a
   * wrong password costs: the configured N, which is what the accounts' hashes are made with.
   */
  private readonly dummyHash: string;

  constructor(
    @InjectDataSource(PLATFORM_DB) private readonly db: DataSource,
    private readonly users: UsersService,
    private readonly sessions: SessionTokensService,
    private readonly mail: MailService,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    config: ConfigService,
  ) {
    this.scryptCost = config.values.passwordScryptCost;
    this.dummyHash = dummyPasswordHash(this.scryptCost);
  }

  async register(emailIn: string, password: string): Promise<UserDto> {
    const email = normalizeEmail(emailIn);
    if ((await this.users.byEmail(email)) !== null) {
      throw new DomainError('EMAIL_TAKEN', 'An account with this email exists; log in instead');
    }
    const user: UserEntity = this.users.repo.create({
      id: this.ids.next('usr'),
      username: '', // drawn by insertAccount
      displayName: null,
      bio: null,
      avatarUrl: null,
      profileVisibility: 'PUBLIC',
      email,
      passwordHash: await hashPassword(password, this.scryptCost),
      emailVerified: false,
      roles: '',
      rfqResponderApproved: false,
      createdAt: this.clock.nowDate().toISOString(),
      mfaSecretEnc: null,
      mfaLastCounter: 0,
      mfaFailedAttempts: 0,
      mfaLockedUntil: null,
      stepUpUntil: null,
    });
    const token = randomBase62(40);
    await this.insertAccount(user, token);
    await this.sendVerification(email, token);
    return this.toUserDto(user);
  }

  /**
   * Inserts the account and its verification token with a free generated username. The unique
   * indexes refuse a second account of the same email (EMAIL_TAKEN) and a username another
   * sign-up drew at the same moment: then the email is still free, and the insert is retried with
   * a fresh username rather than answered as EMAIL_TAKEN.
   */
  private async insertAccount(user: UserEntity, token: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      user.username = await this.users.freeUsername();
      try {
        await this.db.transaction(async (tx) => {
          await tx.getRepository(UserEntity).insert(user);
          await tx
            .getRepository(EmailVerificationEntity)
            .insert(verificationRow(user.id, token, this.clock.now()));
        });
        return;
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        // The same email registered concurrently: the check before passed for both.
        if ((await this.users.byEmail(user.email)) !== null) {
          throw new DomainError('EMAIL_TAKEN', 'An account with this email exists; log in instead');
        }
        if (attempt === USERNAME_ATTEMPTS) throw err;
      }
    }
  }

  /**
   * A fresh verification token for the caller's own unverified email (a lost or expired one
   * would otherwise leave the account without write scopes for good): the earlier unused tokens
   * stop working, the new one lasts 48 hours.
   */
  async resendVerification(c: Credential): Promise<VerificationSentDto> {
    const user = await this.users.byId(c.userId);
    if (user === null) throw new DomainError('UNAUTHENTICATED', 'The account no longer exists');
    if (user.emailVerified) {
      throw new DomainError('EMAIL_ALREADY_VERIFIED', `${user.email} is verified already`);
    }
    // At most RESENDS_PER_DAY tokens a day (the registration's included): the address was never
    // proved, so it must not be a way to mail someone else without end. Counted and written in
    // one synchronous transaction under the user's row lock, so parallel resends, on any
    // instances sharing the database, cannot all find room.
    const nowMs = this.clock.now();
    const token = randomBase62(40);
    const row = verificationRow(user.id, token, nowMs);
    const db = connectionOf(this.db);
    db.transaction(() => {
      db.prepare('UPDATE users SET created_at = created_at WHERE id = ?').run(user.id);
      const today = db
        .prepare(
          `SELECT expires_at FROM email_verifications WHERE user_id = ? AND expires_at > ?
           ORDER BY expires_at ASC`,
        )
        .all(user.id, new Date(nowMs + VERIFY_TTL_MS - DAY_MS).toISOString()) as {
        expires_at: string;
      }[];
      if (today.length >= RESENDS_PER_DAY) throw resendQuota(today[0].expires_at, nowMs);
      const now = new Date(nowMs).toISOString();
      db.prepare(
        'UPDATE email_verifications SET used_at = ? WHERE user_id = ? AND used_at IS NULL',
      ).run(now, user.id);
      db.prepare(
        `INSERT INTO email_verifications (token_hash, user_id, expires_at, used_at)
         VALUES (?, ?, ?, NULL)`,
      ).run(row.tokenHash, row.userId, row.expiresAt);
    }).immediate();
    await this.sendVerification(user.email, token);
    return { email: user.email, expires_at: row.expiresAt };
  }

  private async sendVerification(email: string, token: string): Promise<void> {
    await this.mail.send({
      to: email,
      kind: 'EMAIL_VERIFICATION',
      subject: 'Verify your email for the sandbox exchange',
      body: `Confirm your email with POST /api/v1/auth/verify-email {"token": "${token}"}. The token expires in 48 hours.`,
    });
  }

  async verifyEmail(token: string): Promise<UserDto> {
    const repo = this.db.getRepository(EmailVerificationEntity);
    const row = await repo.findOneBy({ tokenHash: sha256Hex(token) });
    const now = this.clock.nowDate().toISOString();
    if (row === null || row.usedAt !== null || row.expiresAt <= now) {
      throw new DomainError(
        'VERIFICATION_TOKEN_INVALID',
        'The verification token is unknown, used or expired',
      );
    }
    await this.db.transaction(async (tx) => {
      // Only while still unused: of two uses at once (on any instances), one verifies.
      const used = await tx
        .getRepository(EmailVerificationEntity)
        .update({ tokenHash: row.tokenHash, usedAt: IsNull() }, { usedAt: now });
      if ((used.affected ?? 0) === 0) {
        throw new DomainError(
          'VERIFICATION_TOKEN_INVALID',
          'The verification token is unknown, used or expired',
        );
      }
      await tx.getRepository(UserEntity).update({ id: row.userId }, { emailVerified: true });
    });
    const user = await this.users.byId(row.userId);
    return this.toUserDto(user!);
  }

  async login(email: string, password: string): Promise<SessionDto> {
    const user = await this.users.byEmail(email);
    const ok = await verifyPassword(password, user?.passwordHash ?? this.dummyHash);
    if (user === null || !ok)
      throw new DomainError('INVALID_CREDENTIALS', 'Wrong email or password');
    const { token, expiresAt } = this.sessions.issue(user.id);
    return { token, expires_at: expiresAt };
  }

  async me(c: Credential): Promise<MeDto> {
    const user = await this.users.byId(c.userId);
    if (user === null) throw new DomainError('UNAUTHENTICATED', 'The account no longer exists');
    return {
      user: this.toUserDto(user),
      credential: {
        type: c.type,
        key_id: c.keyId,
        environment: c.environment,
        scopes: c.scopes,
        tier: c.tier,
      },
    };
  }

  private toUserDto(u: UserEntity): UserDto {
    return userDto(u, this.users.rolesOf(u));
  }
}

function userDto(u: UserEntity, roles: UserDto['roles']): UserDto {
  return {
    id: u.id,
    email: u.email,
    email_verified: u.emailVerified,
    username: u.username,
    roles,
  };
}

/** A verification token's stored row: its hash, never the token, lasting VERIFY_TTL_MS. */
/** 429 QUOTA_EXCEEDED: the day's verification emails are spent until the oldest one's day ends. */
function resendQuota(oldestExpiresAt: string, nowMs: number): DomainError {
  const freeAt = Date.parse(oldestExpiresAt) - VERIFY_TTL_MS + DAY_MS;
  const seconds = Math.max(1, Math.ceil((freeAt - nowMs) / 1000));
  return new DomainError(
    'QUOTA_EXCEEDED',
    `At most ${RESENDS_PER_DAY} verification emails in 24 hours; retry after ${seconds} s`,
    { period: 'day', limit: RESENDS_PER_DAY, resets_at: new Date(freeAt).toISOString() },
    { 'Retry-After': String(seconds) },
  );
}

function verificationRow(userId: string, token: string, nowMs: number): EmailVerificationEntity {
  return {
    tokenHash: sha256Hex(token),
    userId,
    expiresAt: new Date(nowMs + VERIFY_TTL_MS).toISOString(),
    usedAt: null,
  };
}
