import { Injectable } from '@nestjs/common';
import type {
  EngineEvent,
  Failure,
  OrderSnapshot,
  QuoteRequest,
  Success,
  TradeEvent,
} from '../../engine/index.js';
import type { Environment } from '../../common/environment.js';
import { DomainError, validationFailed } from '../../common/errors/domain-error.js';
import type { Credential } from '../../common/http/request-context.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import { ConfigService } from '../../config/config.service.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import type { EngineRuntime } from '../trading/engine-runtime.js';
import { OpenOrderIndex } from '../trading/open-order-index.js';
import type { OrderRow, TradeRow } from '../trading/trading.repository.js';
import type {
  BatchLegResultDto,
  FillDto,
  ListOrdersQueryDto,
  OrderDto,
  QuoteDto,
} from './dto/order.dto.js';
import { fromEngine } from '../trading/engine-errors.js';
import type { AmendBody, PlaceOrderBody } from './order-schemas.js';
import { mapError, schemaFields, type AjvError } from '../../common/errors/error-mapper.js';
import { apiCancelReason } from '../trading/cancel-reason.js';
import { ORDER_ID } from '../../common/ids/id-patterns.js';
import { iso } from '../../common/clock/iso.js';

const OPEN_STATUSES = new Set(['OPEN', 'PARTIALLY_FILLED']);

/**
 * Order use cases: each validates, runs one engine command through the environment's runtime
 * (which commits the events before returning) and answers from the engine's snapshot.
 */
@Injectable()
export class OrdersService {
  constructor(
    private readonly engines: EngineRegistry,
    private readonly config: ConfigService,
  ) {}

  runtimeFor(c: Credential): EngineRuntime {
    return this.engines.forCredential(c);
  }

  /** Places an order; answers once its events are committed (group commit, see runBatched). */
  async place(c: Credential, body: PlaceOrderBody): Promise<OrderDto> {
    const r = await this.submit(c, body);
    if (!r.ok) throw fromEngine(r, { marketId: body.market_id });
    return toDto(r.order, c.environment, fillsFromEvents(r.order, r.events));
  }

  /**
   * Legs run in order, at once (each sees the book the previous ones left), and commit
   * together; one leg's failure, its schema's included (`schemaErrors` of each leg, none when
   * valid), does not undo or stop the others.
   */
  async batch(
    c: Credential,
    legs: unknown[],
    requestId: string,
    schemaErrors: (leg: unknown) => AjvError[],
  ): Promise<BatchLegResultDto[]> {
    // submit is async, so a leg refused by the checks is a rejection like any other; each leg's
    // command still runs at once, in order. A leg its schema refuses is refused as POST /orders
    // would refuse it, and never reaches the engine.
    const settled = await Promise.allSettled(
      legs.map((leg) => {
        const errors = schemaErrors(leg);
        if (errors.length > 0) return Promise.reject(validationFailed(schemaFields(errors)));
        return this.submit(c, leg as PlaceOrderBody);
      }),
    );
    // The legs commit together: if that commit failed, the whole request failed (500), so that an
    // idempotent retry runs again instead of replaying the failure.
    const failedCommit = settled.find(
      (s) => s.status === 'rejected' && !(s.reason instanceof DomainError),
    );
    if (failedCommit !== undefined) throw (failedCommit as PromiseRejectedResult).reason;
    return settled.map((s, index) => {
      if (s.status === 'fulfilled' && s.value.ok) {
        const o = s.value.order;
        return {
          index,
          status: 201,
          order: toDto(o, c.environment, fillsFromEvents(o, s.value.events)),
        };
      }
      const err =
        s.status === 'rejected'
          ? s.reason
          : fromEngine(s.value as Failure, { marketId: (legs[index] as PlaceOrderBody).market_id });
      return legError(index, err, requestId);
    });
  }

  /** Checks, then runs the engine command now; the promise settles after the commit. */
  private async submit(
    c: Credential,
    body: PlaceOrderBody,
  ): Promise<Success<{ order: OrderSnapshot }> | Failure> {
    // The service's own checks run before the caller's trading account is opened, so a refused
    // body leaves nothing behind (a first order opens the account, funded on the paper engine).
    const rt = this.engines.get(c.world);
    this.check(rt, c, body);
    rt.ensureAccount(c.userId);
    const req = {
      ...engineOrder(c, body),
      tag: c.keyId,
      clientOrderId: body.client_order_id ?? null,
      ...(c.scenario !== undefined ? { fillLimit: c.scenario.fillLimit } : {}),
    };
    return rt.runBatched((e) => e.placeOrder(req), c.idempotency);
  }

  /** Changes nothing: a caller with no trading account yet is quoted as a flat one, none opened. */
  quote(c: Credential, body: PlaceOrderBody): QuoteDto {
    const rt = this.engines.get(c.world);
    this.shape(body);
    if (body.quantity > this.config.values.orderMaxQuantity) throw this.quantityLimit();
    rt.closeDue(); // a market past its close time quotes MARKET_NOT_OPEN, as an order would
    const r = rt.engine.quote(engineOrder(c, body));
    if (!r.ok) throw fromEngine(r, { marketId: body.market_id });
    const q = r.quote;
    return {
      filled_quantity: q.filledQuantity,
      average_price: q.averagePrice,
      cost_cents: q.cost,
      cash_delta_cents: q.cashDelta,
      fully_filled: q.fullyFilled,
      levels: q.levels.map((l) => ({ price: l.price, quantity: l.quantity })),
    };
  }

  amend(c: Credential, orderId: string, body: AmendBody): OrderDto {
    const rt = this.runtimeFor(c);
    this.assertOrderId(orderId);
    if (body.price === undefined && body.quantity === undefined) {
      throw new DomainError(
        'AMEND_NO_CHANGE',
        'The amend changes nothing: send a new price or quantity',
      );
    }
    if (body.quantity !== undefined && body.quantity > this.config.values.orderMaxQuantity) {
      throw this.quantityLimit();
    }
    const r = rt.run((e) =>
      e.amendOrder(orderId, { price: body.price, quantity: body.quantity }, c.userId),
    );
    // The schema has checked price and quantity ranges, so the engine's only remaining shape
    // rule is about the quantity: the new total must exceed what has already filled.
    if (!r.ok && r.code === 'INVALID_ORDER') {
      throw validationFailed([{ field: 'quantity', message: r.message }]);
    }
    if (!r.ok) throw this.orderFailure(rt, c, orderId, r);
    return this.withStoredFills(rt, r.order, c.environment);
  }

  cancel(c: Credential, orderId: string): OrderDto {
    const rt = this.runtimeFor(c);
    this.assertOrderId(orderId);
    const r = rt.run((e) => e.cancelOrder(orderId, c.userId));
    if (!r.ok) throw this.orderFailure(rt, c, orderId, r);
    return this.withStoredFills(rt, r.order, c.environment);
  }

  cancelAll(c: Credential, marketId: string | undefined): number {
    const rt = this.runtimeFor(c);
    const r = rt.run((e) => e.cancelAll(c.userId, marketId));
    if (!r.ok) throw fromEngine(r, { marketId });
    return r.cancelled;
  }

  /** Each id gets its own result; ids are unique (checked by the schema). */
  cancelBatch(c: Credential, ids: string[], requestId: string): BatchLegResultDto[] {
    return ids.map((id, index) => {
      try {
        return { index, status: 200, order: this.cancel(c, id) };
      } catch (err) {
        return legError(index, err, requestId);
      }
    });
  }

  get(c: Credential, orderId: string): OrderDto {
    const rt = this.engines.get(c.world);
    this.assertOrderId(orderId);
    const row = rt.repo.orderById(orderId);
    if (row === undefined || row.user_id !== c.userId) {
      throw new DomainError('NOT_FOUND', `No order ${orderId}`, { order_id: orderId });
    }
    return rowToDto(row, c.environment, rt.repo.tradesOfOrder(orderId));
  }

  list(c: Credential, q: ListOrdersQueryDto): Page<OrderDto> {
    const rt = this.engines.get(c.world);
    return paginate({
      list: `orders:${c.environment}`,
      keys: ['id'],
      query: q,
      fetch: (after, take) =>
        rt.repo.listOrders(c.userId, {
          status: q.status,
          marketId: q.market_id,
          beforeId: after?.[0],
          limit: take,
        }),
      keyOf: (r) => [r.id],
      // One trade query for the page, not one per order.
      mapPage: (rows) => {
        const trades = rt.repo.tradesOfOrders(rows.map((r) => r.id));
        return rows.map((r) => rowToDto(r, c.environment, trades.get(r.id) ?? []));
      },
    });
  }

  /**
   * Cross-field rules and the service's caps, before the engine sees the order. The open-order
   * cap counts orders that can rest: an order that cannot (MARKET, IOC, FOK) is never refused by
   * it, so a credential at the cap can still trade out of a position. Orders placed with a session
   * token are counted per user, as one credential.
   */
  private check(rt: EngineRuntime, c: Credential, body: PlaceOrderBody): void {
    this.shape(body);
    if (body.quantity > this.config.values.orderMaxQuantity) throw this.quantityLimit();
    const owner = OpenOrderIndex.ownerOf(c.keyId, c.userId);
    const mayRest = body.type === 'LIMIT' && (body.time_in_force ?? 'GTC') === 'GTC';
    const max = this.config.values.maxOpenOrdersPerKey;
    if (mayRest && rt.index.openCount(owner) >= max) {
      throw new DomainError(
        'OPEN_ORDERS_LIMIT',
        `${c.keyId === null ? 'Your session orders number' : 'This key has'} ${max} open orders, the most allowed; cancel some first`,
        { limit: max },
      );
    }
    if (body.client_order_id !== undefined) {
      const existing = rt.index.orderForClientId(owner, body.client_order_id);
      if (existing !== undefined) {
        throw new DomainError(
          'DUPLICATE_CLIENT_ORDER_ID',
          `client_order_id ${body.client_order_id} is already used by open order ${existing}`,
          { client_order_id: body.client_order_id, order_id: existing },
        );
      }
    }
  }

  private shape(body: PlaceOrderBody): void {
    if (body.type === 'LIMIT' && body.price === undefined) {
      throw validationFailed([
        { field: 'price', message: 'price must be given for a LIMIT order' },
      ]);
    }
    if (body.type === 'MARKET' && body.price !== undefined) {
      throw validationFailed([
        { field: 'price', message: 'price must not be given for a MARKET order' },
      ]);
    }
    if (body.type === 'MARKET' && body.time_in_force === 'GTC') {
      throw validationFailed([
        { field: 'time_in_force', message: 'time_in_force must be IOC or FOK for a MARKET order' },
      ]);
    }
    if (
      body.post_only === true &&
      (body.type !== 'LIMIT' || (body.time_in_force ?? 'GTC') !== 'GTC')
    ) {
      throw validationFailed([
        { field: 'post_only', message: 'post_only must be true only on a LIMIT GTC order' },
      ]);
    }
  }

  private quantityLimit(): DomainError {
    const max = this.config.values.orderMaxQuantity;
    return new DomainError(
      'ORDER_QUANTITY_LIMIT',
      `quantity is above the per-order maximum of ${max}`,
      { max_quantity: max },
    );
  }

  private assertOrderId(id: string): void {
    if (!ORDER_ID.test(id)) throw new DomainError('NOT_FOUND', `No order ${id}`, { order_id: id });
  }

  /**
   * An engine failure on an existing order id. The engine holds the open orders and only the
   * most recent closed ones (none from before a restart), so an id it does not know may still be
   * one of the caller's closed orders: the stored record tells 409 ORDER_NOT_OPEN from 404.
   */
  private orderFailure(rt: EngineRuntime, c: Credential, orderId: string, f: Failure): DomainError {
    if (f.code === 'UNKNOWN_ORDER') {
      const row = rt.repo.orderById(orderId);
      if (row !== undefined && row.user_id === c.userId && !OPEN_STATUSES.has(row.status)) {
        return new DomainError('ORDER_NOT_OPEN', `The order is no longer open (${row.status})`, {
          order_id: orderId,
        });
      }
    }
    // The engine checked ownership before the market: naming the order's market discloses nothing.
    const marketId =
      f.code === 'MARKET_NOT_OPEN' || f.code === 'INSUFFICIENT_FUNDS'
        ? rt.engine.getOrder(orderId)?.marketId
        : undefined;
    return fromEngine(f, { orderId, marketId });
  }

  private withStoredFills(rt: EngineRuntime, o: OrderSnapshot, env: Environment): OrderDto {
    return toDto(
      o,
      env,
      rt.repo.tradesOfOrder(o.id).map((t) => tradeToFill(t, o.id, o.side)),
    );
  }
}

function ownPrice(yesPrice: number, side: 'YES' | 'NO'): number {
  return side === 'YES' ? yesPrice : 100 - yesPrice;
}

function fillsFromEvents(o: OrderSnapshot, events: readonly EngineEvent[]): FillDto[] {
  const fills: FillDto[] = [];
  for (const e of events) {
    if (e.type !== 'trade' || (e.takerOrderId !== o.id && e.makerOrderId !== o.id)) continue;
    fills.push(tradeEventToFill(e, o));
  }
  return fills;
}

function tradeEventToFill(t: TradeEvent, o: OrderSnapshot): FillDto {
  return {
    id: t.id,
    price: ownPrice(t.price, o.side),
    yes_price: t.price,
    quantity: t.quantity,
    liquidity: t.makerOrderId === o.id ? 'MAKER' : 'TAKER',
    created_at: iso(t.timestamp),
  };
}

function tradeToFill(t: TradeRow, orderId: string, side: 'YES' | 'NO'): FillDto {
  return {
    id: t.id,
    price: ownPrice(t.price, side),
    yes_price: t.price,
    quantity: t.quantity,
    liquidity: t.maker_order_id === orderId ? 'MAKER' : 'TAKER',
    created_at: t.created_at,
  };
}

/** The engine's form of an order body (what a quote needs; placing adds tag and client id). */
function engineOrder(c: Credential, body: PlaceOrderBody): QuoteRequest & { accountId: string } {
  return {
    accountId: c.userId,
    marketId: body.market_id,
    action: body.action,
    side: body.side,
    type: body.type,
    price: body.price ?? null,
    quantity: body.quantity,
    timeInForce: body.time_in_force,
    postOnly: body.post_only,
    selfTradePrevention: body.self_trade_prevention,
  };
}

/** A batch leg's failure, in the error body a single request would have answered. */
function legError(index: number, err: unknown, requestId: string): BatchLegResultDto {
  const mapped = mapError(err, requestId);
  return { index, status: mapped.status, error: mapped.body.error };
}

export function toDto(o: OrderSnapshot, env: Environment, fills: FillDto[]): OrderDto {
  return {
    id: o.id,
    client_order_id: o.clientOrderId,
    market_id: o.marketId,
    action: o.action,
    side: o.side,
    type: o.type,
    rfq_id: o.rfqId,
    price: o.price,
    quantity: o.quantity,
    filled_quantity: o.filledQuantity,
    remaining_quantity: o.remainingQuantity,
    average_fill_price: o.averageFillPrice,
    filled_cost_cents: o.fillCost,
    status: o.status,
    cancel_reason: apiCancelReason(o.cancelReason),
    time_in_force: o.timeInForce,
    post_only: o.postOnly,
    self_trade_prevention: o.selfTradePrevention,
    environment: env,
    created_at: iso(o.createdAt),
    updated_at: iso(o.updatedAt),
    fills,
  };
}

export function rowToDto(r: OrderRow, env: Environment, trades: TradeRow[]): OrderDto {
  const open = OPEN_STATUSES.has(r.status);
  return {
    id: r.id,
    client_order_id: r.client_order_id,
    market_id: r.market_id,
    action: r.action,
    side: r.side,
    type: r.type,
    rfq_id: r.rfq_id,
    price: r.price,
    quantity: r.quantity,
    filled_quantity: r.filled_quantity,
    remaining_quantity: open ? r.quantity - r.filled_quantity : 0,
    average_fill_price: r.filled_quantity > 0 ? r.fill_cost / r.filled_quantity : null,
    filled_cost_cents: r.fill_cost,
    status: r.status,
    cancel_reason: apiCancelReason(r.cancel_reason),
    time_in_force: r.time_in_force,
    post_only: r.post_only === 1,
    self_trade_prevention: r.self_trade_prevention,
    environment: env,
    created_at: r.created_at,
    updated_at: r.updated_at,
    fills: trades.map((t) => tradeToFill(t, r.id, r.side)),
  };
}
