import { Subject, type Observable } from 'rxjs';
import type { EngineEvent, MarketStatus, Outcome } from '../../engine/index.js';
import type { Environment, WorldName } from '../../common/environment.js';

/** A batch of engine events, published once its database transaction has committed. */
export interface CommittedEvents {
  environment: Environment;
  /** The world whose engine committed them (`environment`, or an ephemeral world's id). */
  world: WorldName;
  events: readonly EngineEvent[];
  committedAt: number;
  /**
   * The engine was rebuilt from the database (a commit failed): state held by consumers (books
   * built from deltas) must be refreshed from the engine, as no event describes the difference.
   */
  rebuilt?: boolean;
  /**
   * Committed by another instance and delivered here through the shared bus (REDIS_URL). Work
   * done once per commit (notifications, the webhook spool) belongs to the committing instance.
   */
  remote?: boolean;
  /**
   * With `rebuilt` (and no events): batches of this world were lost on the way here (a break in
   * the shared stream), so besides refreshing from the engine, consumers tell their clients that
   * messages were lost.
   */
  lost?: boolean;
  /**
   * Cluster mode: what a follower needs beside the events to keep its read model of the world
   * current without reading the database (src/modules/trading/follower-view.ts), set by the
   * writer: its fencing epoch, and the figures after the batch of what the events touched.
   */
  follow?: FollowerExtras;
}

/** What a writer adds to each batch in cluster mode (see {@link CommittedEvents.follow}). */
export interface FollowerExtras {
  /** The writer's term (fencing epoch): a new one means the engine was restored without events. */
  term: number;
  /** Account id -> [balance, reserved] after the batch, for every account its events name. */
  accounts?: Record<string, [number, number]>;
  /** Market id -> [last price (0: none), volume] after the batch, for the markets that traded. */
  markets?: Record<string, [number, number]>;
  /**
   * The writer's whole book and market figures at this point of the stream (sent on a
   * follower's request after it resynced): the house's quotes are in no database.
   */
  book?: BookSnapshot;
}

/** Every market's levels and figures, as a follower replaces its own with them. */
export type BookSnapshot = Record<
  string,
  {
    status: MarketStatus;
    outcome: Outcome | null;
    lastPrice: number | null;
    volume: number;
    orphanYes: number;
    orphanNo: number;
    bids: [number, number][];
    asks: [number, number][];
  }
>;

/**
 * The one place committed engine events fan out from (realtime channels, webhook outbox).
 * In-process by default; a shared bus (Redis streams, NATS) can implement the same interface.
 */
export abstract class EventBus {
  abstract publish(batch: CommittedEvents): void;
  abstract get stream(): Observable<CommittedEvents>;

  /**
   * Someone here wants the world's batches committed elsewhere too (a realtime connection of
   * that world): a shared bus reads the world's stream until every follower let go. Answers the
   * function that lets go (once). The in-process bus has nothing elsewhere to read.
   */
  follow(_world: WorldName): () => void {
    return () => undefined;
  }
}

export class InProcessEventBus extends EventBus {
  private readonly subject = new Subject<CommittedEvents>();

  publish(batch: CommittedEvents): void {
    this.subject.next(batch);
  }

  get stream(): Observable<CommittedEvents> {
    return this.subject.asObservable();
  }
}
