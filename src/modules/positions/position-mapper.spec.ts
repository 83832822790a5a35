import { describe, expect, it } from '@jest/globals';
import type { PositionRow } from '../trading/stores/position.store.js';
import { markPrice, positionDto } from './position-mapper.js';

const row = (p: Partial<PositionRow>): PositionRow => ({
  user_id: 'usr_1',
  market_id: 'mkt_1',
  yes_qty: 0,
  no_qty: 0,
  yes_cost: 0,
  no_cost: 0,
  realized_pnl: 0,
  updated_at: '2026-11-22T12:00:00.000Z',
  ...p,
});

describe('markPrice', () => {
  it('is the mid when both sides are quoted, else the last price, else null', () => {
    expect(markPrice({ bestBid: 40, bestAsk: 44, lastPrice: 10 })).toBe(42);
    expect(markPrice({ bestBid: 40, bestAsk: 41, lastPrice: 10 })).toBe(40.5);
    expect(markPrice({ bestBid: 40, bestAsk: null, lastPrice: 47 })).toBe(47);
    expect(markPrice({ bestBid: null, bestAsk: 60, lastPrice: 47 })).toBe(47);
    expect(markPrice({ bestBid: null, bestAsk: null, lastPrice: null })).toBeNull();
    expect(markPrice(undefined)).toBeNull();
  });
});

describe('positionDto', () => {
  it('shows a YES holding marked in YES cents', () => {
    expect(positionDto(row({ yes_qty: 10, yes_cost: 430, realized_pnl: -8 }), 45)).toEqual({
      market_id: 'mkt_1',
      side: 'YES',
      quantity: 10,
      average_price: 43,
      cost_basis_cents: 430,
      realized_pnl_cents: -8,
      unrealized_pnl_cents: 20,
      mark_price: 45,
    });
  });

  it('marks a NO holding at 100 - mark', () => {
    const p = positionDto(row({ no_qty: 4, no_cost: 244 }), 39);
    expect(p).toMatchObject({ side: 'NO', quantity: 4, average_price: 61 });
    expect(p.unrealized_pnl_cents).toBe(4 * 61 - 244);
  });

  it('keeps a fractional average price and rounds the unrealized P&L half up', () => {
    const p = positionDto(row({ yes_qty: 3, yes_cost: 100 }), 33.5);
    expect(p.average_price).toBeCloseTo(33.333, 3);
    // 3 x 33.5 - 100 = 0.5 -> 1
    expect(p.unrealized_pnl_cents).toBe(1);
    // 3 x 32.5 - 99 = -1.5 -> -1
    expect(positionDto(row({ yes_qty: 3, yes_cost: 99 }), 32.5).unrealized_pnl_cents).toBe(-1);
  });

  it('a closed position has no side, no quantity and no unrealized P&L', () => {
    expect(positionDto(row({ realized_pnl: 550 }), 40)).toEqual({
      market_id: 'mkt_1',
      side: null,
      quantity: 0,
      average_price: null,
      cost_basis_cents: 0,
      realized_pnl_cents: 550,
      unrealized_pnl_cents: 0,
      mark_price: 40,
    });
  });

  it('has no unrealized P&L without a mark price', () => {
    expect(positionDto(row({ yes_qty: 1, yes_cost: 50 }), null).unrealized_pnl_cents).toBeNull();
  });
});
