import { DomainError } from '../../common/errors/domain-error.js';
import type { EngineEvent } from '../../engine/index.js';

/** How long an Idempotency-Key stays in use (its answer is kept, its effect fences it): 24 hours. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/** The Idempotency-Key a command runs under (per owner), so its effect is recorded with it. */
export interface IdempotencyScope {
  ownerId: string;
  key: string;
  /**
   * The request's claim of the key (Idempotency-Key service): the commands of one request share
   * it (a batch's legs), so they add to one effect; another claim's command is another request.
   */
  claimId?: string;
  /** When the key's current use began (epoch ms, the world's clock): its window starts there. */
  claimedAt?: number;
}

/** What a request under a key changed: the orders it placed, the ledger references it wrote. */
export interface EffectIds {
  orderIds: string[];
  referenceIds: string[];
}

/** Adds what these events did (orders accepted, money moved other than by trades) to `into`. */
export function addEffectIds(into: EffectIds, events: readonly EngineEvent[]): void {
  for (const e of events) {
    if (e.type === 'order.accepted') into.orderIds.push(e.order.id);
    else if (e.type === 'balance.changed' && e.reason !== 'TRADE' && e.referenceId !== null)
      into.referenceIds.push(e.referenceId);
  }
}

/**
 * 409 IDEMPOTENT_REQUEST_APPLIED: the request under this key was applied already; it is not run
 * again. The answer of a key whose request took effect but was never answered (the
 * Idempotency-Key service, after a crash) and of a second request reaching the engine writer
 * under a key whose first already changed it ({@link AppliedKeys}).
 */
export function appliedError(key: string, effect: EffectIds): DomainError {
  return new DomainError(
    'IDEMPOTENT_REQUEST_APPLIED',
    'The request with this Idempotency-Key was applied, but its answer was lost (the service stopped or failed before sending it); it is not run again. Look up its orders or ledger entries (details) instead of retrying.',
    { idempotency_key: key, order_ids: effect.orderIds, reference_ids: effect.referenceIds },
  );
}

/** An effect the engine database holds (`idempotency_effects`), for {@link AppliedKeys.load}. */
export interface StoredEffect {
  ownerId: string;
  key: string;
  /** When it was recorded (epoch ms). */
  at: number;
}

interface Applied {
  claimId: string | undefined;
  /** Where the key's use began: it is live until `since + ttl`. */
  since: number;
}

/**
 * The engine writer's record of the (owner, Idempotency-Key) pairs whose requests changed its
 * engine within the idempotency window: the fence that keeps a key from taking effect twice when
 * two requests under it reach the writer (a claim settled by a peer that took its holder for
 * stopped, while the holder's command was still on its way). Checked before a keyed command runs,
 * in memory (no database round trip); loaded from `idempotency_effects` when the engine is
 * (re)built, so a new writer term knows what its predecessors committed, and a failed commit's
 * keys go with the rebuild. Entries are kept in the order they began, so expired ones are dropped
 * from the front as new ones come. Only the keys and times are held (about 200 bytes a key); what
 * a refused request's first did is read from `idempotency_effects` when refusing.
 */
export class AppliedKeys {
  private entries = new Map<string, Applied>();

  constructor(private readonly ttlMs: number = IDEMPOTENCY_TTL_MS) {}

  /** Replaces the record with the stored effects still live at `now` (oldest first). */
  load(stored: Iterable<StoredEffect>, now: number): void {
    const entries = new Map<string, Applied>();
    for (const s of stored) {
      if (s.at + this.ttlMs <= now) continue;
      entries.set(slot(s.ownerId, s.key), { claimId: undefined, since: s.at });
    }
    this.entries = entries;
  }

  /**
   * When the use of the scope's key began whose request (another one) changed the engine, if it
   * is still in its window at `now`: the command must not run. An effect past its window belonged
   * to an earlier use of the key (the key may be used again, as `idempotency_effects`' upsert
   * replaces it); the same claim's effect is this request's own (a batch's earlier legs).
   */
  conflict(scope: IdempotencyScope, now: number): number | undefined {
    const k = slot(scope.ownerId, scope.key);
    const e = this.entries.get(k);
    if (e === undefined) return undefined;
    if (e.since + this.ttlMs <= now) {
      this.entries.delete(k);
      return undefined;
    }
    if (scope.claimId !== undefined && e.claimId === scope.claimId) return undefined;
    return e.since;
  }

  /** Records that a command under the scope's key changed the engine (at `now`). */
  note(scope: IdempotencyScope, now: number): void {
    const k = slot(scope.ownerId, scope.key);
    const e = this.entries.get(k);
    if (e !== undefined && scope.claimId !== undefined && e.claimId === scope.claimId) return;
    // A new use (an expired one's entry is replaced, and moves to the end).
    this.entries.delete(k);
    this.entries.set(k, { claimId: scope.claimId, since: Math.min(scope.claimedAt ?? now, now) });
    this.dropExpired(now);
  }

  /** Forgets a key's effect (a sandbox reset forgot its answer: the key runs its request again). */
  forget(ownerId: string, key: string): void {
    this.entries.delete(slot(ownerId, key));
  }

  /** How many keys are held (tests, diagnostics). */
  get size(): number {
    return this.entries.size;
  }

  /** Drops expired entries from the front (oldest first), stopping at the first live one. */
  private dropExpired(now: number): void {
    for (const [k, e] of this.entries) {
      if (e.since + this.ttlMs > now) return;
      this.entries.delete(k);
    }
  }
}

function slot(ownerId: string, key: string): string {
  return `${ownerId}\u0000${key}`;
}
