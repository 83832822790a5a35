import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import type { EngineEvent } from '../../engine/index.js';
import { HOUSE_ACCOUNT } from '../trading/engine-runtime.js';
import type { WorldName } from '../../common/environment.js';
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
  'account.reset',
  'rfq.quote_received',
  'rfq.quote_accepted',
  'rfq.expired',
  'data_export.ready',
  'webhook.test',
] as const;

interface Outgoing {
  type: string;
  /** The owning user, or null for market-wide events (every subscribed endpoint of the environment). */
  userId: string | null;
  data: unknown;
}

/**
 * One webhook event as spooled with its engine batch: its id, time and target endpoints are fixed
 * at the commit, so an endpoint created later never receives it, however late it is moved.
 */
interface Spooled extends Outgoing {
  id: string;
  createdAt: string;
  endpoints: string[];
}

/** Spooled batches moved per platform transaction (one event-loop turn). */
const MOVE_CHUNK = 100;
/** After a failed move (the platform database refused it), the next try comes this much later. */
const RETRY_MS = 1000;

function subscribed(e: EndpointRow, type: string): boolean {
  const events = e.events.split(',');
  return events.includes('*') || events.includes(type);
}

function isSpooled(x: unknown): x is Spooled {
  const e = x as Partial<Spooled> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof e.id === 'string' &&
    typeof e.type === 'string' &&
    typeof e.createdAt === 'string' &&
    Array.isArray(e.endpoints)
  );
}

/** Per environment: what the spool may hold and how its moving goes. */
interface SpoolState {
  /** A batch was spooled and may not be moved yet. */
  pending: boolean;
  /** Moving in chunks on later turns (after boot or an outage): new batches wait their turn. */
  draining: boolean;
  /** Failed moves since the last success (0: healthy). */
  failures: number;
}

/**
 * Turns committed engine events into webhook events and deliveries, without losing any to a
 * crash. The events of an engine batch that some endpoint subscribes to are serialised, with
 * their target endpoints, into that engine database's webhook spool inside the batch's own
 * transaction (see {@link Spooler}), so they commit exactly when the orders they tell of commit.
 * Right after the commit (the event bus publishes only committed batches) they are moved into
 * the platform database's outbox (an event, a delivery per target endpoint still deliverable),
 * and only then leave the spool.
 *
 * A crash, or a platform database that refuses the write, leaves them in the spool. They are then
 * moved oldest first, a chunk per event-loop turn so no request waits behind a backlog, by a
 * retry every second and at the next boot; new batches queue behind them meanwhile. Event ids
 * are fixed in the spool, so a move repeated after a crash between the two writes finds the
 * event stored and skips it: each event is recorded once.
 *
 * Endpoints receive only their own environment's events, and user events only for their own
 * user.
 */
@Injectable()
export class WebhookOutbox implements OnModuleInit, OnApplicationShutdown {
  private readonly log = new Logger('WebhookOutbox');
  private sub: Subscription | null = null;
  /** Per world: the live and paper worlds, and each loaded ephemeral world. */
  private readonly states = new Map<WorldName, SpoolState>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly bus: EventBus,
    private readonly core: WebhooksCore,
    private readonly engines: EngineRegistry,
  ) {}

  onModuleInit(): void {
    this.engines.setSpooler((env, events) => this.spool(env, events));
    // Another instance's batch was spooled and is moved by that instance.
    this.sub = this.bus.stream.subscribe((batch) => {
      if (batch.remote !== true) this.onCommitted(batch.world);
    });
    // A world about to unload (idle, or deleted) first moves what it spooled; its file closes next.
    this.engines.onWorldUnloading((world) => {
      for (let i = 0; i < 1000 && this.moveChunk(world) === MOVE_CHUNK; i++);
      this.states.delete(world);
    });
    // Batches a crash left in the spools: moved as soon as the engines are up.
    this.engines.whenReady(() => {
      for (const env of ['live', 'test'] as const) if (this.engines.writes(env)) this.step(env);
    });
    // Cluster mode: a new writer moves what its world's previous writer left spooled.
    this.engines.onTermStart((world) => this.step(world));
  }

  /**
   * After the HTTP server has drained (Nest closes it between the destroy and the shutdown
   * hooks): an order answered during a graceful shutdown still gets its webhook events. What is
   * still spooled then is moved at the next boot.
   */
  onApplicationShutdown(): void {
    this.sub?.unsubscribe();
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  /**
   * A user's event that no engine batch carries (the RFQ lifecycle: a quote received, an RFQ
   * expired; a finished data export), recorded with a delivery per subscribed endpoint of that user
   * and world once the change it tells of has committed. Returns the event id, or null when no
   * endpoint wants it.
   */
  publishUserEvent(env: WorldName, userId: string, type: string, data: unknown): string | null {
    const targets = this.core
      .endpointsFor(env)
      .filter((ep) => ep.user_id === userId && subscribed(ep, type));
    return this.core.enqueue(env, type, data, targets);
  }

  /** The engine transaction's part (see {@link Spooler}): the batch's webhook events, or null. */
  private state(world: WorldName): SpoolState {
    let st = this.states.get(world);
    if (st === undefined) {
      st = { pending: false, draining: false, failures: 0 };
      this.states.set(world, st);
    }
    return st;
  }

  private spool(env: WorldName, events: readonly EngineEvent[]): string | null {
    try {
      const endpoints = this.core.endpointsFor(env);
      if (endpoints.length === 0) return null;
      const spooled: Spooled[] = [];
      let createdAt: string | null = null;
      for (const o of toWebhookEvents(events)) {
        const targets = endpoints.filter(
          (ep) => (o.userId === null || ep.user_id === o.userId) && subscribed(ep, o.type),
        );
        if (targets.length === 0) continue;
        createdAt ??= this.core.nowIso();
        const id = this.core.ids.next('evt');
        spooled.push({ id, createdAt, ...o, endpoints: targets.map((t) => t.id) });
      }
      if (spooled.length === 0) return null;
      this.state(env).pending = true;
      return JSON.stringify(spooled);
    } catch (err) {
      // Never refuse the orders for their webhooks: this is a bug, said loudly.
      this.log.error(
        `webhook events of a ${env} batch could not be spooled and are lost: ${
          err instanceof Error ? err.stack : String(err)
        }`,
      );
      return null;
    }
  }

  /** After an engine commit: its batch is moved at once, unless older ones are still waiting. */
  private onCommitted(env: WorldName): void {
    const st = this.state(env);
    // Normally just this batch: recorded before its orders are answered.
    if (st.pending && !st.draining) this.step(env);
  }

  /**
   * Moves one chunk. While a backlog remains (a full chunk moved) or the move failed, the next
   * step follows on a later turn, after RETRY_MS for a failure, and new batches queue behind it.
   */
  private step(env: WorldName): void {
    if (this.stopped) return;
    const moved = this.moveChunk(env);
    const again = moved < 0 || moved === MOVE_CHUNK;
    this.state(env).draining = again;
    if (again) this.later(() => this.step(env), moved < 0 ? RETRY_MS : 0);
  }

  /**
   * Moves up to {@link MOVE_CHUNK} spooled batches of `env`, oldest first, in one platform
   * transaction. Returns how many, or -1 if the platform database refused (they stay spooled).
   */
  private moveChunk(env: WorldName): number {
    const st = this.state(env);
    try {
      // An unloaded world's spool waits in its file (moved before every unload).
      const rt = this.engines.loaded(env);
      if (rt === null) {
        st.pending = false;
        return 0;
      }
      const spool = rt.webhookSpool;
      const rows = spool.spooled(MOVE_CHUNK);
      if (rows.length > 0) {
        const deliverable = new Map(this.core.endpointsFor(env).map((e) => [e.id, e]));
        this.core.repo.transaction(() => {
          for (const row of rows) {
            for (const e of this.readRow(env, row)) {
              // Moved before a crash that came ahead of the spool's cleanup: already stored.
              if (this.core.repo.event(e.id) !== undefined) continue;
              // An endpoint disabled or deleted since the commit gets nothing.
              const targets = e.endpoints
                .map((id) => deliverable.get(id))
                .filter((t): t is EndpointRow => t !== undefined);
              if (targets.length > 0) this.core.record(env, e, targets);
            }
          }
        });
        spool.unspool(rows[rows.length - 1].id);
        this.core.wake();
      }
      if (rows.length < MOVE_CHUNK) st.pending = false;
      if (st.failures > 0) {
        this.log.log(
          `${env} webhook events are moving to the outbox again after ${st.failures} failed attempt(s)`,
        );
        st.failures = 0;
      }
      return rows.length;
    } catch (err) {
      // Once per outage, not once per batch or retry.
      if (st.failures++ === 0) {
        this.log.error(
          `moving ${env} webhook events to the outbox failed; they stay spooled and are retried every ${RETRY_MS} ms: ${
            err instanceof Error ? err.stack : String(err)
          }`,
        );
      }
      return -1;
    }
  }

  /** A spool row's events; a row this version cannot read is reported and skipped, not retried. */
  private readRow(env: WorldName, row: { id: number; payload: string }): Spooled[] {
    try {
      const parsed: unknown = JSON.parse(row.payload);
      if (Array.isArray(parsed) && parsed.every(isSpooled)) return parsed;
    } catch {
      // reported below
    }
    this.log.error(`${env} webhook spool row ${row.id} is unreadable and was skipped`);
    return [];
  }

  private later(fn: () => void, ms: number): void {
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    t.unref();
    this.timers.add(t);
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
            self_trade_prevention: e.order.selfTradePrevention,
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
      case 'account.reset':
        // A sandbox reset: one event for all it dropped (no order.cancelled per order), so an
        // integration mirroring its orders and positions knows to clear them.
        push('account.reset', userOf(e.accountId), {
          cancelled_orders: e.cancelledOrders,
          balance_cents: e.balance,
          market_ids: e.marketIds,
        });
        break;
      default:
        break;
    }
  }
  return out;
}
