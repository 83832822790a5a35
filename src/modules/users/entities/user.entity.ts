import { Column, Entity, PrimaryColumn } from 'typeorm';

export type Role = 'ADMIN' | 'SUPER_ADMIN' | 'CREATOR';

export type ProfileVisibility = 'PUBLIC' | 'PRIVATE';

/** An account on the platform (shared by both engines). */
@Entity('users')
export class UserEntity {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Column({ type: 'varchar', length: 320, unique: true })
  email: string;

  @Column({ name: 'password_hash', type: 'varchar', length: 300 })
  passwordHash: string;

  @Column({ name: 'email_verified', type: 'boolean', default: false })
  emailVerified: boolean;

  /** Comma-separated roles; a plain string keeps the column portable. */
  @Column({ type: 'varchar', length: 200, default: '' })
  roles: string;

  @Column({ name: 'rfq_responder_approved', type: 'boolean', default: false })
  rfqResponderApproved: boolean;

  @Column({ name: 'created_at', type: 'varchar', length: 30 })
  createdAt: string;

  /** TOTP seed, sealed with the service encryption key; null until enrolled. */
  @Column({ name: 'mfa_secret_enc', type: 'varchar', length: 300, nullable: true })
  mfaSecretEnc: string | null;

  /** Last TOTP time-step accepted; a code at or below it is a replay. */
  @Column({ name: 'mfa_last_counter', type: 'integer', default: 0 })
  mfaLastCounter: number;

  @Column({ name: 'mfa_failed_attempts', type: 'integer', default: 0 })
  mfaFailedAttempts: number;

  @Column({ name: 'mfa_locked_until', type: 'varchar', length: 30, nullable: true })
  mfaLockedUntil: string | null;

  /** The cached MFA step-up: withdrawals before this instant proceed. */
  @Column({ name: 'step_up_until', type: 'varchar', length: 30, nullable: true })
  stepUpUntil: string | null;

  /** `[a-z0-9_]{3,30}`, unique; generated at sign-up (and for accounts older than profiles). */
  @Column({ type: 'varchar', length: 30, unique: true })
  username: string;

  @Column({ name: 'display_name', type: 'varchar', length: 200, nullable: true })
  displayName: string | null;

  @Column({ type: 'text', nullable: true })
  bio: string | null;

  @Column({ name: 'avatar_url', type: 'varchar', length: 500, nullable: true })
  avatarUrl: string | null;

  @Column({ name: 'profile_visibility', type: 'varchar', length: 10, default: 'PUBLIC' })
  profileVisibility: ProfileVisibility;
}
