import type { Failure, MarketStatus } from '../../engine/index.js';
import { DomainError, validationFailed } from '../../common/errors/domain-error.js';

const MARKET_STATUSES: readonly MarketStatus[] = ['OPEN', 'HALTED', 'CLOSED', 'RESOLVED'];

/** Engine result codes as API errors: the one mapping from the engine's codes to HTTP. */
export function fromEngine(
  f: Failure,
  ids: { marketId?: string; orderId?: string } = {},
): DomainError {
  switch (f.code) {
    case 'INSUFFICIENT_FUNDS':
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
      return validationFailed([{ field: 'body', message: f.message }]);
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
