import { Injectable } from '@nestjs/common';
import type { Failure, OrderSnapshot } from '../../engine/index.js';
import type { Environment } from '../../common/environment.js';
import { DomainError, validationFailed } from '../../common/errors/domain-error.js';
import { mapError, schemaFields, type AjvError } from '../../common/errors/error-mapper.js';
import type { Credential } from '../../common/http/request-context.js';
import { ORDER_ID } from '../../common/ids/id-patterns.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import { ConfigService } from '../../config/config.service.js';
import { fromEngine } from '../trading/engine-errors.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import type { EngineRuntime } from '../trading/engine-runtime.js';
import type { BatchLegResultDto, ListOrdersQueryDto, OrderDto, QuoteDto } from './dto/order.dto.js';
import {
  fillsFromEvents,
  OPEN_STATUSES,
  rowToDto,
  toDto,
  tradeToFill,
} from './order-dto.mapper.js';
import type { AmendBody, PlaceOrderBody } from './order-schemas.js';
import {
  checkOrderShape,
  engineOrder,
  quantityLimit,
} from './use-cases/place-order/place-order.command.js';
import { PlaceOrderUseCase } from './use-cases/place-order/place-order.use-case.js';

/**
 * Order use cases: each validates, runs one engine command through the environment's runtime
 * (which commits the events before returning) and answers from the engine's snapshot.
 */
@Injectable()
export class OrdersService {
  constructor(
    private readonly engines: EngineRegistry,
    private readonly config: ConfigService,
    private readonly placeOrder: PlaceOrderUseCase,
  ) {}

  runtimeFor(c: Credential): EngineRuntime {
    return this.engines.forCredential(c);
  }

  /** Places an order; answers once its events are committed (see PlaceOrderUseCase). */
  place(c: Credential, body: PlaceOrderBody): Promise<OrderDto> {
    return this.placeOrder.execute(c, body);
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
        return this.placeOrder.place(c, leg as PlaceOrderBody);
      }),
    );
    // The legs commit together: if that commit failed, the whole request failed (500), so that an
    // idempotent retry runs again instead of replaying the failure.
    const failedCommit = settled.find(
      (s) => s.status === 'rejected' && !(s.reason instanceof DomainError),
    );
    if (failedCommit !== undefined) throw (failedCommit as PromiseRejectedResult).reason;
    // A request under an Idempotency-Key whose first request already placed its orders: the
    // engine writer refused its legs (EngineRuntime's fence); the request answers 409 as a whole.
    const applied = settled.find(
      (s) =>
        s.status === 'rejected' &&
        s.reason instanceof DomainError &&
        s.reason.code === 'IDEMPOTENT_REQUEST_APPLIED',
    );
    if (applied !== undefined) throw (applied as PromiseRejectedResult).reason;
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

  /** Changes nothing: a caller with no trading account yet is quoted as a flat one, none opened. */
  quote(c: Credential, body: PlaceOrderBody): QuoteDto {
    const rt = this.engines.get(c.world);
    checkOrderShape(body);
    const max = this.config.values.orderMaxQuantity;
    if (body.quantity > max) throw quantityLimit(max);
    const r = rt.quote(engineOrder(c, body));
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
    const max = this.config.values.orderMaxQuantity;
    if (body.quantity !== undefined && body.quantity > max) throw quantityLimit(max);
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
    const row = rt.storedOrder(orderId);
    if (row === undefined || row.user_id !== c.userId) {
      throw new DomainError('NOT_FOUND', `No order ${orderId}`, { order_id: orderId });
    }
    // An order never filled has no trades: no query for them.
    return rowToDto(row, c.environment, row.filled_quantity === 0 ? [] : rt.storedTrades(orderId));
  }

  list(c: Credential, q: ListOrdersQueryDto): Page<OrderDto> {
    const rt = this.engines.get(c.world);
    return paginate({
      list: `orders:${c.environment}`,
      keys: ['id'],
      query: q,
      fetch: (after, take) =>
        rt.storedOrders(c.userId, {
          status: q.status,
          marketId: q.market_id,
          beforeId: after?.[0],
          limit: take,
        }),
      keyOf: (r) => [r.id],
      // One trade query for the page, not one per order (none when no order of it filled).
      mapPage: (rows) => {
        const trades = rt.storedTradesOfOrders(
          rows.filter((r) => r.filled_quantity > 0).map((r) => r.id),
        );
        return rows.map((r) => rowToDto(r, c.environment, trades.get(r.id) ?? []));
      },
    });
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
      const row = rt.storedOrder(orderId);
      if (row !== undefined && row.user_id === c.userId && !OPEN_STATUSES.has(row.status)) {
        return new DomainError('ORDER_NOT_OPEN', `The order is no longer open (${row.status})`, {
          order_id: orderId,
        });
      }
    }
    // The engine checked ownership before the market: naming the order's market discloses nothing.
    const marketId =
      f.code === 'MARKET_NOT_OPEN' || f.code === 'INSUFFICIENT_FUNDS'
        ? rt.marketOfOrder(orderId)
        : undefined;
    return fromEngine(f, { orderId, marketId });
  }

  private withStoredFills(rt: EngineRuntime, o: OrderSnapshot, env: Environment): OrderDto {
    // An order never filled has no trades: no query for them.
    const trades = o.filledQuantity === 0 ? [] : rt.storedTrades(o.id);
    return toDto(
      o,
      env,
      trades.map((t) => tradeToFill(t, o.id, o.side)),
    );
  }
}

/** A batch leg's failure, in the error body a single request would have answered. */
function legError(index: number, err: unknown, requestId: string): BatchLegResultDto {
  const mapped = mapError(err, requestId);
  return { index, status: mapped.status, error: mapped.body.error };
}
