import { DomainError } from '../../common/errors/domain-error.js';
import { runDeferred, type SqlConnection } from '../../common/sql/sql-connection.js';
import type { ApiKeyEntity } from './entities/api-key.entity.js';

/**
 * Counts the user's active (unrevoked, unexpired at the key's creation) keys and inserts `key` in
 * one synchronous transaction that first locks the user's row: creations of one user, on every
 * instance sharing the database, take turns there, so parallel creates at the cap cannot all see
 * room (PostgreSQL's READ COMMITTED lets two transactions count the same rows otherwise). On
 * SQLite the IMMEDIATE transaction holds the database's write lock from its start, which does the
 * same for every process on the file. 409 API_KEY_LIMIT_REACHED when the user holds `cap` already.
 */
export function insertKeyWithinCap(db: SqlConnection, key: ApiKeyEntity, cap: number): void {
  db.transaction(() => {
    // The lock: a write of a column that never changes (held to the commit). Deferred: on
    // PostgreSQL it goes with the count's round trip, and still runs before it, so the count
    // (a statement of its own, with a snapshot taken after the lock) sees every key committed by
    // the transaction that held the lock before. The user may have been deleted since the
    // request was authenticated: then nothing was locked and `present` is 0.
    runDeferred(db.prepare('UPDATE users SET created_at = created_at WHERE id = ?'), key.userId);
    const { active, present } = db
      .prepare(
        `SELECT COUNT(*) AS active, (SELECT COUNT(*) FROM users WHERE id = ?) AS present
         FROM api_keys
         WHERE user_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)`,
      )
      .get(key.userId, key.userId, key.createdAt) as { active: number; present: number };
    if (present === 0) {
      throw new DomainError('UNAUTHENTICATED', 'The account no longer exists');
    }
    if (active >= cap) {
      throw new DomainError(
        'API_KEY_LIMIT_REACHED',
        `At most ${cap} active API keys per user: revoke one you no longer use`,
        { limit: cap, active },
      );
    }
    // Deferred: the insert goes with the COMMIT (one round trip on PostgreSQL).
    runDeferred(
      db.prepare(
        `INSERT INTO api_keys (id, user_id, name, environment, prefix, secret_hash, scopes, tier,
         expires_at, signing_required, signing_secret_enc, created_at, rotated_at, last_used_at,
         revoked_at, world_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      key.id,
      key.userId,
      key.name,
      key.environment,
      key.prefix,
      key.secretHash,
      key.scopes,
      key.tier,
      key.expiresAt,
      key.signingRequired ? 1 : 0,
      key.signingSecretEnc,
      key.createdAt,
      key.rotatedAt,
      key.lastUsedAt,
      key.revokedAt,
      key.worldId,
    );
  }).immediate();
}
