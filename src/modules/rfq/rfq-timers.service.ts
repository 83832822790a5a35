import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { isPaperWorld, type WorldName } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { startSampling } from '../../common/sampling/sampling-timer.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import { RfqHouseResponder } from './rfq-house-responder.service.js';
import { RfqLifecycle } from './rfq-lifecycle.service.js';

/**
 * The RFQ clock work, on the shared once-a-second timer (and at once at boot, so what expired
 * while the service was down ends before the first request): RFQs and quotes past expires_at on
 * their world's clock end, releasing their holds, and the house responder refreshes its quotes in
 * the paper worlds. The OPEN rows are the timers: a restart, or an ephemeral world loaded again,
 * finds them in the database. Ephemeral worlds are swept only while loaded (an unloaded world
 * costs nothing; its first request, or the advance of its clock, ends what came due meanwhile)
 * and without marking them used, so an idle world still unloads.
 */
@Injectable()
export class RfqTimers implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('RfqTimers');
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly life: RfqLifecycle,
    private readonly house: RfqHouseResponder,
    private readonly engines: EngineRegistry,
    private readonly databases: WorldDatabases,
  ) {}

  onApplicationBootstrap(): void {
    // Advancing a world's clock ends its RFQs and quotes now due (and re-quotes the house on the
    // prices the advance moved), not on the next sweep.
    this.engines.onWorldAdvanced((world) => this.stepWorld(world));
    this.engines.whenReady(() => {
      if (this.stopped) return;
      for (const env of ['live', 'test'] as const) {
        try {
          if (this.engines.writes(env)) this.life.endStranded(env);
        } catch (err) {
          this.log.error(`ending stranded ${env} quotes failed: ${String(err)}`);
        }
      }
      this.timer = startSampling(
        this.log,
        'RFQs',
        (env) => {
          // The loaded ephemeral worlds ride on the paper world's turn (each failure its own).
          if (env === 'test') for (const w of this.databases.loadedWorlds()) this.stepWorld(w);
          this.step(env);
        },
        true,
      );
    });
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private step(world: WorldName): void {
    // Cluster mode: the world's writer sweeps it.
    if (!this.engines.writes(world) || !this.life.engine(world).healthy) return;
    this.life.expireDue(world);
    if (isPaperWorld(world)) this.house.refresh(world);
  }

  /** One loaded world's round; a world being deleted meanwhile (404) has nothing to sweep. */
  private stepWorld(world: WorldName): void {
    if (this.stopped || this.engines.loaded(world) === null) return;
    try {
      this.step(world);
    } catch (err) {
      if (err instanceof DomainError && err.code === 'NOT_FOUND') return;
      this.log.warn(
        `sweeping the RFQs of ${world} failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
}
