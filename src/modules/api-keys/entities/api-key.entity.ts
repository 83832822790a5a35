import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Environment } from '../../../common/environment.js';

import type { Tier } from '../../../common/http/request-context.js';

export type { Tier };
export const TIERS: Tier[] = ['FREE', 'PRO', 'ENTERPRISE'];

/** An API key. The secret is stored only as its SHA-256; the signing secret only sealed. */
@Entity('api_keys')
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Column({ name: 'user_id', type: 'varchar', length: 40 })
  userId: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ type: 'varchar', length: 4 })
  environment: Environment;

  /** The first characters of the key (class prefix + 4), safe to show and to mail. */
  @Column({ type: 'varchar', length: 20 })
  prefix: string;

  @Column({ name: 'secret_hash', type: 'varchar', length: 64, unique: true })
  secretHash: string;

  /** Comma-separated scope names. */
  @Column({ type: 'varchar', length: 1000 })
  scopes: string;

  @Column({ type: 'varchar', length: 12 })
  tier: Tier;

  @Column({ name: 'expires_at', type: 'varchar', length: 30, nullable: true })
  expiresAt: string | null;

  @Column({ name: 'signing_required', type: 'boolean', default: false })
  signingRequired: boolean;

  @Column({ name: 'signing_secret_enc', type: 'varchar', length: 300, nullable: true })
  signingSecretEnc: string | null;

  @Column({ name: 'created_at', type: 'varchar', length: 30 })
  createdAt: string;

  @Column({ name: 'rotated_at', type: 'varchar', length: 30, nullable: true })
  rotatedAt: string | null;

  @Column({ name: 'last_used_at', type: 'varchar', length: 30, nullable: true })
  lastUsedAt: string | null;

  @Column({ name: 'revoked_at', type: 'varchar', length: 30, nullable: true })
  revokedAt: string | null;

  /** The ephemeral world a world key reaches (only it); null for every other key. */
  @Column({ name: 'world_id', type: 'varchar', length: 40, nullable: true })
  worldId: `wld_${string}` | null;
}
