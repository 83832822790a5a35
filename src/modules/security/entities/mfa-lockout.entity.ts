import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * Wrong MFA codes per credential (an API key, or a user's sessions together), so a leaked key,
 * even a read-only one, can lock out only itself, never the owner's other credentials.
 */
@Entity('mfa_lockouts')
export class MfaLockoutEntity {
  /** The API key id, or `session:<user id>` for the user's session tokens. */
  @PrimaryColumn({ name: 'credential_id', type: 'varchar', length: 60 })
  credentialId: string;

  @Column({ name: 'user_id', type: 'varchar', length: 40 })
  userId: string;

  @Column({ name: 'failed_attempts', type: 'integer', default: 0 })
  failedAttempts: number;

  @Column({ name: 'locked_until', type: 'varchar', length: 30, nullable: true })
  lockedUntil: string | null;
}
