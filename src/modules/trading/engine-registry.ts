import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Clock } from '../../common/clock/clock.js';
import type { Environment } from '../../common/environment.js';
import type { Credential } from '../../common/http/request-context.js';
import { IdGenerator } from '../../common/ids/id-generator.js';
import { ConfigService } from '../../config/config.service.js';
import { connectionOf, ENGINE_DB } from '../../database/databases.js';
import { EngineRuntime, HOUSE_ACCOUNT, type Spooler } from './engine-runtime.js';
import { EventBus } from './event-bus.js';
import { TradingRepository } from './trading.repository.js';

/** The two engines, one per environment, each over its own database. */
@Injectable()
export class EngineRegistry implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly runtimes = new Map<Environment, EngineRuntime>();
  private spooler: Spooler | null = null;
  private readonly log = new Logger('Engines');
  private readonly readyCallbacks: (() => void)[] = [];

  constructor(
    @InjectDataSource(ENGINE_DB.live) private readonly live: DataSource,
    @InjectDataSource(ENGINE_DB.test) private readonly paper: DataSource,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly bus: EventBus,
    private readonly config: ConfigService,
  ) {}

  /** At bootstrap: migrations ran and seeds loaded (module init), so the books can be rebuilt. */
  onApplicationBootstrap(): void {
    const c = this.config.values;
    // The engine asks for `ord_`/`fil_`; the service's generator adds the separator itself.
    const engineIds = {
      next: (prefix: string) => this.ids.next(prefix.endsWith('_') ? prefix.slice(0, -1) : prefix),
    };
    for (const env of ['live', 'test'] as const) {
      const ds = env === 'live' ? this.live : this.paper;
      const db = connectionOf(ds);
      const repo = new TradingRepository(db, env, HOUSE_ACCOUNT, () => this.ids.next('txn'));
      const feed =
        env === 'test'
          ? {
              seed: c.sandboxFeedSeed,
              intervalMs: c.sandboxFeedIntervalMs,
              levels: 5,
              size: 100,
              refill: 25,
            }
          : null;
      const runtime = new EngineRuntime(
        env,
        repo,
        this.clock,
        engineIds,
        this.bus,
        new Logger(`Engine:${env}`),
        feed,
        env === 'test' ? c.sandboxStartingBalanceCents : 0,
      );
      runtime.spooler = this.spooler;
      this.runtimes.set(env, runtime);
      // Quoted once the spooler is in place: the opening quote's fills are committed and
      // published like any others.
      try {
        runtime.openHouse();
      } catch (err) {
        // The runtime has given up (it refuses commands, readiness says so); the other engine
        // and the rest of the service still start.
        this.log.error(
          `the ${env} house could not open its quotes: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
    if (c.sandboxEnabled) this.runtimes.get('test')!.startFeed();
    // Markets close at their close_time in both engines (checked by every command, and here).
    for (const runtime of this.runtimes.values()) runtime.startClosing();
    for (const cb of this.readyCallbacks.splice(0)) cb();
  }

  /** Installs the webhook spooler on both engines, now or once they are built. */
  setSpooler(spooler: Spooler): void {
    this.spooler = spooler;
    for (const r of this.runtimes.values()) r.spooler = spooler;
  }

  /** Runs `cb` once both engines are built (at once if they are). */
  whenReady(cb: () => void): void {
    if (this.runtimes.size > 0) cb();
    else this.readyCallbacks.push(cb);
  }

  get(env: Environment): EngineRuntime {
    const r = this.runtimes.get(env);
    if (r === undefined) throw new Error(`engine ${env} not started`);
    return r;
  }

  /**
   * The credential's engine, with the caller's trading account opened on first use: a paper
   * account starts with SANDBOX_STARTING_BALANCE_CENTS (one FUNDING row), a live one with 0.
   */
  forCredential(c: Credential): EngineRuntime {
    const rt = this.get(c.environment);
    rt.ensureAccount(c.userId);
    return rt;
  }

  /** Stops the feed before the databases close (graceful shutdown). */
  onModuleDestroy(): void {
    for (const r of this.runtimes.values()) r.stop();
  }
}
