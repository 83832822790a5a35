import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Subject } from 'rxjs';
import { Clock } from '../../common/clock/clock.js';
import type { Environment } from '../../common/environment.js';
import { DomainError, validationFailed } from '../../common/errors/domain-error.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import { startSampling } from '../../common/sampling/sampling-timer.js';
import { instant } from '../../common/validation/instant.js';
import { ConfigService } from '../../config/config.service.js';
import { EngineRegistry } from '../trading/engine-registry.js';
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
  environment: Environment;
  price: CryptoPriceDto;
}

/**
 * The crypto reference indices of both worlds: each engine database walks its own (the paper walk
 * seeded from SANDBOX_FEED_SEED, the live one from {@link LIVE_CRYPTO_SEED}), keeps candles, and
 * settles its own crypto markets at their close_time from its own index. Caught up by an unref'd
 * timer about once a second (at once at boot: a restart settles what it missed) and at the start
 * of every crypto read and sandbox set, so a moved service clock is caught up before the answer.
 */
@Injectable()
export class CryptoService implements OnApplicationBootstrap, OnModuleDestroy {
  /** Each move of an index, once stored (the realtime hub fans it out). */
  readonly moved = new Subject<CryptoPriceMoved>();
  private readonly feeds = new Map<Environment, CryptoFeed>();
  private readonly repos = new Map<Environment, CryptoRepository>();
  private timer: NodeJS.Timeout | null = null;
  private readonly log = new Logger('Crypto');

  constructor(
    private readonly engines: EngineRegistry,
    private readonly clock: Clock,
    private readonly config: ConfigService,
  ) {}

  onApplicationBootstrap(): void {
    this.engines.whenReady(() => {
      this.timer = startSampling(
        this.log,
        'crypto indices',
        (env) => this.feed(env).catchUp(),
        true,
      );
    });
  }

  onModuleDestroy(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private repo(env: Environment): CryptoRepository {
    let repo = this.repos.get(env);
    if (repo === undefined) {
      repo = new CryptoRepository(this.engines.get(env).repo.db);
      this.repos.set(env, repo);
    }
    return repo;
  }

  private feed(env: Environment): CryptoFeed {
    let feed = this.feeds.get(env);
    if (feed === undefined) {
      const c = this.config.values;
      feed = new CryptoFeed({
        seed: env === 'test' ? c.sandboxFeedSeed : LIVE_CRYPTO_SEED,
        symbols: cryptoSeedSymbols(),
        intervalMs: c.cryptoTickIntervalMs,
        repo: this.repo(env),
        now: () => this.clock.now(),
        publish: (prices) => {
          for (const p of prices) this.moved.next({ environment: env, price: priceDto(p) });
        },
        resolve: (m, cents) => this.settle(env, m, cents),
      });
      this.feeds.set(env, feed);
    }
    return feed;
  }

  /** Every index of the world, caught up to the service clock. */
  prices(env: Environment): CryptoPriceListDto {
    const feed = this.feed(env);
    feed.catchUp();
    return { data: feed.prices().map(priceDto) };
  }

  /** Candles of one index, oldest first, keyset on the bucket start. */
  history(env: Environment, symbol: string, q: CandleQueryDto): Page<CandleDto> {
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

  /** Sandbox control: sets the paper index now; a candle and a realtime message record it. */
  setPaperPrice(symbol: string, price: string): CryptoPriceDto {
    const feed = this.feed('test');
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
  private settle(env: Environment, m: DueMarket, cents: number): void {
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
