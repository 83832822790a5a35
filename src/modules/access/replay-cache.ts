import { Clock } from '../../common/clock/clock.js';

/**
 * Signatures already accepted, so a signed request captured on the wire cannot be sent again
 * while its timestamp is still inside the skew window (CONTRACT.md: 401 SIGNATURE_REPLAYED).
 */
export interface ReplayCache {
  /**
   * Records `signature` of key `keyId` until `expiresAtMs` (service clock) and says whether it
   * was already recorded and not yet expired. Record and check are one step: of two concurrent
   * calls with the same signature exactly one answers false.
   */
  seen(keyId: string, signature: string, expiresAtMs: number): Promise<boolean> | boolean;
}

export const REPLAY_CACHE = Symbol('REPLAY_CACHE');

/** How often (service clock) the in-memory cache drops expired signatures. */
const SWEEP_EVERY_MS = 10_000;

/**
 * The in-process cache (one instance, or the fallback while Redis is away): a Map from key and
 * signature to expiry. Expired entries are dropped at most every 10 s of service-clock time, so
 * memory follows the signed requests of the last window (about 10 minutes), not all time.
 */
export class MemoryReplayCache implements ReplayCache {
  private readonly entries = new Map<string, number>();
  private nextSweep = 0;

  constructor(private readonly clock: Clock) {}

  seen(keyId: string, signature: string, expiresAtMs: number): boolean {
    const now = this.clock.now();
    this.sweep(now);
    const id = `${keyId}:${signature}`;
    const until = this.entries.get(id);
    if (until !== undefined && until > now) return true;
    this.entries.set(id, expiresAtMs);
    return false;
  }

  /** Signatures held (tests: memory stays bounded). */
  get size(): number {
    return this.entries.size;
  }

  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    this.nextSweep = now + SWEEP_EVERY_MS;
    for (const [id, until] of this.entries) if (until <= now) this.entries.delete(id);
  }
}
