import { describe, expect, it } from '@jest/globals';
import { DomainError } from '../../common/errors/domain-error.js';
import { acceptPrice, houseQuote, quoteCollateral } from './rfq-rules.js';

describe('rfq rules', () => {
  it('holds the larger side of a quote: bid * q or (100 - ask) * q', () => {
    expect(quoteCollateral({ bid: 40, ask: 45 }, 10)).toBe(550);
    expect(quoteCollateral({ bid: 70, ask: 75 }, 10)).toBe(700);
    expect(quoteCollateral({ bid: 30, ask: null }, 3)).toBe(90);
    expect(quoteCollateral({ bid: null, ask: 90 }, 3)).toBe(30);
  });

  it('maps the four action/side forms to the ask or the bid, in the requester own cents', () => {
    const q = { bid: 40, ask: 45 };
    expect(acceptPrice(q, 'BUY', 'YES')).toEqual({ quoteSide: 'ask', yesPrice: 45, ownPrice: 45 });
    expect(acceptPrice(q, 'SELL', 'NO')).toEqual({ quoteSide: 'ask', yesPrice: 45, ownPrice: 55 });
    expect(acceptPrice(q, 'SELL', 'YES')).toEqual({ quoteSide: 'bid', yesPrice: 40, ownPrice: 40 });
    expect(acceptPrice(q, 'BUY', 'NO')).toEqual({ quoteSide: 'bid', yesPrice: 40, ownPrice: 60 });
  });

  it('refuses a side the quote lacks with QUOTE_SIDE_NOT_OFFERED', () => {
    expect(() => acceptPrice({ bid: null, ask: 45 }, 'SELL', 'YES')).toThrow(DomainError);
    expect(() => acceptPrice({ bid: 40, ask: null }, 'BUY', 'YES')).toThrow(
      expect.objectContaining({ code: 'QUOTE_SIDE_NOT_OFFERED' }) as never,
    );
  });

  it('quotes the house two-way inside 1..99 with bid < ask', () => {
    expect(houseQuote(50, 4)).toEqual({ bid: 46, ask: 54 });
    expect(houseQuote(2, 4)).toEqual({ bid: 1, ask: 6 });
    expect(houseQuote(99, 4)).toEqual({ bid: 95, ask: 99 });
    for (let r = 1; r <= 99; r++) {
      const q = houseQuote(r, 48);
      expect(q.bid! >= 1 && q.ask! <= 99 && q.bid! < q.ask!).toBe(true);
    }
  });
});
