import type { Failure, MarketStatus } from '../../engine/index.js';
import { DomainError, validationFailed } from '../../common/errors/domain-error.js';

const MARKET_STATUSES: readonly MarketStatus[] = ['OPEN', 'HALTED', 'CLOSED', 'RESOLVED'];

/**
 * What the caller knows about the command that failed, so the error names it: the market and
 * order ids of an order command; for a money movement (deposit, withdrawal, funding, reset) the
 * amount asked for and the balance available, its errors naming `amount_cents`; for a market
 * resolution, that a market already resolved is a conflict (409), not a closed market.
 */
export interface EngineErrorContext {
  marketId?: string;
  orderId?: string;
  movement?: { requested: number; available: number };
  resolving?: boolean;
}

/**
 * Engine result codes as API errors: the one mapping from the engine's codes to HTTP, used by
 * orders, quotes, RFQ, wallet and sandbox controls alike.
 */
export function fromEngine(f: Failure, ids: EngineErrorContext = {}): DomainError {
  switch (f.code) {
    case 'INSUFFICIENT_FUNDS':
      if (ids.movement !== undefined) return insufficientFunds(ids.movement);
      return new DomainError(
        'INSUFFICIENT_FUNDS',
        f.funds === undefined
          ? `Insufficient available balance: ${f.message}`
          : `Insufficient available balance: ${f.message} (needs ${f.funds.required} cents, ${f.funds.available} available)`,
        {
          market_id: ids.marketId ?? null,
          ...(ids.orderId === undefined ? {} : { order_id: ids.orderId }),
          ...(f.funds === undefined
            ? {}
            : { required_cents: f.funds.required, available_cents: f.funds.available }),
        },
      );
    case 'MARKET_NOT_OPEN':
    case 'MARKET_ALREADY_RESOLVED': {
      // A second resolution is a conflict; an order on a resolved market is refused as on any
      // market not open.
      if (f.code === 'MARKET_ALREADY_RESOLVED' && ids.resolving === true) {
        return alreadyResolved(ids.marketId ?? '');
      }
      // The engine names the market's status in its message (RESOLVED for an already resolved
      // one), so the caller learns why without another request.
      const status =
        f.code === 'MARKET_ALREADY_RESOLVED'
          ? 'RESOLVED'
          : MARKET_STATUSES.find((s) => s === f.message);
      return new DomainError(
        'MARKET_NOT_OPEN',
        status === undefined
          ? 'The market is not open for trading'
          : `The market is ${status}, not OPEN: it takes no orders${status === 'HALTED' ? ' until it reopens' : ''}`,
        { market_id: ids.marketId ?? null, status: status ?? null },
      );
    }
    case 'UNKNOWN_MARKET':
      return new DomainError('NOT_FOUND', `No market ${ids.marketId ?? ''}`.trim(), {
        market_id: ids.marketId ?? null,
      });
    case 'UNKNOWN_ORDER':
      return new DomainError('NOT_FOUND', `No order ${ids.orderId ?? ''}`.trim(), {
        order_id: ids.orderId ?? null,
      });
    case 'ORDER_NOT_OPEN':
      return new DomainError('ORDER_NOT_OPEN', `The order is no longer open (${f.message})`, {
        order_id: ids.orderId ?? null,
      });
    case 'POST_ONLY_WOULD_CROSS':
      return new DomainError(
        'POST_ONLY_WOULD_CROSS',
        'A post-only order would take liquidity; nothing was placed',
      );
    case 'AMEND_NO_CHANGE':
      return new DomainError(
        'AMEND_NO_CHANGE',
        'The amend changes nothing: send a new price or quantity',
      );
    case 'INVALID_ORDER':
    case 'INVALID_AMOUNT':
      return validationFailed([
        { field: ids.movement !== undefined ? 'amount_cents' : 'body', message: f.message },
      ]);
    // Quote holds and crosses (the last three) are the RFQ module's, which maps them itself.
    case 'UNKNOWN_ACCOUNT':
    case 'INVALID_STATE':
    case 'DUPLICATE_ACCOUNT':
    case 'DUPLICATE_MARKET':
    case 'DUPLICATE_ORDER':
    case 'DUPLICATE_HOLD':
    case 'UNKNOWN_HOLD':
    case 'SELF_TRADE':
      return new DomainError('INTERNAL', 'Internal error');
  }
}

/** A money movement asking for more than the available balance. */
export function insufficientFunds(movement: { requested: number; available: number }): DomainError {
  return new DomainError(
    'INSUFFICIENT_FUNDS',
    `Insufficient available balance: ${movement.requested} cents requested, ${movement.available} available`,
    { requested_cents: movement.requested, available_cents: movement.available },
  );
}

/** A second resolution of a market (409); `outcome` when known. */
export function alreadyResolved(marketId: string, outcome?: string | null): DomainError {
  return new DomainError('MARKET_ALREADY_RESOLVED', `Market ${marketId} is already resolved`, {
    market_id: marketId,
    ...(outcome === undefined ? {} : { outcome }),
  });
}
