import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Clock } from '../../common/clock/clock.js';
import type { Environment } from '../../common/environment.js';
import { startSampling } from '../../common/sampling/sampling-timer.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { RfqHouseResponder } from './rfq-house-responder.service.js';
import { RfqLifecycle } from './rfq-lifecycle.service.js';

/**
 * The RFQ clock work, on the shared once-a-second timer (and at once at boot, so what expired
 * while the service was down ends before the first request): RFQs and quotes past expires_at on
 * the service clock end, releasing their holds, and the paper house responder refreshes its
 * quotes. The OPEN rows are the timers: a restart finds them in the database.
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
    private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.engines.whenReady(() => {
      if (this.stopped) return;
      for (const env of ['live', 'test'] as const) {
        try {
          this.life.endStranded(env);
        } catch (err) {
          this.log.error(`ending stranded ${env} quotes failed: ${String(err)}`);
        }
      }
      this.timer = startSampling(this.log, 'RFQs', (env) => this.step(env), true);
    });
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private step(env: Environment): void {
    if (!this.engines.get(env).healthy) return;
    this.life.expireDue(env);
    if (env === 'test') this.house.refresh(this.clock.now());
  }
}
