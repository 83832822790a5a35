import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import type { WorldName } from '../../common/environment.js';
import type { EngineEvent, PositionSettledEvent } from '../../engine/index.js';
import { HOUSE_ACCOUNT } from '../trading/engine-runtime.js';
import { EventBus, type CommittedEvents } from '../trading/event-bus.js';
import { NotificationsService, type NewNotification } from './notifications.service.js';

/**
 * MARKET_RESOLVED: each holder of a market that resolves (one `position.settled` per holder in
 * the committed batch, whichever path resolved it: a sandbox resolve, or any later live one) gets
 * one notification in the world of the engine that settled it. It reads the committed batches as
 * the realtime hub and the webhook outbox do; a batch without a settlement (every order batch)
 * costs one pass over its event types and nothing else.
 */
@Injectable()
export class MarketResolvedNoticesService implements OnModuleInit, OnModuleDestroy {
  private readonly log = new Logger('Notifications');
  private sub: Subscription | null = null;

  constructor(
    private readonly bus: EventBus,
    private readonly notifications: NotificationsService,
  ) {}

  onModuleInit(): void {
    // The engine commit already happened: a failure here is logged, never thrown into the bus
    // (RxJS would rethrow it asynchronously and stop the process).
    this.sub = this.bus.stream.subscribe((batch) => {
      try {
        this.onBatch(batch);
      } catch (err) {
        this.log.error(
          `MARKET_RESOLVED notifications failed: ${err instanceof Error ? err.stack : String(err)}`,
        );
      }
    });
  }

  onModuleDestroy(): void {
    this.sub?.unsubscribe();
  }

  private onBatch(batch: CommittedEvents): void {
    // Notified by the instance that committed it.
    if (batch.remote === true) return;
    const notices = marketResolvedNotices(batch.events, batch.world);
    if (notices.length > 0) this.notifications.notifyAll(notices);
  }
}

/** The MARKET_RESOLVED notifications of one committed batch: one per settled holder, never the house. */
export function marketResolvedNotices(
  events: readonly EngineEvent[],
  environment: WorldName,
): NewNotification[] {
  const out: NewNotification[] = [];
  for (const e of events) {
    if (e.type !== 'position.settled' || e.accountId === HOUSE_ACCOUNT) continue;
    out.push(notice(e, environment));
  }
  return out;
}

function notice(e: PositionSettledEvent, environment: WorldName): NewNotification {
  const held = [e.yes > 0 ? `${e.yes} YES` : null, e.no > 0 ? `${e.no} NO` : null]
    .filter((x) => x !== null)
    .join(' and ');
  return {
    // Trading accounts are keyed by their user's id.
    userId: e.accountId,
    environment,
    type: 'MARKET_RESOLVED',
    title: `Market resolved ${e.outcome}`,
    body: `Market ${e.marketId} resolved ${e.outcome}. Your ${held} contracts paid ${e.payout} cents.`,
    data: { market_id: e.marketId, outcome: e.outcome, payout_cents: e.payout },
  };
}
