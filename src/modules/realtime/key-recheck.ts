import { In, type Repository } from 'typeorm';
import type { ApiKeyEntity } from '../api-keys/entities/api-key.entity.js';

/** What the database says now of a key that realtime sessions hold. */
export interface KeyNow {
  /** Revoked (or gone). */
  revoked: boolean;
  /** When its secret last changed (service clock, ms); a session from before used the old one. */
  rotatedAt: number | null;
}

/**
 * The state of the keys `keyIds` for the periodic check of open realtime sessions. With several
 * instances a key's withdrawal reaches this instance as a signal (ClusterSignals); one missed
 * while Redis was away is found here instead, at the next check. One query per 500 keys.
 */
export async function keysNow(
  repo: Repository<ApiKeyEntity>,
  keyIds: readonly string[],
): Promise<Map<string, KeyNow>> {
  const out = new Map<string, KeyNow>();
  for (let i = 0; i < keyIds.length; i += 500) {
    const part = keyIds.slice(i, i + 500);
    for (const id of part) out.set(id, { revoked: true, rotatedAt: null });
    const rows = await repo.find({
      where: { id: In(part) },
      select: { id: true, revokedAt: true, rotatedAt: true },
    });
    for (const r of rows) {
      out.set(r.id, {
        revoked: r.revokedAt !== null,
        rotatedAt: r.rotatedAt === null ? null : Date.parse(r.rotatedAt),
      });
    }
  }
  return out;
}
