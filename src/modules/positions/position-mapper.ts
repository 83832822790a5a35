import type { MarketSummary } from '../../engine/index.js';
import type { PositionRow } from '../trading/stores/position.store.js';
import type { PositionDto } from './dto/position.dto.js';

/**
 * Mark price of a market in YES cents: the mid of the best bid and best ask when both sides are
 * quoted, else the last trade price, else null (no book and never traded).
 */
export function markPrice(
  s: Pick<MarketSummary, 'bestBid' | 'bestAsk' | 'lastPrice'> | undefined,
): number | null {
  if (s === undefined) return null;
  if (s.bestBid !== null && s.bestAsk !== null) return (s.bestBid + s.bestAsk) / 2;
  return s.lastPrice;
}

/** A stored netted position as the API shows it, marked at `mark` (YES cents). */
export function positionDto(
  row: Pick<
    PositionRow,
    'market_id' | 'yes_qty' | 'no_qty' | 'yes_cost' | 'no_cost' | 'realized_pnl'
  >,
  mark: number | null,
): PositionDto {
  const side = row.yes_qty > 0 ? 'YES' : row.no_qty > 0 ? 'NO' : null;
  const quantity = side === 'YES' ? row.yes_qty : side === 'NO' ? row.no_qty : 0;
  const cost = side === 'YES' ? row.yes_cost : side === 'NO' ? row.no_cost : 0;
  let unrealized: number | null = 0;
  if (side !== null) {
    if (mark === null) {
      unrealized = null;
    } else {
      const ownMark = side === 'YES' ? mark : 100 - mark;
      // quantity x ownMark is a multiple of 0.5: round half up to a whole cent.
      unrealized = Math.round(quantity * ownMark - cost);
    }
  }
  return {
    market_id: row.market_id,
    side,
    quantity,
    average_price: quantity > 0 ? cost / quantity : null,
    cost_basis_cents: cost,
    realized_pnl_cents: row.realized_pnl,
    unrealized_pnl_cents: unrealized,
    mark_price: mark,
  };
}
