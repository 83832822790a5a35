import { Injectable } from '@nestjs/common';
import { AdjustableClock, Clock, MAX_CLOCK_OFFSET_MS } from '../../common/clock/clock.js';
import { isWorldId, type WorldId, type WorldName } from '../../common/environment.js';
import { DomainError, validationFailed } from '../../common/errors/domain-error.js';
import { ClusterSignals } from '../redis/cluster-signals.js';
import { WorldCatalog } from './world-catalog.js';
import { WorldDatabases } from './world-databases.service.js';

/**
 * The clock of each world, the one answer to "what time is it for this request": the service
 * clock for the live and paper worlds, an ephemeral world's own clock (the service clock plus the
 * world's offset, kept in the registry so it survives an unload and a restart) for a world. Every
 * time rule a request meets (key expiry, signature skew, per-key and per-route limit windows,
 * quotas, idempotency expiry, the engine's order expiry and market close) asks `for(world)`, so
 * advancing one world's clock moves that world's windows only.
 *
 * Several instances (cluster mode) each keep a world's clock in memory once they have used it.
 * An advance runs on the world's writer, which saves the offset in the registry row (one for all
 * instances), then says how far ahead the world's clock runs now: a `world-clock.advanced` signal
 * every instance follows at once, and the offset carried back with every answer the writer gives
 * a forwarded request (cluster.service.ts: the instance that forwarded the move follows before it
 * answers, whichever arrives first). An instance that missed the signal (Redis away) reads the
 * row again at most every `ClusterSignals.cacheTtlMs` (5 s). Offsets only grow.
 */
@Injectable()
export class WorldClocks {
  private readonly worlds = new Map<WorldId, { clock: AdjustableClock; readAt: number }>();
  private readonly ttlMs: number;

  constructor(
    private readonly clock: Clock,
    private readonly catalog: WorldCatalog,
    databases: WorldDatabases,
    private readonly signals: ClusterSignals,
  ) {
    this.ttlMs = signals.cacheTtlMs ?? Infinity;
    // Made again from the registry on next use: a deleted world's clock never lingers.
    databases.onUnload((world) => this.worlds.delete(world));
    signals.on('world-clock.advanced', (s) => this.follow(s.world, s.offsetMs));
  }

  /** The world's clock (an unknown or deleting ephemeral world is 404 NOT_FOUND). */
  for(world: WorldName): Clock {
    return isWorldId(world) ? this.ofWorld(world) : this.clock;
  }

  /**
   * How far the world's clock runs ahead of the service clock, in milliseconds: its clock's if it
   * is loaded, else the offset its registry row keeps (saved on every advance), 0 for the live and
   * paper worlds. Never throws and never loads a clock, so it serves a world that is being
   * deleted (its webhook deliveries) or whose row is gone (0).
   */
  offsetOrZero(world: WorldName): number {
    if (!isWorldId(world)) return 0;
    return this.worlds.get(world)?.clock.offset ?? this.catalog.one(world)?.clock_offset_ms ?? 0;
  }

  /**
   * Another instance (the world's writer) moved the world's clock `offsetMs` ahead of the service
   * clock, and saved that: a clock loaded here follows it (offsets only grow), without saving it
   * again. Not loaded: nothing, its next load reads the row.
   */
  follow(world: string, offsetMs: number): void {
    if (!isWorldId(world)) return;
    this.worlds.get(world)?.clock.follow(offsetMs, false);
  }

  /**
   * Moves an ephemeral world's clock forward by `ms` and answers its new time; past ten years
   * ahead of the service clock in all it is 400 VALIDATION_FAILED and nothing moves.
   */
  advance(world: WorldId, ms: number): number {
    const clock = this.ofWorld(world);
    if (clock.offset + ms > MAX_CLOCK_OFFSET_MS) {
      throw validationFailed([
        {
          field: 'advance_seconds',
          message:
            "advance_seconds must keep the world's clock at most ten years ahead of the service clock in all",
        },
      ]);
    }
    clock.advance(ms);
    // Saved (the registry row): every other instance that has the world's clock follows.
    this.signals.publish({ kind: 'world-clock.advanced', world, offsetMs: clock.offset });
    return clock.now();
  }

  private ofWorld(world: WorldId): AdjustableClock {
    const hit = this.worlds.get(world);
    if (hit !== undefined) {
      // With other instances: a move whose signal was missed is read from the row in time.
      if (Date.now() - hit.readAt >= this.ttlMs) {
        hit.readAt = Date.now();
        let row: { clock_offset_ms: number } | undefined;
        try {
          row = this.catalog.one(world);
        } catch {
          // The database did not answer: the clock held is served, read again next period.
        }
        if (row !== undefined) hit.clock.follow(row.clock_offset_ms, false);
      }
      return hit.clock;
    }
    const row = this.catalog.one(world);
    if (row === undefined || row.status !== 'READY') {
      throw new DomainError('NOT_FOUND', `World ${world} no longer exists`, { world_id: world });
    }
    const clock = new AdjustableClock(() => this.clock.now(), {
      load: () => row.clock_offset_ms,
      save: (ms) => this.catalog.saveOffset(world, ms),
    });
    this.worlds.set(world, { clock, readAt: Date.now() });
    return clock;
  }
}
