import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import type { EngineEvent } from '../../engine/index.js';
import { HOUSE_ACCOUNT } from '../trading/engine-runtime.js';
import type { Environment } from '../../common/environment.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { EventBus } from '../trading/event-bus.js';
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

/** One webhook event as spooled with its engine batch: its id and time are fixed at the commit. */
interface Spooled extends Outgoing {
  id: string;
  createdAt: string;
}

/** Spooled batches moved per platform transaction. */
const MOVE_CHUNK = 100;
/** After a failed move (the platform database refused it), the next try comes this much later. */
const RETRY_MS = 1000;

function subscribed(e: EndpointRow, type: string): boolean {
  const events = e.events.split(',');
  return events.includes('*') || events.includes(type);
}

/**
 * Turns committed engine events into webhook events and deliveries, without losing any to a
 * crash. The events of an engine batch are serialised into that engine database's webhook spool
 * inside the batch's own transaction (see {@link Spooler}), so they commit exactly when the
 * orders they tell of commit. Right after the commit (the event bus publishes only committed
 * batches) they are moved into the platform database's outbox: one event per webhook event, a
 * delivery per subscribed endpoint, and only then leave the spool. A crash, or a platform
 * database that refuses the write, leaves them in the spool; they are moved at the next batch,
 * on a retry timer, or at the next boot. Event ids are fixed in the spool, so a move repeated
 * after a crash between the two writes finds the event stored and skips it: each event is
 * recorded once.
 *
 * Endpoints receive only their own environment's events, and user events only for their own
 * user. A batch committed while its environment has no deliverable endpoint is not spooled.
 */
@Injectable()
export class WebhookOutbox implements OnModuleInit, OnApplicationShutdown {
  private readonly log = new Logger('WebhookOutbox');
  private sub: Subscription | null = null;
  /** Environments whose spool may hold batches (set when one is spooled, cleared when empty). */
  private readonly pending = new Set<Environment>(['live', 'test']);
  private retry: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly bus: EventBus,
    private readonly core: WebhooksCore,
    private readonly engines: EngineRegistry,
  ) {}

  onModuleInit(): void {
    this.engines.setSpooler((env, events) => this.spool(env, events));
    this.sub = this.bus.stream.subscribe((batch) => {
      if (this.pending.has(batch.environment)) this.move(batch.environment);
    });
    // Batches a crash left in the spools: moved as soon as the engines are up.
    this.engines.whenReady(() => {
      for (const env of ['live', 'test'] as const) this.move(env);
    });
  }

  /**
   * After the HTTP server has drained (Nest closes it between the destroy and the shutdown
   * hooks): an order answered during a graceful shutdown still gets its webhook events.
   */
  onApplicationShutdown(): void {
    this.sub?.unsubscribe();
    this.stopped = true;
    if (this.retry !== null) clearTimeout(this.retry);
    this.retry = null;
  }

  /** The engine transaction's part (see {@link Spooler}): the batch's webhook events, or null. */
  private spool(env: Environment, events: readonly EngineEvent[]): string | null {
    try {
      if (this.core.endpointsFor(env).length === 0) return null;
    } catch {
      // The platform database cannot say whether anyone listens: keep the events, the move decides.
    }
    const out = toWebhookEvents(events);
    if (out.length === 0) return null;
    const createdAt = this.core.nowIso();
    const spooled: Spooled[] = out.map((o) => ({ id: this.core.ids.next('evt'), createdAt, ...o }));
    this.pending.add(env);
    return JSON.stringify(spooled);
  }

  /** Moves every spooled batch of `env` into the outbox, oldest first. */
  private move(env: Environment): void {
    const spool = this.engines.get(env).repo;
    let moved = 0;
    try {
      for (;;) {
        const rows = spool.spooled(MOVE_CHUNK);
        if (rows.length === 0) break;
        const endpoints = this.core.endpointsFor(env);
        this.core.repo.transaction(() => {
          for (const row of rows) {
            for (const e of JSON.parse(row.payload) as Spooled[]) {
              // Moved before a crash that came ahead of the spool's cleanup: already stored.
              if (this.core.repo.event(e.id) !== undefined) continue;
              const targets = endpoints.filter(
                (ep) => (e.userId === null || ep.user_id === e.userId) && subscribed(ep, e.type),
              );
              if (targets.length > 0) this.core.record(env, e, targets);
            }
          }
        });
        spool.unspool(rows[rows.length - 1].id);
        moved += rows.length;
        if (rows.length < MOVE_CHUNK) break;
      }
      this.pending.delete(env);
    } catch (err) {
      this.log.error(
        `moving ${env} webhook events to the outbox failed; they stay spooled and are retried: ${
          err instanceof Error ? err.stack : String(err)
        }`,
      );
      this.retryLater();
    }
    if (moved > 0) this.core.wake();
  }

  /** One timer for both environments: it moves whatever is still spooled. */
  private retryLater(): void {
    if (this.retry !== null || this.stopped) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      if (this.stopped) return;
      for (const env of [...this.pending]) this.move(env);
    }, RETRY_MS);
    this.retry.unref();
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
