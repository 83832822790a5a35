import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Clock } from '../../common/clock/clock.js';
import {
  isWorldId,
  type Environment,
  type WorldId,
  type WorldName,
} from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import type { Credential } from '../../common/http/request-context.js';
import { IdGenerator } from '../../common/ids/id-generator.js';
import { ConfigService } from '../../config/config.service.js';
import { connectionOf, ENGINE_DB } from '../../database/databases.js';
import { WorldCatalog } from '../worlds/world-catalog.js';
import { WorldClocks } from '../worlds/world-clocks.service.js';
import { WorldDatabases } from '../worlds/world-databases.service.js';
import { EngineRuntime, HOUSE_ACCOUNT, type FeedSettings, type Spooler } from './engine-runtime.js';
import { FencedError, WriterUnavailableError } from '../cluster/cluster-errors.js';
import { deferredFenceStatement, fenceSync, isFenceRefusal } from '../cluster/fence.js';
import { dialectOf, runDeferred } from '../../common/sql/sql-connection.js';
import { HOLDS_WORLD_STATE } from '../cluster/world-bound.js';
import { EventBus, type CommittedEvents } from './event-bus.js';
import { FollowerView, type FanOutReads } from './follower-view.js';
import { TradingRepository } from './trading.repository.js';

/** The command a follower sends a world's writer for its book (FollowerView, after a resync). */
const FOLLOWER_BOOK = 'follower.book';

/** How many feed steps one advance of a world's clock runs at most (a year's advance stays cheap). */
export const MAX_FEED_STEPS_PER_ADVANCE = 100;

/** A loaded ephemeral world's engine and its own clock. */
interface LoadedWorld {
  runtime: EngineRuntime;
  clock: Clock;
}

/**
 * The engines: one per environment over its own database, and one per loaded ephemeral world,
 * made on the world's first request over its file and stopped when the world unloads.
 */
@Injectable()
export class EngineRegistry implements OnApplicationBootstrap, OnModuleDestroy {
  /** World state in memory: routes that reach it are served by the world's writer (cluster). */
  static readonly [HOLDS_WORLD_STATE] = true;
  private readonly runtimes = new Map<Environment, EngineRuntime>();
  private readonly worlds = new Map<WorldId, LoadedWorld>();
  private spooler: Spooler | null = null;
  private readonly log = new Logger('Engines');
  private readonly readyCallbacks: (() => void)[] = [];
  /** Past onApplicationBootstrap: live's and paper's engines can be built (see {@link build}). */
  private bootstrapped = false;
  private readonly unloading: ((world: WorldId, runtime: EngineRuntime) => void)[] = [];
  private readonly advanced: ((
    world: WorldId,
    fromOffsetMs: number,
    toOffsetMs: number,
  ) => void)[] = [];
  /**
   * Cluster mode (DATABASE_URL and REDIS_URL; see docs/cluster.md): the worlds this instance is
   * the writer of, with their term's fencing epoch. Only these commit and run timers. For the
   * other worlds the realtime fan-out (the only reader: their requests are served by the writer)
   * reads a {@link FollowerView}, kept current from the writer's batches as they arrive.
   */
  readonly clustered: boolean;
  private readonly terms = new Map<WorldName, number>();
  private readonly termStarts: ((world: WorldName) => void)[] = [];
  private readonly termEnds: ((world: WorldName) => void)[] = [];
  /** Cluster mode: the read model of each world this instance follows (does not write). */
  private readonly followers = new Map<WorldName, FollowerView>();
  /** Worlds whose writer was asked for its book and has not answered yet. */
  private readonly booksAsked = new Set<WorldName>();
  /** Worlds that resynced again while their book was asked for. */
  private readonly booksAgain = new Set<WorldName>();
  /** Set by the cluster module: campaign for a loaded ephemeral world; a fenced-off term. */
  cluster: {
    campaign(world: WorldId): void;
    fenced(world: WorldName, epoch: number): void;
    /** Runs a defined command on the world's writer (another instance). */
    forward(world: WorldName, op: string, args: unknown): Promise<unknown>;
    lease(name: string, step: () => unknown): Promise<boolean>;
  } | null = null;
  /** Commands another instance may run here as a world's writer (defineCommand). */
  private readonly commands = new Map<string, (world: WorldName, args: never) => unknown>();
  private readonly engineIds = {
    // The engine asks for `ord_`/`fil_`; the service's generator adds the separator itself.
    next: (prefix: string) => this.ids.next(prefix.endsWith('_') ? prefix.slice(0, -1) : prefix),
  };

  constructor(
    @InjectDataSource(ENGINE_DB.live) private readonly live: DataSource,
    @InjectDataSource(ENGINE_DB.test) private readonly paper: DataSource,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly bus: EventBus,
    private readonly config: ConfigService,
    private readonly databases: WorldDatabases,
    private readonly catalog: WorldCatalog,
    private readonly clocks: WorldClocks,
  ) {
    databases.onUnload((world) => this.unloadWorld(world));
    const c = config.values;
    this.clustered = c.databaseUrl !== null && c.redisUrl !== null;
    // Subscribed before the realtime hub (which depends on this registry): a follower view has
    // applied a batch when the hub routes it.
    if (this.clustered) {
      bus.stream.subscribe((batch) => {
        if (batch.remote === true && !this.terms.has(batch.world)) {
          try {
            this.follow(batch);
          } catch (err) {
            this.log.error(
              `following ${batch.world} failed: ${err instanceof Error ? err.stack : String(err)}`,
            );
          }
        }
      });
      // On the writer: a follower that resynced asks for the book (the house's quotes are in
      // no database); it goes out in the stream, after every batch committed so far.
      this.defineCommand(FOLLOWER_BOOK, (world) => {
        this.get(world).announceBook();
        return true;
      });
    }
  }

  private feedSettings(seed: number): FeedSettings {
    return {
      seed,
      intervalMs: this.config.values.sandboxFeedIntervalMs,
      levels: 5,
      size: 100,
      refill: 25,
    };
  }

  /** At bootstrap: migrations ran and seeds loaded (module init), so the books can be rebuilt. */
  onApplicationBootstrap(): void {
    this.bootstrapped = true;
    // Cluster mode: built when first used, which is at the latest when this instance's term
    // begins (beginTerm): restoring here too read every world twice at each boot, and only the
    // term's restore (after the epoch increment) may be what a writer serves.
    if (!this.clustered) {
      for (const env of ['live', 'test'] as const) this.startWriting(env, this.build(env));
    }
    for (const cb of this.readyCallbacks.splice(0)) cb();
  }

  /** Builds live's or paper's engine, restored from the database as it stands now. */
  private build(env: Environment): EngineRuntime {
    const c = this.config.values;
    const ds = env === 'live' ? this.live : this.paper;
    const db = connectionOf(ds);
    const repo = new TradingRepository(db, env, HOUSE_ACCOUNT, () => this.ids.next('txn'));
    const runtime = new EngineRuntime(
      env,
      repo,
      this.clock,
      this.engineIds,
      this.bus,
      new Logger(`Engine:${env}`),
      env === 'test' ? this.feedSettings(c.sandboxFeedSeed) : null,
      env === 'test' ? c.sandboxStartingBalanceCents : 0,
    );
    runtime.spooler = this.spooler;
    this.installFence(env, runtime);
    runtime.term = this.terms.get(env) ?? null;
    this.runtimes.set(env, runtime);
    return runtime;
  }

  /** The house's opening quotes, the paper feed, the market closer: what only a writer runs. */
  private startWriting(env: Environment, runtime: EngineRuntime): void {
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
    if (env === 'test' && this.config.values.sandboxEnabled) runtime.startFeed();
    // Markets close at their close_time in both engines (checked by every command, and here).
    runtime.startClosing();
  }

  /**
   * Cluster mode: the world's fence as one synchronous statement (null: one instance, no fence),
   * for transactions of other repositories than the engine's (see {@link fence}).
   */
  private fenceOf(world: WorldName): EngineRuntime['fence'] {
    if (!this.clustered) return null;
    return (db) => {
      const epoch = this.terms.get(world);
      if (epoch === undefined) {
        throw new WriterUnavailableError(world, 'this instance is not its writer');
      }
      try {
        fenceSync(db, world, epoch);
      } catch (err) {
        if (err instanceof FencedError) this.cluster?.fenced(world, epoch);
        throw err;
      }
    };
  }

  /**
   * Cluster mode: the fence of the engine's commits (null: one instance, no fence), and what
   * turns a commit its deferred statement refused into the FencedError (the instance steps down).
   * On PostgreSQL the fence is deferred: it goes with the COMMIT, one round trip for the batch.
   */
  private installFence(world: WorldName, runtime: EngineRuntime): void {
    if (!this.clustered) {
      runtime.fence = null;
      runtime.fenceRefusal = null;
      return;
    }
    let checked: number | null = null;
    const refused = (epoch: number): FencedError => {
      this.cluster?.fenced(world, epoch);
      return new FencedError(world, epoch);
    };
    runtime.fence = (db) => {
      const epoch = this.terms.get(world);
      if (epoch === undefined) {
        throw new WriterUnavailableError(world, 'this instance is not its writer');
      }
      checked = epoch;
      if (dialectOf(db) === 'postgres') {
        const f = deferredFenceStatement(world, epoch);
        runDeferred(db.prepare(f.sql), ...f.params);
        return;
      }
      try {
        fenceSync(db, world, epoch);
      } catch (err) {
        if (err instanceof FencedError) throw refused(epoch);
        throw err;
      }
    };
    runtime.fenceRefusal = (err) =>
      checked !== null && isFenceRefusal(err) ? refused(checked) : null;
  }

  /** Whether this instance runs the world's commits and timers (always, outside cluster mode). */
  writes(world: WorldName): boolean {
    return !this.clustered || this.terms.has(world);
  }

  /**
   * Cluster mode: this instance's writer term of a world begins (the epoch increment is
   * committed): its engine is rebuilt from the database, then the house, feed and closer start.
   */
  beginTerm(world: WorldName, epoch: number): void {
    this.terms.set(world, epoch);
    this.followers.delete(world);
    if (isWorldId(world)) {
      // Loaded again (as the writer, house quoting) on its next request.
      this.unloadWorld(world);
    } else {
      if (!this.bootstrapped) throw new Error(`engine ${world} not started`);
      // The term's restore: the engine is built now if nothing used it before (its construction
      // restores it), else rebuilt; either way from the database after the epoch increment.
      const built = this.runtimes.get(world);
      const runtime = built ?? this.build(world);
      if (built !== undefined) built.reload();
      runtime.term = epoch;
      this.startWriting(world, runtime);
    }
    for (const cb of this.termStarts) cb(world);
  }

  /** Cluster mode: the term ended; the engine is a follower again (its commits are refused). */
  endTerm(world: WorldName): void {
    this.terms.delete(world);
    const runtime = this.loaded(world);
    if (runtime !== null) runtime.term = null;
    runtime?.stop();
    for (const cb of this.termEnds) cb(world);
  }

  /**
   * A command that runs on a world's writer, for work not started by a request (which is
   * forwarded whole): the cancel-on-disconnect of a socket that closed on another instance.
   * Its arguments and result must be JSON.
   */
  defineCommand<A, R>(op: string, run: (world: WorldName, args: A) => R): void {
    this.commands.set(op, run as (world: WorldName, args: never) => unknown);
  }

  /**
   * Runs a platform sweep not tied to a world: at once with one instance; in cluster mode only
   * on the instance holding the sweep's lease (taken if free). Returns whether it ran.
   */
  async once(name: string, step: () => unknown): Promise<boolean> {
    if (this.cluster === null) {
      await step();
      return true;
    }
    return this.cluster.lease(name, step);
  }

  /** Runs a defined command here when this instance writes the world, else on its writer. */
  async onWriter<R>(world: WorldName, op: string, args: unknown): Promise<R> {
    if (this.writes(world) || this.cluster === null) return this.runCommand(world, op, args) as R;
    return (await this.cluster.forward(world, op, args)) as R;
  }

  /** A defined command, run here (the writer's side of onWriter). */
  runCommand(world: WorldName, op: string, args: unknown): unknown {
    const run = this.commands.get(op);
    if (run === undefined) throw new Error(`no engine command ${op}`);
    return run(world, args as never);
  }

  /** Runs `cb` whenever a writer term of a world begins here (cluster mode). */
  onTermStart(cb: (world: WorldName) => void): void {
    this.termStarts.push(cb);
  }

  /** Runs `cb` whenever a writer term of a world ends here (cluster mode: stepped down). */
  onTermEnd(cb: (world: WorldName) => void): void {
    this.termEnds.push(cb);
  }

  /**
   * The world's fence, to run first inside a transaction of another repository than the
   * engine's that only the writer may commit (cluster mode; null alone): throws
   * WriterUnavailableError (FencedError) once another instance took the world over.
   */
  fence(world: WorldName): EngineRuntime['fence'] {
    return this.fenceOf(world);
  }

  /**
   * Cluster mode, another instance's batch of a world this instance does not write: applied to
   * the world's follower view, in stream order, with no database read. A resync (a break in the
   * stream, the writer's own rebuild, this instance starting to follow the world) or a batch of
   * a new writer term (its engine was restored from the database with no event for what that
   * dropped: the old house quotes) rebuilds the view from the database first; the writer's book
   * then follows in the stream (asked for here), as only the writer holds the house's quotes.
   */
  private follow(batch: CommittedEvents): void {
    const world = batch.world;
    const runtime = this.loaded(world);
    // An engine not built here (an ephemeral world not loaded, or live's or paper's before their
    // first use in cluster mode): its view is built when it is first read.
    if (runtime === null) return;
    const extras = batch.follow;
    let view = this.followers.get(world);
    if (batch.rebuilt === true && extras?.book === undefined) {
      this.resync(world, runtime, batch.lost === true ? 'a break in the stream' : 'a resync');
      return;
    }
    if (view === undefined) {
      view = this.resync(world, runtime, 'first batch');
    } else if (
      extras !== undefined &&
      view.term !== null &&
      extras.term !== view.term &&
      extras.book === undefined
    ) {
      view = this.resync(world, runtime, `writer term ${extras.term}`);
    }
    view.apply(batch);
    if (extras?.book !== undefined) this.log.log(`follower of ${world} has the writer's book`);
  }

  /** The follower view rebuilt from the database, and the writer asked for its book. */
  private resync(
    world: WorldName,
    runtime: EngineRuntime,
    why: string,
    fresh = false,
  ): FollowerView {
    if (!fresh) runtime.reload();
    const view = FollowerView.fromEngine(runtime.reads);
    this.followers.set(world, view);
    this.log.log(`follower of ${world} rebuilt from the database (${why})`);
    this.askBook(world);
    return view;
  }

  /**
   * Asks the world's writer for its book (once at a time; again when another resync came
   * meanwhile, as the answer may be from a writer whose term has ended).
   */
  private askBook(world: WorldName): void {
    if (this.cluster === null) return;
    if (this.booksAsked.has(world)) {
      this.booksAgain.add(world);
      return;
    }
    this.booksAsked.add(world);
    this.onWriter(world, FOLLOWER_BOOK, {})
      .catch((err: unknown) =>
        // No writer now: the next term's first batch resyncs and asks again.
        this.log.warn(
          `the writer of ${world} did not send its book: ${err instanceof Error ? err.message : String(err)}`,
        ),
      )
      .finally(() => {
        this.booksAsked.delete(world);
        if (this.booksAgain.delete(world) && !this.terms.has(world)) this.askBook(world);
      });
  }

  /**
   * What the realtime fan-out reads of a world: the engine where this instance writes it (always
   * with one instance), else the world's follower view (built from the database on first use).
   */
  reads(world: WorldName): FanOutReads {
    if (this.writes(world)) return this.get(world).reads;
    const view = this.followers.get(world);
    if (view !== undefined) return view;
    // A follower's first read: an engine built now is restored already (no second read).
    const built = this.loaded(world);
    return this.resync(world, built ?? this.get(world), 'first read', built === null);
  }

  /** As {@link reads}, with a writer's waiting batch committed first (snapshots). */
  committedReads(world: WorldName): FanOutReads {
    return this.writes(world) ? this.get(world).committedReads() : this.reads(world);
  }

  /** Installs the webhook spooler on every engine, now or once they are built. */
  setSpooler(spooler: Spooler): void {
    this.spooler = spooler;
    for (const r of this.runtimes.values()) r.spooler = spooler;
    for (const w of this.worlds.values()) w.runtime.spooler = spooler;
  }

  /**
   * Runs `cb` at bootstrap, once the engines can be used (at once if past it). In cluster mode
   * live's and paper's are built on first use (see {@link build}).
   */
  whenReady(cb: () => void): void {
    if (this.bootstrapped) cb();
    else this.readyCallbacks.push(cb);
  }

  /** The engine of a world; an ephemeral world's is loaded on first use. */
  get(world: WorldName): EngineRuntime {
    if (isWorldId(world)) return this.loadWorld(world).runtime;
    const r = this.runtimes.get(world);
    if (r !== undefined) return r;
    if (!this.bootstrapped) throw new Error(`engine ${world} not started`);
    return this.build(world);
  }

  /**
   * The credential's engine, with the caller's trading account opened on first use: a paper
   * account starts with SANDBOX_STARTING_BALANCE_CENTS (one FUNDING row), a live one with 0, an
   * ephemeral world's with the world's starting balance.
   */
  forCredential(c: Credential): EngineRuntime {
    const rt = this.get(c.world);
    rt.ensureAccount(c.userId);
    return rt;
  }

  /** The clock of a world: an ephemeral world's own, the service clock for the others. */
  clockOf(world: WorldName): Clock {
    return this.clocks.for(world);
  }

  /**
   * Moves an ephemeral world's clock forward and steps its feed once per feed interval of the
   * time passed (at most {@link MAX_FEED_STEPS_PER_ADVANCE}): a world's prices move with its own
   * clock only, so the same advances give the same path. Markets due to close close.
   */
  advanceWorld(world: WorldId, ms: number): number {
    const w = this.loadWorld(world);
    const from = this.clocks.offsetOrZero(world);
    this.clocks.advance(world, ms);
    const interval = this.config.values.sandboxFeedIntervalMs;
    const steps =
      interval <= 0 ? 0 : Math.min(Math.floor(ms / interval), MAX_FEED_STEPS_PER_ADVANCE);
    for (let i = 0; i < steps; i++) w.runtime.tick();
    w.runtime.closeDue();
    for (const cb of this.advanced) {
      try {
        cb(world, from, from + ms);
      } catch (err) {
        // The clock has moved (it is saved) and the engine stepped: a follower that failed is
        // logged and keeps its state, rather than the advance answering 500 after it happened.
        this.log.error(
          `after advancing ${world}: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
    return w.clock.now();
  }

  /**
   * Runs `cb` after an ephemeral world's clock moved, with its offset before and after (ms ahead
   * of the service clock): what moves with a world's clock only (its crypto walk) steps there.
   */
  onWorldAdvanced(cb: (world: WorldId, fromOffsetMs: number, toOffsetMs: number) => void): void {
    this.advanced.push(cb);
  }

  isWorldLoaded(world: WorldId): boolean {
    return this.worlds.has(world);
  }

  /** The engine of a world if it is running now (never loads an ephemeral world). */
  loaded(world: WorldName): EngineRuntime | null {
    return isWorldId(world)
      ? (this.worlds.get(world)?.runtime ?? null)
      : (this.runtimes.get(world) ?? null);
  }

  /**
   * Runs `cb` when a world's engine is about to unload, after its last batch committed and
   * while its file is still open (the webhook outbox moves what the world spooled).
   */
  onWorldUnloading(cb: (world: WorldId, runtime: EngineRuntime) => void): void {
    this.unloading.push(cb);
  }

  private loadWorld(world: WorldId): LoadedWorld {
    const hit = this.worlds.get(world);
    if (hit !== undefined) {
      this.databases.touch(world);
      return hit;
    }
    const row = this.catalog.one(world);
    if (row === undefined || row.status !== 'READY') {
      throw new DomainError('NOT_FOUND', `World ${world} no longer exists`, { world_id: world });
    }
    const db = this.databases.connection(world);
    // The world's own clock (WorldClocks): the one every time rule of the world's requests reads.
    const clock = this.clocks.for(world);
    const repo = new TradingRepository(db, 'test', HOUSE_ACCOUNT, () => this.ids.next('txn'));
    const runtime = new EngineRuntime(
      'test',
      repo,
      clock,
      this.engineIds,
      this.bus,
      new Logger(`Engine:${world}`),
      this.feedSettings(row.seed),
      row.starting_balance_cents,
    );
    runtime.world = world;
    runtime.spooler = this.spooler;
    this.installFence(world, runtime);
    runtime.term = this.terms.get(world) ?? null;
    // No timers: the feed steps when the world's clock is advanced, and markets close on the
    // next command (every command checks), so an idle world costs no CPU.
    // Registered before the house opens: its opening quotes are a committed batch, whose
    // subscribers (the realtime fan-out) ask for this world's engine again; loading it a second
    // time there recursed without end whenever a socket was open.
    const loaded = { runtime, clock };
    this.worlds.set(world, loaded);
    if (!this.writes(world)) {
      // A follower: the world's writer quotes the house; this instance campaigns to be one.
      this.cluster?.campaign(world);
      return loaded;
    }
    try {
      runtime.openHouse();
    } catch (err) {
      this.worlds.delete(world);
      runtime.stop();
      throw err;
    }
    return loaded;
  }

  private unloadWorld(world: WorldId): void {
    const w = this.worlds.get(world);
    if (w === undefined) return;
    w.runtime.stop();
    w.runtime.flush();
    for (const cb of this.unloading) cb(world, w.runtime);
    this.worlds.delete(world);
    this.followers.delete(world);
  }

  /** Stops the feed before the databases close (graceful shutdown). */
  onModuleDestroy(): void {
    for (const r of this.runtimes.values()) r.stop();
    for (const id of [...this.worlds.keys()]) this.unloadWorld(id);
  }
}
