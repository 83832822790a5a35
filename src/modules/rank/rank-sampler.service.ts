import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Clock } from '../../common/clock/clock.js';
import type { Environment } from '../../common/environment.js';
import { startSampling } from '../../common/sampling/sampling-timer.js';
import { ConfigService } from '../../config/config.service.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { HOUSE_ACCOUNT } from '../trading/engine-runtime.js';
import type { AccountPnl } from './rank-math.js';
import { RankSampler } from './rank-sampler.js';
import { RankRepository } from './rank.repository.js';

/**
 * Records each environment's leaderboard into that environment's database at every multiple of
 * RANK_SAMPLE_INTERVAL_MS on the service clock (see {@link RankSampler}): at start-up, on an
 * unref'd timer about once a second, and at the start of every rank read (so a moved clock is
 * caught up before anything is read).
 */
@Injectable()
export class RankSamplerService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly samplers = new Map<Environment, RankSampler>();
  private readonly repos = new Map<Environment, RankRepository>();
  private timer: NodeJS.Timeout | null = null;
  private readonly log = new Logger('Rank');

  constructor(
    private readonly engines: EngineRegistry,
    private readonly clock: Clock,
    private readonly config: ConfigService,
  ) {}

  onApplicationBootstrap(): void {
    this.engines.whenReady(() => {
      const c = this.config.values;
      for (const env of ['live', 'test'] as const) {
        const repo = new RankRepository(this.engines.get(env).repo.db);
        this.repos.set(env, repo);
        this.samplers.set(
          env,
          new RankSampler(repo, {
            intervalMs: c.rankSampleIntervalMs,
            historyDays: c.rankHistoryDays,
            excluded: HOUSE_ACCOUNT,
          }),
        );
      }
      this.timer = startSampling(this.log, 'rank history', (env) => this.catchUp(env), true);
    });
  }

  onModuleDestroy(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** The environment's rank store. */
  repo(env: Environment): RankRepository {
    const r = this.repos.get(env);
    if (r === undefined) throw new Error(`rank history of ${env} not started`);
    return r;
  }

  /**
   * Every account's realized P&L now (see RankRepository.totals), read once the waiting order
   * batch is committed so an answered order counts.
   */
  totals(env: Environment): AccountPnl[] {
    const rt = this.engines.get(env);
    if (rt.healthy) rt.committedEngine();
    return this.repo(env).totals();
  }

  /** Records the environment's latest boundary if it is due; answers it, or null. */
  catchUp(env: Environment): number | null {
    const sampler = this.samplers.get(env);
    if (sampler === undefined) return null;
    const rt = this.engines.get(env);
    const repo = this.repo(env);
    // The standings are read from the database once the waiting order batch is committed; an
    // engine that failed to match its database is not sampled (until a restart).
    return sampler.catchUp(this.clock.now(), () => {
      if (!rt.healthy) return null;
      rt.committedEngine();
      return repo.totals();
    });
  }
}
