import { Subject, type Observable } from 'rxjs';
import type { EngineEvent } from '../../engine/index.js';
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
}

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
