import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * Wrong MFA codes per user and kind of credential (the user's API keys together, or the user's
 * sessions together), so a leaked key, even a read-only one, cannot lock the owner's sessions out.
 */
@Entity('mfa_lockouts')
export class MfaLockoutEntity {
  /** `keys:<user id>` for the user's API keys, `session:<user id>` for the user's sessions. */
  @PrimaryColumn({ name: 'credential_id', type: 'varchar', length: 60 })
  credentialId: string;

  @Column({ name: 'user_id', type: 'varchar', length: 40 })
  userId: string;

  @Column({ name: 'failed_attempts', type: 'integer', default: 0 })
  failedAttempts: number;

  @Column({ name: 'locked_until', type: 'varchar', length: 30, nullable: true })
  lockedUntil: string | null;
}
