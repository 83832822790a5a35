import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { isWorldId, type Environment, type WorldName } from '../../common/environment.js';
import { sampleNow, startSampling } from '../../common/sampling/sampling-timer.js';
import { ConfigService } from '../../config/config.service.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import type { WorldScoped } from '../worlds/world-scoped.js';
import { HOUSE_ACCOUNT } from '../trading/engine-runtime.js';
import type { AccountPnl } from './rank-math.js';
import { RankSampler } from './rank-sampler.js';
import { RankRepository } from './rank.repository.js';

/**
 * Records each world's leaderboard into that world's database at every multiple of
 * RANK_SAMPLE_INTERVAL_MS on the world's clock (see {@link RankSampler}): at start-up, on an
 * unref'd timer about once a second, and at the start of every rank read (so a moved clock is
 * caught up before anything is read). An ephemeral world has no timer: its samples are taken by
 * its rank reads, on its own clock, into its own file, and its sampler goes when it unloads.
 */
@Injectable()
export class RankSamplerService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly stores: WorldScoped<{ repo: RankRepository; sampler: RankSampler }>;
  private started = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly log = new Logger('Rank');

  constructor(
    private readonly engines: EngineRegistry,
    private readonly config: ConfigService,
    worlds: WorldDatabases,
  ) {
    const c = this.config.values;
    this.stores = worlds.perWorld((db) => {
      const repo = new RankRepository(db);
      const sampler = new RankSampler(repo, {
        intervalMs: c.rankSampleIntervalMs,
        historyDays: c.rankHistoryDays,
        excluded: HOUSE_ACCOUNT,
      });
      return { repo, sampler };
    });
  }

  onApplicationBootstrap(): void {
    const catchUp = (env: Environment): unknown => this.engines.writes(env) && this.catchUp(env);
    this.engines.whenReady(() => {
      this.started = true;
      // Cluster mode: on the world's writer only.
      this.timer = startSampling(this.log, 'rank history', catchUp, true);
    });
    // Cluster mode: the boot's catch-up when the term begins, before the instance listens.
    this.engines.onTermStart((world) => {
      if (!isWorldId(world)) sampleNow(this.log, 'rank history', catchUp, world);
    });
  }

  onModuleDestroy(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** The world's rank store. */
  repo(env: WorldName): RankRepository {
    if (!this.started) throw new Error(`rank history of ${env} not started`);
    return this.stores.get(env).repo;
  }

  /**
   * Every account's realized P&L now (see RankRepository.totals), read once the waiting order
   * batch is committed so an answered order counts.
   */
  totals(env: WorldName): AccountPnl[] {
    const rt = this.engines.get(env);
    if (rt.healthy) rt.committedReads();
    return this.repo(env).totals();
  }

  /** Records the world's latest boundary if it is due; answers it, or null. */
  catchUp(env: WorldName): number | null {
    if (!this.started) return null;
    const { sampler, repo } = this.stores.get(env);
    const rt = this.engines.get(env);
    // The standings are read from the database once the waiting order batch is committed; an
    // engine that failed to match its database is not sampled (until a restart).
    return sampler.catchUp(this.engines.clockOf(env).now(), () => {
      if (!rt.healthy) return null;
      rt.committedReads();
      return repo.totals();
    });
  }
}
