import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { WorldName } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { instant } from '../../common/validation/instant.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import { startSampling } from '../../common/sampling/sampling-timer.js';
import { ConfigService } from '../../config/config.service.js';
import { markPrice } from '../positions/position-mapper.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import type { WorldScoped } from '../worlds/world-scoped.js';
import type { IndexDto, IndexHistoryQueryDto, IndexPointDto } from './dto/index.dto.js';
import { IndexPointsRepository } from './index-points.repository.js';
import { IndexSampler } from './index-sampler.js';

/**
 * The market indices of each world's engine, and their history: one sampler per world records
 * into that world's database, on that world's clock, from an unref'd timer (live and paper) and
 * lazily at the start of every indices read (so a moved clock is caught up before the answer).
 * An ephemeral world is sampled by its reads only (no timer), and its sampler goes when it
 * unloads.
 */
@Injectable()
export class IndicesService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly stores: WorldScoped<{ repo: IndexPointsRepository; sampler: IndexSampler }>;
  private timer: NodeJS.Timeout | null = null;
  private readonly log = new Logger('Indices');

  constructor(
    private readonly engines: EngineRegistry,
    private readonly config: ConfigService,
    worlds: WorldDatabases,
  ) {
    // The sampler reads its engine only when it samples (the engines start at bootstrap).
    this.stores = worlds.perWorld((db, env) => {
      const repo = new IndexPointsRepository(db);
      return { repo, sampler: this.makeSampler(env, repo) };
    });
  }

  onApplicationBootstrap(): void {
    this.engines.whenReady(() => {
      this.timer = startSampling(
        this.log,
        'indices',
        // Cluster mode: on the world's writer only.
        (env) => this.engines.writes(env) && this.sampler(env).catchUp(),
      );
    });
  }

  onModuleDestroy(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private repo(env: WorldName): IndexPointsRepository {
    return this.stores.get(env).repo;
  }

  private sampler(env: WorldName): IndexSampler {
    return this.stores.get(env).sampler;
  }

  private makeSampler(env: WorldName, repo: IndexPointsRepository): IndexSampler {
    return new IndexSampler({
      now: () => this.engines.clockOf(env).now(),
      intervalMs: this.config.values.indexSampleIntervalMs,
      historyDays: this.config.values.indexHistoryDays,
      store: repo,
      ready: () => this.engines.get(env).healthy,
      markets: () => {
        // Committed state only, markets past their close time closed first.
        const engine = this.engines.get(env).committedReads();
        return repo.allMarkets().map((m) => {
          const s = engine.marketSummary(m.id);
          return { category: m.category, status: s?.status ?? m.status, mark: markPrice(s) };
        });
      },
    });
  }

  /** Every index of the environment's engine, ordered by slug, valued now. */
  list(env: WorldName): { data: IndexDto[] } {
    const sampler = this.sampler(env);
    sampler.catchUp();
    const asOf = new Date(this.engines.clockOf(env).now()).toISOString();
    return { data: sampler.current().map((v) => ({ ...v, as_of: asOf })) };
  }

  /** Recorded points of one index, oldest first, keyset on the point time. */
  history(env: WorldName, slug: string, q: IndexHistoryQueryDto): Page<IndexPointDto> {
    const sampler = this.sampler(env);
    sampler.catchUp();
    if (!sampler.current().some((v) => v.slug === slug)) {
      throw new DomainError('NOT_FOUND', `No index ${slug}`, { slug });
    }
    const from = instant(q.from, 'from');
    const to = instant(q.to, 'to');
    return paginate({
      list: `indices:${env}:${slug}`,
      keys: ['time'],
      query: q,
      fetch: (after, take) =>
        this.repo(env).points({ slug, after: after?.[0], from, to, limit: take }),
      keyOf: (r) => [r.time],
      map: (r) => ({
        time: r.time,
        value: r.value_hundredths === null ? null : r.value_hundredths / 100,
        market_count: r.market_count,
      }),
    });
  }
}
