import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Subject } from 'rxjs';
import {
  isWorldId,
  type Environment,
  type WorldId,
  type WorldName,
} from '../../common/environment.js';
import { DomainError, validationFailed } from '../../common/errors/domain-error.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import { sampleNow, startSampling } from '../../common/sampling/sampling-timer.js';
import { instant } from '../../common/validation/instant.js';
import { ConfigService } from '../../config/config.service.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { PaperWorldRecords } from '../worlds/paper-world-records.service.js';
import { WorldCatalog } from '../worlds/world-catalog.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import type { WorldScoped } from '../worlds/world-scoped.js';
import { CryptoFeed, type IndexPrice } from './crypto-feed.js';
import { CryptoRepository, type DueMarket } from './crypto.repository.js';
import { cryptoSeedSymbols, isCryptoSymbol, LIVE_CRYPTO_SEED } from './crypto-symbols.js';
import type {
  CandleDto,
  CandleQueryDto,
  CryptoPriceDto,
  CryptoPriceListDto,
} from './dto/crypto.dto.js';
import { formatUsd, parseUsd } from './usd.js';

/** The longest from..to window of a history read. */
const MAX_WINDOW_MS = 366 * 86_400_000;

/** A price a world's index moved to, for the realtime channel crypto:<symbol> of that world. */
export interface CryptoPriceMoved {
  world: WorldName;
  price: CryptoPriceDto;
}

/** One world's crypto store: its repository, and its feed once first used. */
interface WorldCrypto {
  repo: CryptoRepository;
  feed: CryptoFeed | null;
}

/**
 * The crypto reference indices of every world: each engine database walks its own (the paper walk
 * seeded from SANDBOX_FEED_SEED, the live one from {@link LIVE_CRYPTO_SEED}, an ephemeral world's
 * from its seed), keeps candles, and settles its own crypto markets at their close_time from its
 * own index. Live and paper are caught up by an unref'd timer about once a second (at once at
 * boot: a restart settles what it missed) and at the start of every crypto read and sandbox set,
 * so a moved service clock is caught up before the answer. An ephemeral world's walk has no timer
 * and ignores the passing of time: it steps when the world's clock is advanced (one step per
 * multiple of CRYPTO_TICK_INTERVAL_MS its offset crosses), so the same seed and the same requests
 * give the same prices; its store goes when the world unloads.
 */
@Injectable()
export class CryptoService implements OnApplicationBootstrap, OnModuleDestroy {
  /** Each move of an index, once stored (the realtime hub fans it out). */
  readonly moved = new Subject<CryptoPriceMoved>();
  private readonly stores: WorldScoped<WorldCrypto>;
  private timer: NodeJS.Timeout | null = null;
  private readonly log = new Logger('Crypto');

  constructor(
    private readonly engines: EngineRegistry,
    private readonly config: ConfigService,
    private readonly catalog: WorldCatalog,
    worlds: WorldDatabases,
    records: PaperWorldRecords,
  ) {
    this.stores = worlds.perWorld((db) => ({ repo: new CryptoRepository(db), feed: null }));
    engines.onWorldAdvanced((world, from, to) => this.advanced(world, from, to));
    records.registerStaged('crypto_candles', (_userId, world) => this.stageRestart(world));
  }

  onApplicationBootstrap(): void {
    const catchUp = (env: Environment): unknown =>
      this.engines.writes(env) && this.feed(env).catchUp();
    this.engines.whenReady(() => {
      // Cluster mode: on the world's writer only.
      this.timer = startSampling(this.log, 'crypto indices', catchUp, true);
    });
    // Cluster mode: the boot's catch-up (a restart settles what it missed) when the term begins,
    // before the instance listens (ClusterService.start).
    this.engines.onTermStart((world) => {
      if (!isWorldId(world)) sampleNow(this.log, 'crypto indices', catchUp, world);
    });
  }

  onModuleDestroy(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private repo(world: WorldName): CryptoRepository {
    return this.stores.get(world).repo;
  }

  /** `seededAt`: see CryptoFeedOptions (a reset wrote the seeded prices as of then); `seed`: the world's, known. */
  private feed(world: WorldName, seededAt?: number, seed?: number): CryptoFeed {
    const store = this.stores.get(world);
    store.feed ??= new CryptoFeed({
      seededAt,
      seed: seed ?? this.seedOf(world),
      symbols: cryptoSeedSymbols(),
      intervalMs: this.config.values.cryptoTickIntervalMs,
      stepsOnClock: !isWorldId(world),
      repo: store.repo,
      now: () => this.engines.clockOf(world).now(),
      publish: (prices) => {
        for (const p of prices) this.moved.next({ world, price: priceDto(p) });
      },
      resolve: (m, cents) => this.settle(world, m, cents),
    });
    return store.feed;
  }

  private seedOf(world: WorldName): number {
    if (world === 'live') return LIVE_CRYPTO_SEED;
    if (world === 'test') return this.config.values.sandboxFeedSeed;
    const row = this.catalog.one(world);
    if (row === undefined) {
      throw new DomainError('NOT_FOUND', `World ${world} no longer exists`, { world_id: world });
    }
    return row.seed;
  }

  /**
   * An ephemeral world's clock moved from `from` to `to` ms ahead of the service clock: its walk
   * takes one step per multiple of CRYPTO_TICK_INTERVAL_MS crossed (so advances of 500 ms twice
   * step once at 1000), and due crypto markets settle.
   */
  private advanced(world: WorldId, from: number, to: number): void {
    const interval = this.config.values.cryptoTickIntervalMs;
    const steps = interval > 0 ? Math.floor(to / interval) - Math.floor(from / interval) : 0;
    this.feed(world).advance(steps);
  }

  /**
   * POST /sandbox/reset with a world key: the world's indices start again from their seeded
   * prices at step 0 (as of the world's clock), their candles deleted, and the new prices are
   * sent on crypto:<symbol>; answers the candles deleted. The shared paper indices are every test
   * key's, so a paper reset leaves them (0).
   */
  private stageRestart(world: WorldName): () => number {
    if (!isWorldId(world)) return () => 0;
    // The seeded prices as of now, written in the reset's transaction; the new walk starts
    // from them once it has committed, without reading them back.
    const at = this.engines.clockOf(world).now();
    const seeded = cryptoSeedSymbols().map((s) => ({
      symbol: s.symbol,
      cents: s.startCents,
      steps: 0,
      at,
    }));
    const cleared = this.repo(world).stageRestart(seeded);
    // The walk's seed as the running feed has it (the world's row is not read again).
    const seed = this.stores.get(world).feed?.seed;
    return () => {
      const deleted = cleared();
      this.stores.drop(world);
      for (const p of this.feed(world, at, seed).prices()) {
        this.moved.next({ world, price: priceDto(p) });
      }
      return deleted;
    };
  }

  /** Every index of the world, caught up to its clock. */
  prices(env: WorldName): CryptoPriceListDto {
    const feed = this.feed(env);
    feed.catchUp();
    return { data: feed.prices().map(priceDto) };
  }

  /** Candles of one index, oldest first, keyset on the bucket start. */
  history(env: WorldName, symbol: string, q: CandleQueryDto): Page<CandleDto> {
    const feed = this.feed(env);
    if (!isCryptoSymbol(symbol) || !feed.has(symbol)) {
      throw new DomainError('NOT_FOUND', `No crypto index ${symbol}`, { symbol });
    }
    const from = instant(q.from, 'from');
    const to = instant(q.to, 'to');
    if (from !== undefined && to !== undefined) {
      const span = Date.parse(to) - Date.parse(from);
      if (span <= 0) {
        throw validationFailed([{ field: 'to', message: 'to must be after from' }]);
      }
      if (span > MAX_WINDOW_MS) {
        throw validationFailed([
          { field: 'to', message: 'to must be at most 366 days after from' },
        ]);
      }
    }
    feed.catchUp();
    const interval = q.interval ?? '1m';
    const repo = this.repo(env);
    return paginate({
      list: `crypto:${env}:${symbol}:${interval}`,
      keys: ['time'],
      query: q,
      fetch: (after, take) =>
        repo.candles({ symbol, interval, after: after?.[0], from, to, limit: take }),
      keyOf: (r) => [r.bucket],
      map: (r) => ({
        time: r.bucket,
        open: formatUsd(Number(r.open_cents)),
        high: formatUsd(Number(r.high_cents)),
        low: formatUsd(Number(r.low_cents)),
        close: formatUsd(Number(r.close_cents)),
      }),
    });
  }

  /**
   * Sandbox control: sets the index of a paper world (the shared one, or an ephemeral world) now;
   * a candle and a realtime message of that world record it.
   */
  setPaperPrice(world: WorldName, symbol: string, price: string): CryptoPriceDto {
    const feed = this.feed(world);
    if (!isCryptoSymbol(symbol) || !feed.has(symbol)) {
      throw new DomainError('NOT_FOUND', `No crypto index ${symbol}`, { symbol });
    }
    const cents = parseUsd(price);
    const set = cents === null || cents < 1 ? null : feed.set(symbol, cents);
    if (set === null) {
      throw validationFailed([
        { field: 'price', message: 'price must be a decimal string from 0.01 to 9999999999.99' },
      ]);
    }
    return priceDto(set);
  }

  /**
   * Settles a crypto market from its index price at close: YES when strictly above the strike.
   * Through the engine's one resolution path, so it pays out exactly as a sandbox resolve does;
   * a market already resolved (by the sandbox, say) is left as it is. A failure is logged and
   * the next catch-up tries again (the market is still due).
   */
  private settle(env: WorldName, m: DueMarket, cents: number): void {
    const rt = this.engines.get(env);
    if (!rt.healthy) return;
    const outcome = cents > Number(m.strike_cents) ? 'YES' : 'NO';
    try {
      const r = rt.resolveMarket(m.id, outcome);
      if (r.ok) {
        this.log.log(
          `${env} market ${m.id} resolved ${outcome}: ${m.index_symbol} ${formatUsd(cents)} against strike ${formatUsd(Number(m.strike_cents))}`,
        );
      } else if (r.code !== 'MARKET_ALREADY_RESOLVED') {
        this.log.error(`${env} market ${m.id} could not be resolved: ${r.code} ${r.message}`);
      }
    } catch (err) {
      this.log.error(
        `${env} market ${m.id} could not be resolved: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
}

function priceDto(p: IndexPrice): CryptoPriceDto {
  return { symbol: p.symbol, price: formatUsd(p.cents), as_of: new Date(p.at).toISOString() };
}
