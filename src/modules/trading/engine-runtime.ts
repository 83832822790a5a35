import type { Logger } from '@nestjs/common';
import type { SqlCommitInFlight, SqlConnection } from '../../common/sql/sql-connection.js';
import {
  type CrossQuoteRequest,
  type CrossQuoteResult,
  type HoldRequest,
  type HoldSnapshot,
  HouseMarketMaker,
  MatchingEngine,
  PriceFeed,
  type EngineEvent,
  type Failure,
  type AccountSnapshot,
  type MarketSummary,
  type Outcome,
  type Quote,
  type QuoteRequest,
  type Result,
  type Success,
} from '../../engine/index.js';
import type { Clock } from '../../common/clock/clock.js';
import type { Environment, WorldName } from '../../common/environment.js';
import { WriterUnavailableError } from '../cluster/cluster-errors.js';
import type { CommittedEvents, EventBus } from './event-bus.js';
import { OpenOrderIndex } from './open-order-index.js';
import { bookSnapshot, followerExtras } from './follower-view.js';
import type { WebhookSpoolStore } from './stores/webhook-spool.store.js';
import type { EffectRecord } from './stores/effect.store.js';
import {
  addEffectIds,
  AppliedKeys,
  appliedError,
  IDEMPOTENCY_TTL_MS,
  type IdempotencyScope,
} from './applied-keys.js';
import { iso } from '../../common/clock/iso.js';
import type { LedgerRow } from './stores/ledger.store.js';
import type { MarketRow } from './stores/market.store.js';
import type { OrderPageFilter, OrderRow, OrderStore, TradeRow } from './stores/order.store.js';
import type { PositionRow } from './stores/position.store.js';
import type { TradingRepository } from './trading.repository.js';

/**
 * What an order export reads: the user's newest order (where the export ends), how many it
 * holds, and its rows a chunk at a time.
 */
export type OrderExportReads = Pick<OrderStore, 'newestOrderId' | 'countExport' | 'exportChunk'>;

/**
 * The engine's read side, for the modules that show its state (markets, the realtime hub,
 * indices, watchlists): no command goes through it, those go through {@link EngineRuntime.run}.
 */
export type EngineReads = Pick<
  MatchingEngine,
  | 'marketSummary'
  | 'marketIds'
  | 'depth'
  | 'getAccount'
  | 'accountIds'
  | 'positions'
  | 'openOrders'
  | 'getOrder'
>;

export type { IdempotencyScope } from './applied-keys.js';

/**
 * Adds what a command did (orders placed, ledger references) to the effect of the key it ran
 * under: a batch's legs, which share one key and one commit, make one record.
 */
function addEffect(
  into: Map<string, EffectRecord>,
  scope: IdempotencyScope,
  events: readonly EngineEvent[],
): void {
  const k = `${scope.ownerId}\u0000${scope.key}`;
  let effect = into.get(k);
  if (effect === undefined) {
    effect = { ownerId: scope.ownerId, key: scope.key, orderIds: [], referenceIds: [] };
    into.set(k, effect);
  }
  addEffectIds(effect, events);
}

/** The earliest of the close times (infinity: none). */
function soonest(closeTimes: ReadonlyMap<string, number>): number {
  let at = Number.POSITIVE_INFINITY;
  for (const t of closeTimes.values()) if (t < at) at = t;
  return at;
}

/**
 * Writes of another module (the RFQ module's rows) that must commit with a command: run inside
 * the SQLite transaction that persists the command's events, on the world's engine connection.
 * If it throws, the whole transaction rolls back, the engine is rebuilt from the database and
 * the error is rethrown: nothing of the command happened.
 */
export type InCommit = (db: SqlConnection) => void;

export const HOUSE_ACCOUNT = 'house';
/** The house's bankroll: large enough that its quotes never run out of cash. */
const HOUSE_BALANCE = 1_000_000_000_000;

/**
 * Serialises a committed batch's events for the webhook spool, or returns null when none of them
 * needs keeping. It runs inside the batch's transaction, so what it returns commits (or rolls
 * back) with the orders it tells of; it must not write anywhere itself.
 */
export type Spooler = (world: WorldName, events: readonly EngineEvent[]) => string | null;

/** A batch whose COMMIT is on its way (PostgreSQL's pipelined group commit). */
interface InFlight {
  commit: SqlCommitInFlight;
  events: readonly EngineEvent[];
  waiters: { resolve: () => void; reject: (err: unknown) => void }[];
  committedAt: number;
  /** The followers' figures, taken when the batch was sent (the engine runs ahead after). */
  follow: CommittedEvents['follow'];
}

export interface FeedSettings {
  seed: number;
  intervalMs: number;
  levels: number;
  size: number;
  refill: number;
}

/** A command of the waiting batch, settled when its batch has committed (or failed). */
type BatchWaiter = { resolve: () => void; reject: (err: unknown) => void };

/**
 * One environment's engine with its database: runs a command, commits its events in one SQLite
 * transaction, then publishes them. The database is the record: if a commit fails, the engine is
 * rebuilt from it, so memory never runs ahead of what was stored. The paper runtime also runs the
 * price feed and the house market maker through the same path.
 */
export class EngineRuntime {
  private engine: MatchingEngine;
  /** Open orders by API key (client_order_id uniqueness, per-key cap). */
  private index = new OpenOrderIndex();
  private pendingEvents: EngineEvent[] = [];
  private pendingEffects = new Map<string, EffectRecord>();
  /**
   * The Idempotency-Keys whose requests changed this engine within their window (committed, and
   * those of the batch waiting or in flight): a second request under one of them is refused
   * before it runs (see {@link fenceKey}). Rebuilt with the engine (restore), so a failed
   * commit's keys go and a new writer term starts from what the database holds.
   */
  private applied = new AppliedKeys();
  private pendingWaiters: BatchWaiter[] = [];
  private flushScheduled = false;
  /**
   * PostgreSQL: the batch whose COMMIT was sent and has not answered yet (at most one; the next
   * batch forms meanwhile and is sent when it has answered). Null on SQLite, always.
   */
  private inflight: InFlight | null = null;
  /** Whether batches commit without blocking the thread (the connection offers commitAsync). */
  private readonly pipelined: boolean;
  private broken = false;
  private rebuilding = false;
  /** Reference prices as last stored (only moved ones are written). */
  private readonly storedRefs = new Map<string, number>();
  private feed: PriceFeed | null = null;
  private house: HouseMarketMaker | null = null;
  private timer: NodeJS.Timeout | null = null;
  /**
   * Markets close at their close_time: the first command at or after it, or the timer within a
   * second (see {@link startClosing}), moves each due market to CLOSED, the house's quotes on it
   * withdrawn. Resting orders stay and can be cancelled; new orders and amends answer
   * MARKET_NOT_OPEN; a sandbox resolve still settles it. Close times of markets still OPEN.
   */
  private closeTimes = new Map<string, number>();
  private nextCloseAt = Number.POSITIVE_INFINITY;
  private closer: NodeJS.Timeout | null = null;
  /** The webhook outbox's spooler (see {@link Spooler}); null: nothing is spooled. */
  spooler: Spooler | null = null;
  /**
   * Cluster mode: the first statement of every commit (src/modules/cluster/fence.ts), set by the
   * registry for this instance's writer term and refusing while it holds none. Throws
   * WriterUnavailableError; null: one instance, no fence.
   */
  fence: ((db: SqlConnection) => void) | null = null;
  /**
   * Cluster mode: the WriterUnavailableError (FencedError) a commit's error stands for when the
   * fence's deferred statement failed it, else null. Null: one instance, no fence.
   */
  fenceRefusal: ((err: unknown) => Error | null) | null = null;
  /**
   * Cluster mode: this instance's writer term (fencing epoch) of the world, set by the registry
   * while it writes the world; null otherwise (and always with one instance). While set, each
   * published batch carries what followers need to apply it (src/modules/trading/follower-view.ts).
   */
  term: number | null = null;
  /**
   * The world this engine serves: its environment, or an ephemeral world's id (set by the
   * registry before the engine serves anything). Committed batches and spooled webhooks carry it.
   */
  world: WorldName;

  constructor(
    readonly environment: Environment,
    readonly repo: TradingRepository,
    private readonly clock: Clock,
    private readonly ids: { next(prefix: string): string },
    private readonly bus: EventBus,
    private readonly log: Logger,
    private readonly feedSettings: FeedSettings | null,
    /** What a new account of this environment opens with (paper accounts start funded). */
    readonly startingBalance: number,
  ) {
    this.world = environment;
    this.pipelined = typeof (repo.db as SqlConnection | undefined)?.commitAsync === 'function';
    this.engine = this.restore();
  }

  /**
   * Runs one engine command. On success its events are committed before this returns, then
   * published; on a business failure nothing changed and nothing is written.
   */
  run<T extends object>(
    command: (engine: MatchingEngine) => Result<T>,
    idempotency?: IdempotencyScope,
  ): Success<T> | Failure {
    // Settle the waiting batch first: a synchronous command must run on committed state, never
    // on top of a batch that may still fail (its engine would then be discarded).
    const engine = this.committedEngine();
    this.fenceKey(idempotency);
    const result = command(engine);
    if (!result.ok) return result;
    this.commit(result.events, idempotency);
    return result;
  }

  /**
   * Group commit for the order hot path: runs the command now (so commands keep their arrival
   * order and see each other at once), but commits its events together with every other command
   * of the same event-loop turn in one transaction. The promise settles only after that commit,
   * so an answer is never sent for something a crash could take back. If the commit fails, every
   * command of the batch is refused and the engine is rebuilt from the database.
   *
   * On PostgreSQL the commit is pipelined: the batch's transaction is sent without blocking the
   * thread, and while it is on its way the next batch forms (its commands run on the engine that
   * includes the batch in flight); it is sent when the first has answered, so batches commit in
   * order, one transaction each, at most one in flight. If a commit fails, the batch formed on
   * top of it is refused too (nothing of it was sent) and the engine is rebuilt.
   */
  runBatched<T extends object>(
    command: (engine: MatchingEngine) => Result<T>,
    idempotency?: IdempotencyScope,
  ): Promise<Success<T> | Failure> {
    this.assertUsable();
    if (idempotency !== undefined) {
      try {
        this.fenceKey(idempotency, true);
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    this.closeDue();
    const result = command(this.engine);
    if (!result.ok || result.events.length === 0) return Promise.resolve(result);
    this.index.apply(result.events);
    for (const e of result.events) this.pendingEvents.push(e);
    if (idempotency !== undefined) {
      addEffect(this.pendingEffects, idempotency, result.events);
      // Until the batch commits (a failed commit rebuilds the record from the database).
      this.applied.note(idempotency, this.clock.now());
    }
    return new Promise((resolve, reject) => {
      this.pendingWaiters.push({ resolve: () => resolve(result), reject });
      this.schedule();
    });
  }

  /** Commits the waiting batch at the end of this event-loop turn (see {@link kick}). */
  private schedule(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(this.kick);
  }

  /**
   * The end of an event-loop turn with a batch waiting: on SQLite it commits now
   * ({@link settle}); on PostgreSQL it is sent without blocking, unless a batch is in flight
   * (then it goes when that one has answered, see {@link land}).
   */
  private readonly kick = (): void => {
    this.flushScheduled = false;
    if (!this.pipelined) {
      this.settle();
      return;
    }
    if (this.inflight === null && this.pendingEvents.length > 0) this.send();
  };

  /** The waiting batch, handed over whole: afterwards nothing is waiting (one may be in flight). */
  private takePending(): {
    events: EngineEvent[];
    waiters: BatchWaiter[];
    effects: Map<string, EffectRecord>;
  } {
    const taken = {
      events: this.pendingEvents,
      waiters: this.pendingWaiters,
      effects: this.pendingEffects,
    };
    this.pendingEvents = [];
    this.pendingWaiters = [];
    this.pendingEffects = new Map();
    return taken;
  }

  /** Sends the waiting batch's transaction without waiting for its answer (PostgreSQL). */
  private send(): void {
    const { events, waiters, effects } = this.takePending();
    const now = this.clock.now();
    let commit: SqlCommitInFlight;
    try {
      this.assertUsable();
    } catch (err) {
      for (const w of waiters) w.reject(err);
      return;
    }
    try {
      commit = this.repo.db.commitAsync!(() => this.stage(events, effects, now));
    } catch (err) {
      // Refused before anything was sent (not the writer now, the connection closed).
      let refusal = err;
      try {
        this.recover(err, now);
      } catch (rethrown) {
        refusal = rethrown;
      }
      for (const w of waiters) w.reject(refusal);
      return;
    }
    const flight: InFlight = {
      commit,
      events,
      waiters,
      committedAt: now,
      follow:
        this.term === null
          ? undefined
          : followerExtras(this.engine, events, this.term, HOUSE_ACCOUNT),
    };
    this.inflight = flight;
    void commit.answered.then(() => this.land(flight, true));
  }

  /**
   * The batch in flight has answered (or a synchronous caller waits for it now: `next` false).
   * Committed: it is published and its waiters resolve, then the batch formed meanwhile is sent.
   * Failed: its waiters and those of the batch formed on top of it are refused, nothing of that
   * one was sent, and the engine is rebuilt from the database (as {@link write} does).
   */
  private land(flight: InFlight, next: boolean): void {
    if (this.inflight !== flight) return; // landed already, by a synchronous caller
    this.inflight = null;
    try {
      flight.commit.join();
    } catch (err) {
      const onTop = this.pendingWaiters;
      this.pendingEvents = [];
      this.pendingWaiters = [];
      this.pendingEffects = new Map();
      let refusal = err;
      try {
        this.recover(err, flight.committedAt);
      } catch (rethrown) {
        refusal = rethrown;
      }
      for (const w of flight.waiters) w.reject(refusal);
      for (const w of onTop) w.reject(refusal);
      return;
    }
    const batch: CommittedEvents = {
      environment: this.environment,
      world: this.world,
      events: flight.events,
      committedAt: flight.committedAt,
    };
    if (flight.follow !== undefined) batch.follow = flight.follow;
    this.bus.publish(batch);
    for (const w of flight.waiters) w.resolve();
    if (next && this.inflight === null && this.pendingEvents.length > 0) this.send();
  }

  /**
   * Waits for the batch in flight (PostgreSQL), then commits the waiting batch now and settles
   * its commands, blocking the thread. If a commit fails its commands are refused and the engine
   * is rebuilt from the database; either way, afterwards nothing is pending or in flight and
   * `this.engine` holds only committed state.
   */
  private settle(): void {
    this.flushScheduled = false;
    if (this.inflight !== null) this.land(this.inflight, false);
    if (this.pendingEvents.length === 0) return;
    const { events, waiters, effects } = this.takePending();
    try {
      this.write(events, effects);
    } catch (err) {
      for (const w of waiters) w.reject(err);
      return;
    }
    for (const w of waiters) w.resolve();
  }

  /**
   * Commits and publishes events a caller produced on committed state (it settled first, as
   * every synchronous path here does). Events produced on top of a waiting batch could come
   * from an engine that a failed flush discards, so they are refused.
   */
  commit(events: readonly EngineEvent[], idempotency?: IdempotencyScope): void {
    if (this.pendingEvents.length > 0 || this.inflight !== null) {
      throw new Error('commit() with a batch still waiting: settle() before running commands');
    }
    if (events.length === 0) return;
    this.index.apply(events);
    const effects = new Map<string, EffectRecord>();
    if (idempotency !== undefined) addEffect(effects, idempotency, events);
    this.write(events, effects);
    if (idempotency !== undefined) this.applied.note(idempotency, this.clock.now());
  }

  /**
   * The fence of an Idempotency-Key: a command under a key whose request (another claim of it)
   * already changed this engine within the key's window is refused before it runs, 409
   * IDEMPOTENT_REQUEST_APPLIED naming what the first did, and changes nothing. On the
   * group-commit path (`pending`) the first request's batch may still be waiting (or in flight,
   * on PostgreSQL): it is settled first, so the refusal names only a committed effect (a failed
   * commit takes the key back, and this command runs). A key past its window may be used again.
   */
  private fenceKey(scope: IdempotencyScope | undefined, pending = false): void {
    if (scope === undefined) return;
    if (this.applied.conflict(scope, this.clock.now()) === undefined) return;
    if (pending && (this.pendingEvents.length > 0 || this.inflight !== null)) this.settle();
    const since = this.applied.conflict(scope, this.clock.now());
    if (since === undefined) return;
    // The refusal's one read (what the first did), off the path of the commands that run: the
    // key's one row, the upsert's (a window back from its start, for a claiming instance's clock
    // a moment ahead of this one).
    const first = this.repo.effects.effectOf(
      scope.ownerId,
      scope.key,
      iso(since - IDEMPOTENCY_TTL_MS),
    );
    throw appliedError(scope.key, first ?? { orderIds: [], referenceIds: [] });
  }

  /**
   * A sandbox reset forgot the answer of a key whose request changed this engine (its orders
   * and ledger rows are gone): the key runs its request again.
   */
  forgetAppliedKey(ownerId: string, key: string): void {
    this.applied.forget(ownerId, key);
  }

  /**
   * One transaction: the events, the webhook spool, and the effects of the Idempotency-Keys the
   * commands ran under (so a retry after a crash before the answer was stored is not run again).
   */
  private write(
    events: readonly EngineEvent[],
    effects: ReadonlyMap<string, EffectRecord> = new Map(),
    /** Rows the events depend on (a created market's), written first in the same transaction. */
    before?: () => void,
    /** Rows that depend on the events (an accepted RFQ's), written after them, same transaction. */
    after?: InCommit,
  ): void {
    this.assertUsable();
    if (this.inflight !== null) throw new Error('write() with a commit in flight: settle() first');
    const now = this.clock.now();
    try {
      this.repo.transaction(() => this.stage(events, effects, now, before, after));
    } catch (err) {
      this.recover(err, now);
    }
    const batch: CommittedEvents = {
      environment: this.environment,
      world: this.world,
      events,
      committedAt: now,
    };
    // One check with a single instance: no follower to tell.
    if (this.term !== null)
      batch.follow = followerExtras(this.engine, events, this.term, HOUSE_ACCOUNT);
    this.bus.publish(batch);
  }

  /** The statements of one commit, inside its transaction (see {@link write}). */
  private stage(
    events: readonly EngineEvent[],
    effects: ReadonlyMap<string, EffectRecord>,
    now: number,
    before?: () => void,
    after?: InCommit,
  ): void {
    this.fence?.(this.repo.db);
    before?.();
    this.repo.apply(events, now);
    after?.(this.repo.db);
    for (const e of effects.values()) this.repo.effects.record(e, now);
    const spooled = this.spooler === null ? null : this.spooler(this.world, events);
    if (spooled !== null) this.repo.webhookSpool.spool(spooled, now);
  }

  /**
   * A commit failed (rolled back): memory goes back to the database, then the error (or the
   * fence's refusal it stands for) is thrown.
   */
  private recover(failure: unknown, now: number): never {
    const err = this.fenceRefusal?.(failure) ?? failure;
    // A commit failing while the engine is being rebuilt (the house's opening quote) is not
    // rebuilt again: the rebuild gives up and the runtime refuses commands until restart.
    if (this.rebuilding) throw err;
    if (err instanceof WriterUnavailableError) {
      // Fenced off (another instance writes the world now): nothing committed; memory goes
      // back to the database, and the 503 reaches the caller. No house re-quote: not ours.
      this.rebuild();
      throw err;
    }
    this.log.error(`commit failed in the ${this.environment} engine, rebuilding from the database`);
    this.rebuild();
    this.bus.publish({
      environment: this.environment,
      world: this.world,
      events: [],
      committedAt: now,
      rebuilt: true,
      ...(this.term === null ? {} : { follow: { term: this.term } }),
    });
    // After the snapshots of the rebuilt state went out, so its deltas apply on top of them.
    this.reopenHouse();
    throw err;
  }

  /**
   * Cluster mode, on a follower's request: publishes the whole book and market figures as they
   * stand now, in the stream after every batch committed so far (no commit: nothing changes).
   * Followers replace theirs with it (the house's quotes are in no database), then resnapshot.
   */
  announceBook(): void {
    if (this.term === null) return;
    const reads = this.committedReads();
    this.bus.publish({
      environment: this.environment,
      world: this.world,
      events: [],
      committedAt: this.clock.now(),
      rebuilt: true,
      follow: { term: this.term, book: bookSnapshot(reads) },
    });
  }

  /**
   * Replaces the engine with one rebuilt from the database. If even that fails, the runtime
   * refuses every command (503-class via INTERNAL) rather than trade on state the database does
   * not hold; a restart rebuilds it.
   */
  private rebuild(): void {
    try {
      this.engine = this.restore();
    } catch (err) {
      this.giveUp(err);
    }
  }

  /** The house's opening quote on a rebuilt engine; if even that cannot commit, give up. */
  private reopenHouse(): void {
    if (this.broken) return;
    this.rebuilding = true;
    try {
      this.openHouse();
    } catch (err) {
      this.giveUp(err);
    } finally {
      this.rebuilding = false;
    }
  }

  private giveUp(err: unknown): void {
    this.broken = true;
    this.log.error(
      `the ${this.environment} engine could not be rebuilt and refuses commands until restart: ${
        err instanceof Error ? err.message : String(err)
      }`,
    );
  }

  /**
   * The engine holding only committed state: a waiting batch is committed (and published) first,
   * or, if that commit fails, refused and the engine rebuilt. For commands whose events the caller
   * commits itself ({@link commit}: benches building state in bulk); reads go through
   * {@link committedReads}, which never shows what a failed commit could take back.
   */
  committedEngine(): MatchingEngine {
    this.settle();
    // A market past its close time is closed, its house quotes gone (the closes are committed and
    // published before the caller reads or commands).
    this.closeDue();
    return this.engine;
  }

  /**
   * The engine's state as it is now, read-only. Within a committed batch's subscribers (the
   * realtime fan-out) that is the committed state; elsewhere use {@link committedReads}.
   */
  get reads(): EngineReads {
    return this.engine;
  }

  /**
   * The engine's state with the waiting batch committed first and due markets closed (see
   * {@link committedEngine}), read-only: what a REST read or a snapshot shows.
   */
  committedReads(): EngineReads {
    return this.committedEngine();
  }

  /** False once a rebuild failed: the engine no longer matches the database. */
  get healthy(): boolean {
    return !this.broken;
  }

  private assertUsable(): void {
    if (this.broken) throw new Error(`the ${this.environment} engine is unavailable until restart`);
  }

  /**
   * Request for quote (issue 20; the commands are in src/engine/engine-rfq.ts, the interface in
   * /work/tasks/rfq-interface.md). Each is synchronous like {@link run}: the waiting batch
   * settles first, then the command's events and `inCommit` commit in ONE transaction before it
   * returns. Do the RFQ module's checks right before the call, with no `await` in between (two
   * accepts then cannot interleave), and only write in `inCommit`.
   *
   * holdQuote: holds a quote's collateral (it counts in reserved until released; persisted in
   * `quote_holds` and restored at boot). Codes: INVALID_STATE, INVALID_AMOUNT, UNKNOWN_MARKET,
   * MARKET_NOT_OPEN, UNKNOWN_ACCOUNT, DUPLICATE_HOLD, UNKNOWN_HOLD (replacesHoldId),
   * INSUFFICIENT_FUNDS.
   */
  holdQuote(req: HoldRequest, inCommit?: InCommit): Success<{ hold: HoldSnapshot }> | Failure {
    return this.runWith((e) => e.placeHold(req), inCommit);
  }

  /** Releases a quote's hold (withdrawn, expired, cancelled). Codes: UNKNOWN_HOLD (already gone). */
  releaseQuote(holdId: string, inCommit?: InCommit): Success<{ hold: HoldSnapshot }> | Failure {
    return this.runWith((e) => e.releaseHold(holdId), inCommit);
  }

  /**
   * Accepts a quote: two FILLED RFQ orders and one trade (`source: 'RFQ'`) between the requester
   * (taker, price in its own side terms) and the responder, its hold released, off the book.
   * Under an Idempotency-Key only the taker's order is recorded as the key's effect (the
   * responder's order is not the requester's to see). Codes: see `MatchingEngine.crossQuote`.
   */
  crossQuote(
    req: CrossQuoteRequest,
    inCommit?: InCommit,
    idempotency?: IdempotencyScope,
  ): Success<CrossQuoteResult> | Failure {
    return this.runWith(
      (e) => e.crossQuote(req),
      inCommit,
      idempotency,
      (events) =>
        events.filter(
          (ev) => ev.type !== 'order.accepted' || ev.order.accountId === req.taker.accountId,
        ),
    );
  }

  /**
   * {@link run} with writes of other modules staged in the command's own transaction: `inCommit`
   * runs inside it, after the command's events (a throw there, or a failure of what it deferred,
   * rolls the whole back and rebuilds the engine: nothing of the command happened). A sandbox
   * reset stages the user's other records this way, so the reset is one transaction.
   */
  runStaged<T extends object>(
    command: (engine: MatchingEngine) => Result<T>,
    inCommit: InCommit,
  ): Success<T> | Failure {
    return this.runWith(command, inCommit);
  }

  /** The quote holds of an account (or all), committed state. */
  heldQuotes(accountId?: string): HoldSnapshot[] {
    return this.committedEngine().heldQuotes(accountId);
  }

  /**
   * {@link run} with rows of another module written in the same transaction, and the
   * Idempotency-Key's effect taken from `effectEvents` of the events (default all).
   */
  private runWith<T extends object>(
    command: (engine: MatchingEngine) => Result<T>,
    inCommit?: InCommit,
    idempotency?: IdempotencyScope,
    effectEvents: (events: readonly EngineEvent[]) => readonly EngineEvent[] = (ev) => ev,
  ): Success<T> | Failure {
    this.assertUsable();
    const engine = this.committedEngine();
    this.fenceKey(idempotency);
    const result = command(engine);
    if (!result.ok) return result;
    this.index.apply(result.events);
    const effects = new Map<string, EffectRecord>();
    if (idempotency !== undefined) addEffect(effects, idempotency, effectEvents(result.events));
    this.write(result.events, effects, undefined, inCommit);
    if (idempotency !== undefined) this.applied.note(idempotency, this.clock.now());
    return result;
  }

  /**
   * Open orders of a credential: an API key's (`keyId`), or a user's orders placed with session
   * tokens (`keyId` null), counted as one credential.
   */
  openOrderCount(keyId: string | null, userId: string): number {
    return this.index.openCount(OpenOrderIndex.ownerOf(keyId, userId));
  }

  /** The id of the credential's open order with this client_order_id, if any. */
  openOrderWithClientId(
    keyId: string | null,
    userId: string,
    clientOrderId: string,
  ): string | undefined {
    return this.index.orderForClientId(OpenOrderIndex.ownerOf(keyId, userId), clientOrderId);
  }

  /** A stored order (open or closed, from before a restart too). */
  storedOrder(orderId: string): OrderRow | undefined {
    return this.repo.orders.orderById(orderId);
  }

  /** The stored fills of an order, oldest first. */
  storedTrades(orderId: string): TradeRow[] {
    return this.repo.orders.tradesOfOrder(orderId);
  }

  /** The stored fills of each of these orders, in one query. */
  storedTradesOfOrders(orderIds: readonly string[]): Map<string, TradeRow[]> {
    return this.repo.orders.tradesOfOrders(orderIds);
  }

  /** A page of a user's stored orders, newest first. */
  storedOrders(userId: string, filter: OrderPageFilter): OrderRow[] {
    return this.repo.orders.listOrders(userId, filter);
  }

  /** A market's stored trades, newest first, keyset on the trade id. */
  marketTrades(marketId: string, beforeId: string | null, limit: number): TradeRow[] {
    return this.repo.orders.tradesOfMarket(marketId, beforeId, limit);
  }

  /** The stored-order reads of an order export (see {@link OrderExportReads}). */
  get orderExports(): OrderExportReads {
    return this.repo.orders;
  }

  /** The market an order the engine holds is on (open and recently closed orders). */
  marketOfOrder(orderId: string): string | undefined {
    return this.engine.getOrder(orderId)?.marketId;
  }

  /**
   * What an order would do now, changing nothing; a market past its close time is closed first,
   * so it quotes MARKET_NOT_OPEN as an order would.
   */
  quote(request: QuoteRequest & { accountId: string }): Result<{ quote: Quote }> {
    this.closeDue();
    return this.engine.quote(request);
  }

  /** An account's balances as the engine holds them (undefined: none opened yet). */
  account(userId: string): AccountSnapshot | undefined {
    return this.engine.getAccount(userId);
  }

  /** An account's available balance, cents (undefined: none opened yet). */
  available(userId: string): number | undefined {
    return this.engine.available(userId);
  }

  /** A market's state in the engine (status, prices), undefined for one it does not hold. */
  marketSummary(marketId: string): MarketSummary | undefined {
    return this.engine.marketSummary(marketId);
  }

  /** A market's stored row (the record of its status and outcome across restarts). */
  storedMarket(marketId: string): MarketRow | undefined {
    return this.repo.markets.market(marketId);
  }

  /** A page of a user's ledger, newest first. */
  ledgerPage(
    userId: string,
    filter: { beforeId?: string; type?: LedgerRow['type']; limit: number },
  ): LedgerRow[] {
    return this.repo.ledger.page(userId, filter);
  }

  /** The ledger row the last committed money movement wrote, if it was this user's. */
  lastLedgerRowOf(userId: string): LedgerRow | undefined {
    return this.repo.ledger.lastRowOf(userId);
  }

  /** A page of a user's stored positions, by market id. */
  positionsPage(
    userId: string,
    filter: { afterMarketId?: string; includeFlat: boolean; limit: number },
  ): PositionRow[] {
    return this.repo.positions.page(userId, filter);
  }

  /** This world's webhook spool (committed batches' webhook events, see {@link Spooler}). */
  get webhookSpool(): WebhookSpoolStore {
    return this.repo.webhookSpool;
  }

  /** Opens a trading account on first use, with {@link startingBalance}. */
  ensureAccount(userId: string): void {
    // The common case, an existing account, must not force the waiting batch out (that would
    // undo group commit); only opening one settles first, like every synchronous command.
    if (this.engine.balance(userId) !== undefined) return;
    this.settle();
    if (this.engine.balance(userId) !== undefined) return;
    const created = this.engine.createAccount(userId);
    if (!created.ok) return;
    const events = [...created.events];
    if (this.startingBalance > 0) {
      const funded = this.engine.deposit(userId, this.startingBalance, 'starting-balance');
      if (funded.ok) events.push(...funded.events);
    }
    this.commit(events);
  }

  /** Starts the paper price feed; each tick moves every reference and re-quotes the house. */
  startFeed(): void {
    if (this.feedSettings === null || this.feedSettings.intervalMs <= 0 || this.timer !== null)
      return;
    this.timer = this.every(this.feedSettings.intervalMs, 'feed tick', () => this.tick());
  }

  /**
   * An unref'd interval running `step`. A failed commit has already rebuilt the engine (or given
   * up); from a timer the error must not escape, or it would end the process: it is logged.
   */
  private every(ms: number, what: string, step: () => void): NodeJS.Timeout {
    const timer = setInterval(() => {
      try {
        step();
      } catch (err) {
        this.log.error(
          `the ${this.environment} ${what} failed: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }, ms);
    timer.unref();
    return timer;
  }

  /**
   * Cluster mode, a writer term beginning: the engine is rebuilt from the database, which holds
   * every commit of the previous writer (its fence's row lock made the epoch increment wait).
   */
  reload(): void {
    this.broken = false;
    this.rebuild();
  }

  /** Commits the waiting batch now (before the world's connection closes on unload). */
  flush(): void {
    this.settle();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    if (this.closer !== null) clearInterval(this.closer);
    this.closer = null;
  }

  /** One feed step: references move, the house re-quotes every open market. */
  tick(): void {
    // A market whose close time has come is closed before the house could quote it again.
    this.committedEngine();
    if (this.feed === null || this.house === null || this.broken) return;
    const refs = this.feed.tick();
    this.commit(this.house.tick(refs).events);
    this.storeReferences(refs);
  }

  /** Stores the references that moved since last stored; a failure is logged (the next tick retries). */
  private storeReferences(refs: ReadonlyMap<string, number>): void {
    const moved = new Map<string, number>();
    for (const [id, price] of refs) if (this.storedRefs.get(id) !== price) moved.set(id, price);
    if (moved.size === 0) return;
    try {
      this.repo.markets.saveReferences(moved, this.clock.now());
      for (const [id, price] of moved) this.storedRefs.set(id, price);
    } catch (err) {
      this.log.warn(`storing the ${this.environment} reference prices failed: ${String(err)}`);
    }
  }

  /** Sandbox control: moves a market's reference and re-quotes it at once. */
  setReference(marketId: string, price: number): boolean {
    this.committedEngine();
    if (this.feed === null || this.house === null || !this.feed.setReference(marketId, price))
      return false;
    this.commit(this.house.requote(marketId, price).events);
    this.storeReferences(new Map([[marketId, price]]));
    return true;
  }

  reference(marketId: string): number | null {
    return this.feed?.reference(marketId) ?? null;
  }

  /**
   * Resolves a market for good, the one resolution path (the sandbox resolve, the crypto markets
   * settling at close_time): the house quotes are withdrawn, then the engine cancels every resting
   * order (MARKET_RESOLVED), pays 100 cents per winning contract and marks it RESOLVED, committed
   * before this returns. The stored status is the record (after a restart the engine holds a
   * resolved market CLOSED), so a market stored RESOLVED answers MARKET_ALREADY_RESOLVED.
   */
  resolveMarket(marketId: string, outcome: Outcome): Success<object> | Failure {
    if (this.repo.markets.market(marketId)?.status === 'RESOLVED') {
      return { ok: false, code: 'MARKET_ALREADY_RESOLVED', message: marketId };
    }
    this.withdrawHouse(marketId);
    return this.run((e) => e.resolveMarket(marketId, outcome));
  }

  /**
   * Adds a market created through POST /markets. `store` inserts its row inside the transaction
   * that commits the engine's events, so both hold the market or neither does: if that commit
   * fails, the engine is rebuilt from the database, which never got the row. A paper market
   * joins the feed at `referencePrice` and the house quotes it in that same commit.
   */
  addMarket(
    m: { id: string; closeAt: number; referencePrice: number },
    store: () => void,
  ): Success<object> | Failure {
    this.assertUsable();
    this.committedEngine();
    const added = this.engine.addMarket(m.id);
    if (!added.ok) return added;
    const events = [...added.events];
    if (this.feed !== null && this.house !== null) {
      this.feed.addMarket(m.id, m.referencePrice);
      events.push(...this.house.requote(m.id, m.referencePrice).events);
    }
    this.index.apply(events);
    this.write(events, new Map(), store);
    this.storedRefs.set(m.id, m.referencePrice);
    this.setCloseTime(m.id, m.closeAt);
    return { ok: true, events };
  }

  /**
   * Halts an open market (the house withdraws; new orders answer MARKET_NOT_OPEN, resting ones
   * stay and can be cancelled) or reopens a halted one (the house quotes it again at its
   * reference, or `referencePrice` if the feed lost it across a restart).
   */
  setTradingStatus(
    marketId: string,
    status: 'OPEN' | 'HALTED',
    referencePrice: number,
    /** Row changes made with it (PATCH's other fields), in the same transaction. */
    store?: () => void,
  ): Success<object> | Failure {
    this.committedEngine();
    const r = this.engine.setMarketStatus(marketId, status);
    if (!r.ok) return r;
    const events = [...r.events];
    if (this.feed !== null && this.house !== null) {
      if (status === 'HALTED') events.push(...this.house.withdraw(marketId));
      else {
        this.feed.addMarket(marketId, referencePrice);
        const ref = this.feed.reference(marketId) ?? referencePrice;
        events.push(...this.house.requote(marketId, ref).events);
      }
    }
    this.index.apply(events);
    this.write(events, new Map(), store);
    return { ok: true, events };
  }

  /** Moves when a market closes (PATCH close_time): the closer reads this map. */
  setCloseTime(marketId: string, closeAt: number): void {
    this.closeTimes.set(marketId, closeAt);
    this.nextCloseAt = soonest(this.closeTimes);
  }

  /** Withdraws the house's quotes of a market (before it resolves or halts). */
  withdrawHouse(marketId: string): void {
    this.settle();
    if (this.house !== null) this.commit(this.house.withdraw(marketId));
  }

  /**
   * Closes the markets whose close_time has come (a no-op, one comparison, until one has). With
   * a group-commit batch waiting (between two legs of a POST /orders/batch, say) the closes join
   * that batch rather than split it; if it fails, the rebuilt engine closes them again.
   */
  closeDue(): void {
    const now = this.clock.now();
    if (now < this.nextCloseAt || this.broken) return;
    const events: EngineEvent[] = [];
    for (const [id, at] of this.closeTimes) {
      if (at > now) continue;
      this.closeTimes.delete(id);
      if (this.house !== null) events.push(...this.house.withdraw(id));
      const r = this.engine.setMarketStatus(id, 'CLOSED');
      if (r.ok) events.push(...r.events);
    }
    this.nextCloseAt = soonest(this.closeTimes);
    if (this.pendingEvents.length === 0 && this.inflight === null) {
      this.commit(events);
      return;
    }
    // On top of a batch waiting or in flight: the closes join the next batch.
    if (events.length === 0) return;
    this.index.apply(events);
    for (const e of events) this.pendingEvents.push(e);
    this.schedule();
  }

  /** Checks for markets to close every second, so they close with no command arriving. */
  startClosing(): void {
    if (this.closer !== null) return;
    this.closer = this.every(1000, 'market close', () => this.closeDue());
  }

  /** Builds an engine from the database: markets, accounts, positions, resting orders. */
  private restore(): MatchingEngine {
    // Built aside and installed only when complete, so a failure leaves the old parts together.
    const engine = new MatchingEngine({ clock: this.clock, ids: this.ids });
    const state = this.repo.loadForRestore();
    const index = new OpenOrderIndex();
    const closeTimes = new Map<string, number>();
    for (const m of state.markets) {
      // A resolved market is kept CLOSED in the engine: orders on it answer MARKET_NOT_OPEN.
      const status = m.status === 'RESOLVED' ? 'CLOSED' : m.status;
      engine.addMarket(m.id, { status, lastPrice: m.last_price, volume: m.volume });
      const closeAt = Date.parse(m.close_time);
      // A halted market still closes at its close_time.
      if ((m.status === 'OPEN' || m.status === 'HALTED') && !Number.isNaN(closeAt))
        closeTimes.set(m.id, closeAt);
    }
    for (const a of state.accounts) engine.restoreAccount(a.user_id, a.balance_cents);
    for (const p of state.positions) {
      engine.restorePosition(p.user_id, p.market_id, {
        yes: p.yes_qty,
        no: p.no_qty,
        yesCost: p.yes_cost,
        noCost: p.no_cost,
        realizedPnl: p.realized_pnl,
      });
    }
    for (const o of state.openOrders) {
      const r = engine.restoreOrder({
        id: o.id,
        accountId: o.user_id,
        marketId: o.market_id,
        tag: o.key_id,
        clientOrderId: o.client_order_id,
        action: o.action,
        side: o.side,
        price: o.price ?? 0,
        quantity: o.quantity,
        filledQuantity: o.filled_quantity,
        fillCost: o.fill_cost,
        postOnly: o.post_only === 1,
        selfTradePrevention: o.self_trade_prevention,
        createdAt: Date.parse(o.created_at),
        updatedAt: Date.parse(o.updated_at),
        sequence: o.sequence,
      });
      if (!r.ok) this.log.error(`order ${o.id} could not be restored: ${r.code} ${r.message}`);
      else
        index.add({
          id: o.id,
          accountId: o.user_id,
          tag: o.key_id,
          clientOrderId: o.client_order_id,
        });
    }
    // OPEN quotes keep their collateral across a restart (after the accounts they belong to).
    for (const h of state.holds) {
      const r = engine.restoreHold({
        holdId: h.id,
        accountId: h.user_id,
        marketId: h.market_id,
        amountCents: h.amount_cents,
        createdAt: Date.parse(h.created_at),
      });
      if (!r.ok) this.log.error(`quote hold ${h.id} could not be restored: ${r.code} ${r.message}`);
    }
    const done = engine.completeRestore();
    if (done.ok && done.underfundedAccounts.length > 0) {
      this.log.warn(
        `restored accounts below their reservations: ${done.underfundedAccounts.join(', ')}`,
      );
    }
    const now = this.clock.now();
    const applied = new AppliedKeys();
    applied.load(this.repo.effects.recordedSince(iso(now - IDEMPOTENCY_TTL_MS)), now);
    const quoting = this.feedSettings === null ? null : this.startHouse(engine, state.markets);
    this.index = index;
    this.applied = applied;
    this.closeTimes = closeTimes;
    this.nextCloseAt = soonest(closeTimes);
    if (quoting !== null) {
      this.feed = quoting.feed;
      this.house = quoting.house;
    }
    this.log.log(
      `${this.environment} engine restored: ${state.markets.length} markets, ${state.accounts.length} accounts, ${state.openOrders.length} resting orders, ${state.holds.length} quote holds`,
    );
    return engine;
  }

  /**
   * The house for a (re)built engine: its account and a price feed starting from each market's
   * reference (the feed it replaces, else the stored reference: sandbox price moves and the walk
   * survive a rebuild and a restart). It quotes in {@link openHouse}.
   */
  private startHouse(
    engine: MatchingEngine,
    markets: { id: string; status: string; reference_price: number; last_price: number | null }[],
  ): { feed: PriceFeed; house: HouseMarketMaker } {
    const s = this.feedSettings!;
    const previous = this.feed;
    if (engine.getAccount(HOUSE_ACCOUNT) === undefined) {
      const created = engine.createAccount(HOUSE_ACCOUNT, HOUSE_BALANCE);
      if (created.ok)
        this.repo.transaction(() => this.repo.apply(created.events, this.clock.now()));
    }
    const feed = new PriceFeed({ seed: s.seed });
    const house = new HouseMarketMaker(engine, {
      accountId: HOUSE_ACCOUNT,
      levels: s.levels,
      size: s.size,
      refill: s.refill,
      tag: HOUSE_ACCOUNT,
    });
    for (const m of markets) {
      if (m.status !== 'OPEN') continue;
      feed.addMarket(m.id, previous?.reference(m.id) ?? m.reference_price);
    }
    return { feed, house };
  }

  /**
   * The house quotes every open market at its reference at once, so a fresh start has liquidity
   * before the first tick. Through the ordinary commit: where the ladder crosses resting orders
   * (the reference moved while they waited) they trade, and those fills are stored, indexed and
   * published like any other.
   */
  openHouse(): void {
    if (this.feed === null || this.house === null || this.broken) return;
    // A market whose close time passed while the service was down never gets an opening quote.
    this.committedEngine();
    const events: EngineEvent[] = [];
    for (const [id, price] of this.feed.references()) {
      events.push(...this.house.requote(id, price).events);
    }
    this.commit(events);
  }
}
