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
}

/**
 * The one place committed engine events fan out from (realtime channels, webhook outbox).
 * In-process by default; a shared bus (Redis streams, NATS) can implement the same interface.
 */
export abstract class EventBus {
  abstract publish(batch: CommittedEvents): void;
  abstract get stream(): Observable<CommittedEvents>;
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
