import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('email_verifications')
export class EmailVerificationEntity {
  @PrimaryColumn({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash: string;

  @Column({ name: 'user_id', type: 'varchar', length: 40 })
  userId: string;

  @Column({ name: 'expires_at', type: 'varchar', length: 30 })
  expiresAt: string;

  @Column({ name: 'used_at', type: 'varchar', length: 30, nullable: true })
  usedAt: string | null;
}
