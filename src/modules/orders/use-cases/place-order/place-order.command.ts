import type { PlaceOrderRequest, QuoteRequest } from '../../../../engine/index.js';
import { DomainError, validationFailed } from '../../../../common/errors/domain-error.js';
import type { Credential } from '../../../../common/http/request-context.js';
import type { PlaceOrderBody } from '../../order-schemas.js';

/**
 * An order to place, valid once created: the body's schema has run (Fastify, before the
 * controller), and {@link PlaceOrderCommand.create} checks the cross-field rules and the
 * per-order quantity cap, so a command is valid whether it came over HTTP or from a batch leg.
 */
export class PlaceOrderCommand {
  private constructor(
    readonly credential: Credential,
    readonly body: PlaceOrderBody,
  ) {}

  /** 400 VALIDATION_FAILED naming the field, or 422 ORDER_QUANTITY_LIMIT above `maxQuantity`. */
  static create(credential: Credential, body: PlaceOrderBody, maxQuantity: number) {
    checkOrderShape(body);
    if (body.quantity > maxQuantity) throw quantityLimit(maxQuantity);
    return new PlaceOrderCommand(credential, body);
  }

  /** Whether the order can rest on the book (so counts against the open-order cap). */
  get mayRest(): boolean {
    return this.body.type === 'LIMIT' && (this.body.time_in_force ?? 'GTC') === 'GTC';
  }

  /** The engine command: the order, tagged with its key, and a sandbox scenario's fill limit. */
  engineRequest(): PlaceOrderRequest {
    const c = this.credential;
    // engineOrder's object, completed in place: this runs for every order placed, and copying
    // it with spreads cost more than the engine's own checks.
    const request: PlaceOrderRequest = engineOrder(c, this.body);
    request.tag = c.keyId;
    request.clientOrderId = this.body.client_order_id ?? null;
    if (c.scenario !== undefined) request.fillLimit = c.scenario.fillLimit;
    return request;
  }
}

/** The engine's form of an order body (what a quote needs; placing adds tag and client id). */
export function engineOrder(
  c: Credential,
  body: PlaceOrderBody,
): QuoteRequest & { accountId: string } {
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

/** The cross-field rules of an order body (the schema checks each field alone). */
export function checkOrderShape(body: PlaceOrderBody): void {
  if (body.type === 'LIMIT' && body.price === undefined) {
    throw validationFailed([{ field: 'price', message: 'price must be given for a LIMIT order' }]);
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

/** 422 ORDER_QUANTITY_LIMIT: the quantity is above the per-order maximum (ORDER_MAX_QUANTITY). */
export function quantityLimit(max: number): DomainError {
  return new DomainError(
    'ORDER_QUANTITY_LIMIT',
    `quantity is above the per-order maximum of ${max}`,
    { max_quantity: max },
  );
}
