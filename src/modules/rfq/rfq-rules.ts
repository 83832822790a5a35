import { DomainError } from '../../common/errors/domain-error.js';

/** Open RFQs one user may hold in one world (422 RFQ_LIMIT_REACHED past it). */
export const MAX_OPEN_RFQS = 100;
export const RFQ_EXPIRY = { min: 10, max: 3600, default: 300 } as const;
export const QUOTE_EXPIRY = { min: 1, max: 300, default: 30 } as const;

export type Action = 'BUY' | 'SELL';
export type Side = 'YES' | 'NO';

/** A quote's two sides in YES cents; either may be absent (not both). */
export interface TwoSided {
  bid: number | null;
  ask: number | null;
}

/**
 * The responder's worst-case cash for a quote on `quantity` contracts: if the requester sells
 * YES (or buys NO) the responder buys YES at the bid, `bid * quantity`; if the requester buys YES
 * (or sells NO) the responder sells YES at the ask, which without YES held is buying NO at
 * `100 - ask`, `(100 - ask) * quantity`. Only one side can ever trade (the RFQ fills once), so the
 * larger of the offered sides is held.
 */
export function quoteCollateral(q: TwoSided, quantity: number): number {
  const bidSide = q.bid === null ? 0 : q.bid * quantity;
  const askSide = q.ask === null ? 0 : (100 - q.ask) * quantity;
  return Math.max(bidSide, askSide);
}

/**
 * Which side of the quote an accept takes and the price the requester pays in its own side's
 * cents: BUY YES and SELL NO trade at the ask (SELL NO at 100 - ask), SELL YES and BUY NO at the
 * bid (BUY NO at 100 - bid). A side the quote does not offer is 422 QUOTE_SIDE_NOT_OFFERED.
 */
export function acceptPrice(
  q: TwoSided,
  action: Action,
  side: Side,
): { quoteSide: 'bid' | 'ask'; yesPrice: number; ownPrice: number } {
  const buysYes = (action === 'BUY') === (side === 'YES');
  const quoteSide = buysYes ? 'ask' : 'bid';
  const yesPrice = q[quoteSide];
  if (yesPrice === null) {
    throw new DomainError(
      'QUOTE_SIDE_NOT_OFFERED',
      `The quote has no ${quoteSide}: ${action} ${side} trades at the ${quoteSide}`,
      { side: quoteSide.toUpperCase() },
    );
  }
  return { quoteSide, yesPrice, ownPrice: side === 'YES' ? yesPrice : 100 - yesPrice };
}

/** The house responder's two-way quote around `reference` (YES cents), clamped to 1..99. */
export function houseQuote(reference: number, spread: number): TwoSided {
  let bid = Math.max(1, Math.min(98, Math.round(reference) - spread));
  let ask = Math.min(99, Math.max(2, Math.round(reference) + spread));
  if (bid >= ask) {
    bid = Math.min(bid, 98);
    ask = bid + 1;
  }
  return { bid, ask };
}
