import { Column, Entity, PrimaryColumn } from 'typeorm';

export type IdempotencyState = 'RUNNING' | 'DONE';

/** A mutation seen under an Idempotency-Key, scoped to the credential's owner. */
@Entity('idempotency_records')
export class IdempotencyRecordEntity {
  @PrimaryColumn({ name: 'owner_id', type: 'varchar', length: 60 })
  ownerId: string;

  @PrimaryColumn({ name: 'idem_key', type: 'varchar', length: 255 })
  idemKey: string;

  /** SHA-256 of method, path and raw body: "the same request". */
  @Column({ type: 'varchar', length: 64 })
  fingerprint: string;

  @Column({ type: 'varchar', length: 12 })
  state: IdempotencyState;

  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus: number | null;

  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody: string | null;

  @Column({ name: 'response_type', type: 'varchar', length: 100, nullable: true })
  responseType: string | null;

  @Column({ name: 'created_at', type: 'varchar', length: 30 })
  createdAt: string;

  @Column({ name: 'expires_at', type: 'varchar', length: 30 })
  expiresAt: string;

  /** The request that claimed the key (null on records from before claims were named). */
  @Column({ name: 'claim_id', type: 'varchar', length: 40, nullable: true })
  claimId: string | null;

  /** The instance that request runs on (IdempotencyService.instanceId). */
  @Column({ name: 'claimed_by', type: 'varchar', length: 40, nullable: true })
  claimedBy: string | null;
}
