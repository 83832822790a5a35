import { randomBytes } from 'node:crypto';
import { Logger } from '@nestjs/common';

/**
 * What one instance tells every instance (itself included) so that in-process state derived from
 * the database follows a change made anywhere: caches drop their entries, sockets of a withdrawn
 * key close, cancel-on-disconnect settings reload and arm or disarm.
 */
export type ClusterSignal =
  /** The key was revoked: its cached resolutions go, its sockets close with API_KEY_REVOKED. */
  | { kind: 'key.revoked'; keyId: string }
  /** The key got a new secret: its cached resolutions go, its sockets close with API_KEY_ROTATED. */
  | { kind: 'key.rotated'; keyId: string }
  /** Something else of the key changed (tier, scopes, expiry): its cached resolutions go. */
  | { kind: 'key.changed'; keyId: string }
  /** A webhook endpoint was created, changed, suspended or disabled (null: several at once). */
  | { kind: 'webhook-endpoint.changed'; endpointId: string | null }
  /** A key's cancel-on-disconnect setting was enabled, changed or disabled: read it again. */
  | { kind: 'cod.settings'; keyId: string }
  /** The last connection of a key on every instance closed: its orders go at `at` (service ms). */
  | { kind: 'cod.armed'; keyId: string; at: number; world: string; by: string }
  /** A connection of the key came back (anywhere): nothing is cancelled. */
  | { kind: 'cod.disarmed'; keyId: string }
  /** The service clock (SANDBOX_CLOCK_CONTROL) runs `offsetMs` ahead of the wall clock now. */
  | { kind: 'clock.advanced'; offsetMs: number }
  /** An ephemeral world's clock runs `offsetMs` ahead of the service clock now (its writer moved it). */
  | { kind: 'world-clock.advanced'; world: string; offsetMs: number };

export type SignalKind = ClusterSignal['kind'];
export type SignalOf<K extends SignalKind> = Extract<ClusterSignal, { kind: K }>;
export type SignalListener<K extends SignalKind> = (signal: SignalOf<K>) => void;

/**
 * Publish / subscribe of {@link ClusterSignal}s. `publish` applies the signal on this instance at
 * once (synchronously, before it returns: the next request here already sees it) and sends it to
 * the other instances; each instance applies every signal once. In-process by default
 * ({@link LocalClusterSignals}); on Redis pub/sub with REDIS_URL (redis-cluster-signals.ts).
 */
export abstract class ClusterSignals {
  protected readonly log = new Logger('ClusterSignals');
  private readonly listeners = new Map<SignalKind, Set<(s: ClusterSignal) => void>>();

  /** This process, as other instances and Redis see it (random per start). */
  readonly instanceId = randomBytes(6).toString('hex');

  /**
   * How long (real ms) an instance may serve state cached from the database without reading it
   * again: null when running alone (every change is applied here, nothing can be missed); with
   * Redis a bound on how long a signal missed during an outage keeps stale state alive.
   */
  abstract readonly cacheTtlMs: number | null;

  abstract publish(signal: ClusterSignal): void;

  on<K extends SignalKind>(kind: K, listener: SignalListener<K>): () => void {
    let set = this.listeners.get(kind);
    if (set === undefined) this.listeners.set(kind, (set = new Set()));
    const l = listener as (s: ClusterSignal) => void;
    set.add(l);
    return () => set.delete(l);
  }

  /** Runs this instance's listeners of the signal; one that throws does not stop the others. */
  protected apply(signal: ClusterSignal): void {
    for (const l of this.listeners.get(signal.kind) ?? []) {
      try {
        l(signal);
      } catch (err) {
        this.log.error(
          `${signal.kind} listener failed: ${err instanceof Error ? err.stack : String(err)}`,
        );
      }
    }
  }
}

/** One instance: a signal is its listeners' call, nothing more. */
export class LocalClusterSignals extends ClusterSignals {
  readonly cacheTtlMs = null;

  publish(signal: ClusterSignal): void {
    this.apply(signal);
  }
}
