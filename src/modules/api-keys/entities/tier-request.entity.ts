import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Tier } from './api-key.entity.js';

export type TierRequestStatus = 'PENDING' | 'APPROVED' | 'DENIED';

@Entity('tier_requests')
export class TierRequestEntity {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Column({ name: 'key_id', type: 'varchar', length: 40 })
  keyId: string;

  @Column({ name: 'user_id', type: 'varchar', length: 40 })
  userId: string;

  @Column({ type: 'varchar', length: 12 })
  tier: Tier;

  @Column({ type: 'varchar', length: 1000, default: '' })
  reason: string;

  @Column({ type: 'varchar', length: 10 })
  status: TierRequestStatus;

  @Column({ name: 'created_at', type: 'varchar', length: 30 })
  createdAt: string;

  @Column({ name: 'decided_at', type: 'varchar', length: 30, nullable: true })
  decidedAt: string | null;

  @Column({ name: 'decided_by', type: 'varchar', length: 40, nullable: true })
  decidedBy: string | null;
}
