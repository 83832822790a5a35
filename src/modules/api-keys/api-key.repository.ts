import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, FindOptionsWhere, Repository, SelectQueryBuilder } from 'typeorm';
import type { Scope } from '../../common/api/scopes.js';
import { SecretBox } from '../../common/crypto/secret-box.js';
import { sha256Hex } from '../../common/crypto/tokens.js';
import { ConfigService } from '../../config/config.service.js';
import { PLATFORM_DB } from '../../database/databases.js';
import { ClusterSignals } from '../redis/cluster-signals.js';
import { ApiKeyEntity } from './entities/api-key.entity.js';

/** What the request pipeline needs of a key, resolved once and cached. */
export interface ResolvedKey {
  entity: ApiKeyEntity;
  scopes: Scope[];
  /** Plain signing secret when signing is required (kept only in process memory). */
  signingSecret: string | null;
  /** The entity's lastUsedAt as epoch ms (null: never), kept by the access pipeline's touch. */
  lastUsedMs?: number | null;
}

const CACHE_LIMIT = 10_000;

/** A cached resolution, and until when (real ms) it may be served without a read. */
interface Cached {
  key: ResolvedKey;
  until: number;
}

/**
 * Key lookup: one indexed lookup by the SHA-256 of the presented secret, cached in process.
 * Revoke, rotate and tier changes go through {@link updateWhere} or {@link forget}, which drop
 * the cache entry here, and publish a key signal (ClusterSignals), which drops it on every
 * instance: a revoked key is refused on the very next request. With Redis an entry is also read
 * again after the signals' cache TTL, so a signal missed during an outage is bounded.
 */
@Injectable()
export class ApiKeyRepository {
  readonly repo: Repository<ApiKeyEntity>;
  readonly box: SecretBox;
  private readonly cache = new Map<string, Cached>();
  private readonly ttlMs: number;

  constructor(
    @InjectDataSource(PLATFORM_DB) db: DataSource,
    config: ConfigService,
    private readonly signals: ClusterSignals,
  ) {
    this.repo = db.getRepository(ApiKeyEntity);
    this.box = new SecretBox(config.secrets.encryptionKey);
    this.ttlMs = signals.cacheTtlMs ?? Infinity;
    const drop = ({ keyId }: { keyId: string }) => this.dropCached(keyId);
    signals.on('key.revoked', drop);
    signals.on('key.rotated', drop);
    signals.on('key.changed', drop);
  }

  /**
   * The cached resolution of a secret, read without a promise (the request pipeline's hot path
   * for a known key): undefined when it is not cached or its TTL passed (then {@link bySecret}).
   */
  cached(secret: string): ResolvedKey | undefined {
    const hit = this.cache.get(sha256Hex(secret));
    if (hit !== undefined && (this.ttlMs === Infinity || hit.until > Date.now())) return hit.key;
    return undefined;
  }

  async bySecret(secret: string): Promise<ResolvedKey | null> {
    const hit = this.cached(secret);
    if (hit !== undefined) return hit;
    const hash = sha256Hex(secret);
    const entity = await this.repo.findOneBy({ secretHash: hash });
    if (entity === null) {
      this.cache.delete(hash);
      return null;
    }
    const resolved = this.resolve(entity);
    this.cache.delete(hash);
    if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(hash, { key: resolved, until: Date.now() + this.ttlMs });
    return resolved;
  }

  /**
   * Tells every instance, this one first, that the key changed: their cached resolutions go, and
   * a revoked or rotated key's realtime sessions end (RealtimeHub).
   */
  announce(kind: 'key.revoked' | 'key.rotated' | 'key.changed', keyId: string): void {
    this.signals.publish({ kind, keyId });
  }

  /**
   * Drops every cached resolution of a key, whatever secret it was cached under (another
   * instance's signal names the key, not its secrets). Scans the cache: keys change rarely.
   */
  private dropCached(keyId: string): void {
    for (const [hash, c] of this.cache) if (c.key.entity.id === keyId) this.cache.delete(hash);
  }

  async insert(entity: ApiKeyEntity): Promise<void> {
    await this.repo.insert(entity);
  }

  /** Persists changes to a key and drops its cached entry (under its old hash too). */
  /**
   * Changes a key only while `where` still holds (its id, and e.g. not revoked, or still this
   * secret), so two requests that read it at once cannot undo each other: saving a whole entity
   * read before a concurrent revoke would write `revoked_at` back to null. False when nothing
   * matched. The cached resolutions of `secretHashes` are dropped.
   */
  async updateWhere(
    where: FindOptionsWhere<ApiKeyEntity> & { id: string },
    changes: Partial<ApiKeyEntity>,
    secretHashes: string[],
  ): Promise<boolean> {
    const result = await this.repo.update(where, changes);
    await this.forget(where.id, secretHashes);
    return (result.affected ?? 0) > 0;
  }

  /**
   * Drops the cached resolutions of a key: those of `secretHashes` and of its secret as stored
   * now (a rotation that committed in between made a new one, which may be cached already).
   */
  async forget(keyId: string, secretHashes: string[]): Promise<void> {
    for (const h of secretHashes) this.cache.delete(h);
    const now = await this.repo.findOne({ where: { id: keyId }, select: { secretHash: true } });
    if (now !== null) this.cache.delete(now.secretHash);
  }

  resolve(entity: ApiKeyEntity): ResolvedKey {
    return {
      entity,
      scopes: entity.scopes === '' ? [] : (entity.scopes.split(',') as Scope[]),
      signingSecret:
        entity.signingRequired && entity.signingSecretEnc !== null
          ? this.box.open(entity.signingSecretEnc)
          : null,
    };
  }
}

const TIER_RANK: Record<string, number> = { FREE: 0, PRO: 1, ENTERPRISE: 2 };

/**
 * The user's active (unrevoked, unexpired) keys. Every session request reads them (its tier), so
 * revoked keys, which pile up without bound, are never visited (a partial index holds the rest).
 */
function activeKeys(
  repo: Repository<ApiKeyEntity>,
  userId: string,
  nowIso: string,
): SelectQueryBuilder<ApiKeyEntity> {
  return repo
    .createQueryBuilder('k')
    .select(['k.id', 'k.tier'])
    .where('k.user_id = :userId', { userId })
    .andWhere('k.revoked_at IS NULL')
    .andWhere('(k.expires_at IS NULL OR k.expires_at > :now)', { now: nowIso });
}

/** The highest tier among a user's active keys; FREE when none. */
export async function highestActiveTier(
  repo: Repository<ApiKeyEntity>,
  userId: string,
  nowIso: string,
): Promise<ApiKeyEntity['tier']> {
  let best: ApiKeyEntity['tier'] = 'FREE';
  for (const k of await activeKeys(repo, userId, nowIso).getMany()) {
    if (TIER_RANK[k.tier] > TIER_RANK[best]) best = k.tier;
  }
  return best;
}
