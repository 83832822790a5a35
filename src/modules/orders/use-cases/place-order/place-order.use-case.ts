import { Injectable } from '@nestjs/common';
import type { Failure, OrderSnapshot, Success } from '../../../../engine/index.js';
import { DomainError } from '../../../../common/errors/domain-error.js';
import type { Credential } from '../../../../common/http/request-context.js';
import { ConfigService } from '../../../../config/config.service.js';
import { fromEngine } from '../../../trading/engine-errors.js';
import { EngineRegistry } from '../../../trading/engine-registry.js';
import type { EngineRuntime } from '../../../trading/engine-runtime.js';
import type { OrderDto } from '../../dto/order.dto.js';
import { fillsFromEvents, toDto } from '../../order-dto.mapper.js';
import type { PlaceOrderBody } from '../../order-schemas.js';
import { PlaceOrderCommand } from './place-order.command.js';

/** What placing one order gave: the engine's result, its events committed. */
export type Placed = Success<{ order: OrderSnapshot }> | Failure;

/**
 * Places an order: the command's own rules, the credential's caps (open orders, client order id),
 * the caller's trading account (opened on a first order, funded on the paper engine), the engine
 * command, and the durable commit of its events (group commit: every order of the same event-loop
 * turn commits in one SQLite transaction) before the answer. A refusal before the engine leaves
 * nothing behind.
 */
@Injectable()
export class PlaceOrderUseCase {
  constructor(
    private readonly engines: EngineRegistry,
    private readonly config: ConfigService,
  ) {}

  /** POST /orders: the order as answered, or the refusal as an API error. */
  async execute(c: Credential, body: PlaceOrderBody): Promise<OrderDto> {
    const r = await this.place(c, body);
    if (!r.ok) throw fromEngine(r, { marketId: body.market_id });
    return toDto(r.order, c.environment, fillsFromEvents(r.order, r.events));
  }

  /**
   * Checks, then runs the engine command now (in arrival order: each order sees the book the ones
   * before it left); the promise settles after the commit. A batch runs its legs through this.
   */
  async place(c: Credential, body: PlaceOrderBody): Promise<Placed> {
    // The checks run before the caller's trading account is opened, so a refused body leaves
    // nothing behind.
    const command = PlaceOrderCommand.create(c, body, this.config.values.orderMaxQuantity);
    const rt = this.engines.get(c.world);
    this.checkCaps(rt, command);
    rt.ensureAccount(c.userId);
    const request = command.engineRequest();
    return rt.runBatched((e) => e.placeOrder(request), c.idempotency);
  }

  /**
   * The open-order cap counts orders that can rest: an order that cannot (MARKET, IOC, FOK) is
   * never refused by it, so a credential at the cap can still trade out of a position. Orders
   * placed with a session token are counted per user, as one credential.
   */
  private checkCaps(rt: EngineRuntime, command: PlaceOrderCommand): void {
    const { credential: c, body } = command;
    const max = this.config.values.maxOpenOrdersPerKey;
    if (command.mayRest && rt.openOrderCount(c.keyId, c.userId) >= max) {
      throw new DomainError(
        'OPEN_ORDERS_LIMIT',
        `${c.keyId === null ? 'Your session orders number' : 'This key has'} ${max} open orders, the most allowed; cancel some first`,
        { limit: max },
      );
    }
    if (body.client_order_id !== undefined) {
      const existing = rt.openOrderWithClientId(c.keyId, c.userId, body.client_order_id);
      if (existing !== undefined) {
        throw new DomainError(
          'DUPLICATE_CLIENT_ORDER_ID',
          `client_order_id ${body.client_order_id} is already used by open order ${existing}`,
          { client_order_id: body.client_order_id, order_id: existing },
        );
      }
    }
  }
}
