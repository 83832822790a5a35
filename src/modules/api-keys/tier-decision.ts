import type { SqlConnection } from '../../common/sql/sql-connection.js';
import { DomainError } from '../../common/errors/domain-error.js';
import type { Tier } from './entities/api-key.entity.js';
import type { TierRequestStatus } from './entities/tier-request.entity.js';

/** What deciding a tier request writes on it. */
export interface TierDecision {
  status: Exclude<TierRequestStatus, 'PENDING'>;
  decidedAt: string;
  decidedBy: string;
}

/**
 * Records a tier decision in one synchronous transaction on the platform connection: the request
 * moves from PENDING (of two admins deciding at the same moment one wins and the other is told),
 * an approved key's tier is raised unless the key was revoked since it was read (then nothing is
 * written and the request stays pending, to be denied), and `alongside` (the requester's
 * notification) is written in the same transaction. Nothing awaits while it is open: another
 * write on the connection (a notification announced elsewhere) can never join it and be rolled
 * back with it.
 */
export function commitTierDecision<T>(
  db: SqlConnection,
  requestId: string,
  decision: TierDecision,
  raise: { keyId: string; tier: Tier } | null,
  alongside: () => T,
): T {
  return db.transaction(() => {
    const decided = db
      .prepare(
        `UPDATE tier_requests SET status = ?, decided_at = ?, decided_by = ?
         WHERE id = ? AND status = 'PENDING'`,
      )
      .run(decision.status, decision.decidedAt, decision.decidedBy, requestId);
    if (decided.changes === 0) {
      const now = db.prepare('SELECT status FROM tier_requests WHERE id = ?').get(requestId) as
        { status: string } | undefined;
      throw new DomainError(
        'TIER_REQUEST_NOT_PENDING',
        `Tier request ${requestId} is already ${now?.status ?? 'decided'}`,
      );
    }
    if (raise !== null) {
      const raised = db
        .prepare('UPDATE api_keys SET tier = ? WHERE id = ? AND revoked_at IS NULL')
        .run(raise.tier, raise.keyId);
      if (raised.changes === 0) {
        throw new DomainError(
          'API_KEY_NOT_ACTIVE',
          'The key was revoked since the request; deny it instead',
          { key_id: raise.keyId },
        );
      }
    }
    return alongside();
  })();
}
