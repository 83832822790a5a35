import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import type { EngineEvent } from '../../engine/index.js';
import { HOUSE_ACCOUNT } from '../trading/engine-runtime.js';
import { EventBus, type CommittedEvents } from '../trading/event-bus.js';
import { WebhooksCore } from './webhooks.core.js';
import type { EndpointRow } from './webhooks.repository.js';
import {
  orderCancelledPayload,
  orderExpiredPayload,
  orderProgressPayload,
} from '../trading/order-payloads.js';

/** Event types a webhook endpoint can subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'order.created',
  'order.partially_filled',
  'order.filled',
  'order.cancelled',
  'order.expired',
  'market.resolved',
  'position.settled',
  'webhook.test',
] as const;

interface Outgoing {
  type: string;
  /** The owning user, or null for market-wide events (every subscribed endpoint of the environment). */
  userId: string | null;
  data: unknown;
}

function subscribed(e: EndpointRow, type: string): boolean {
  const events = e.events.split(',');
  return events.includes('*') || events.includes(type);
}

/**
 * Turns committed engine events into webhook events and deliveries, right after the engine
 * commit (the event bus publishes only committed batches). Endpoints receive only their own
 * environment's events, and user events only for their own user.
 */
@Injectable()
export class WebhookOutbox implements OnModuleInit, OnApplicationShutdown {
  private readonly log = new Logger('WebhookOutbox');
  private sub: Subscription | null = null;

  constructor(
    private readonly bus: EventBus,
    private readonly core: WebhooksCore,
  ) {}

  onModuleInit(): void {
    this.sub = this.bus.stream.subscribe((batch) => this.onBatch(batch));
  }

  /**
   * After the HTTP server has drained (Nest closes it between the destroy and the shutdown
   * hooks): an order answered during a graceful shutdown still gets its webhook events.
   */
  onApplicationShutdown(): void {
    this.sub?.unsubscribe();
  }

  private onBatch(batch: CommittedEvents): void {
    try {
      const endpoints = this.core.endpointsFor(batch.environment);
      if (endpoints.length === 0) return;
      for (const out of toWebhookEvents(batch.events)) {
        const targets = endpoints.filter(
          (e) => (out.userId === null || e.user_id === out.userId) && subscribed(e, out.type),
        );
        this.core.enqueue(batch.environment, out.type, out.data, targets);
      }
    } catch (err) {
      this.log.error(
        `webhook outbox failed for a ${batch.environment} batch: ${err instanceof Error ? err.stack : String(err)}`,
      );
    }
  }
}

export function toWebhookEvents(events: readonly EngineEvent[]): Outgoing[] {
  const out: Outgoing[] = [];
  /** The user an account's events go to: none for the house. */
  const userOf = (accountId: string): string | null =>
    accountId === HOUSE_ACCOUNT ? null : accountId;
  /** A user's event; dropped when there is no user to send it to. */
  const push = (type: string, userId: string | null, data: unknown): void => {
    if (userId !== null) out.push({ type, userId, data });
  };
  for (const e of events) {
    switch (e.type) {
      case 'order.accepted':
        push('order.created', userOf(e.order.accountId), {
          order: {
            id: e.order.id,
            client_order_id: e.order.clientOrderId,
            market_id: e.order.marketId,
            action: e.order.action,
            side: e.order.side,
            type: e.order.type,
            price: e.order.price,
            quantity: e.order.quantity,
            time_in_force: e.order.timeInForce,
            status: e.order.status,
          },
        });
        break;
      case 'order.updated':
        if (e.status === 'FILLED' || e.status === 'PARTIALLY_FILLED') {
          push(
            e.status === 'FILLED' ? 'order.filled' : 'order.partially_filled',
            userOf(e.accountId),
            orderProgressPayload(e),
          );
        }
        break;
      case 'order.cancelled':
        push('order.cancelled', userOf(e.accountId), orderCancelledPayload(e));
        break;
      case 'order.expired':
        push('order.expired', userOf(e.accountId), orderExpiredPayload(e));
        break;
      case 'market.resolved':
        // Market-wide: every endpoint subscribed to it.
        out.push({
          type: 'market.resolved',
          userId: null,
          data: { market_id: e.marketId, outcome: e.outcome },
        });
        break;
      case 'position.settled':
        push('position.settled', userOf(e.accountId), {
          market_id: e.marketId,
          outcome: e.outcome,
          yes: e.yes,
          no: e.no,
          payout_cents: e.payout,
          realized_pnl_cents: e.realizedPnl,
        });
        break;
      default:
        break;
    }
  }
  return out;
}
