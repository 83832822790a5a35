/**
 * Aggregated book levels rebuilt from `book.level` events alone (each carries the level's new
 * total, 0 = gone): what a reader of the events knows of the books without the orders. Shared by
 * the test mirror (src/engine/testing-mirror.ts) and the cluster followers' read model
 * (src/modules/trading/follower-view.ts).
 */
import type { BookLevelEvent } from './events.js';
import type { BookSide, Depth, DepthLevel } from './types.js';

interface Sides {
  readonly BID: Map<number, number>;
  readonly ASK: Map<number, number>;
}

export class LevelMirror {
  private readonly markets = new Map<string, Sides>();

  /** One `book.level` event: the level's new total. */
  apply(e: Pick<BookLevelEvent, 'marketId' | 'side' | 'price' | 'quantity'>): void {
    this.set(e.marketId, e.side, e.price, e.quantity);
  }

  set(marketId: string, side: BookSide, price: number, quantity: number): void {
    const levels = this.sides(marketId)[side];
    if (quantity === 0) levels.delete(price);
    else levels.set(price, quantity);
  }

  quantity(marketId: string, side: BookSide, price: number): number | undefined {
    return this.markets.get(marketId)?.[side].get(price);
  }

  /** How many non-empty levels a market has (both sides). */
  count(marketId: string): number {
    const m = this.markets.get(marketId);
    return m === undefined ? 0 : m.BID.size + m.ASK.size;
  }

  /** Best price of a side, or null when it is empty. */
  best(marketId: string, side: BookSide): number | null {
    const levels = this.markets.get(marketId)?.[side];
    if (levels === undefined || levels.size === 0) return null;
    let best = side === 'BID' ? -Infinity : Infinity;
    for (const p of levels.keys()) if (side === 'BID' ? p > best : p < best) best = p;
    return best;
  }

  /** At most `levels` levels per side, best first (as the engine's depth). */
  depth(marketId: string, levels: number): Depth {
    return {
      marketId,
      bids: this.side(marketId, 'BID', levels),
      asks: this.side(marketId, 'ASK', levels),
    };
  }

  /** Replaces a market's levels (a snapshot). */
  replace(marketId: string, depth: Pick<Depth, 'bids' | 'asks'>): void {
    const m = this.sides(marketId);
    m.BID.clear();
    m.ASK.clear();
    for (const l of depth.bids) if (l.quantity > 0) m.BID.set(l.price, l.quantity);
    for (const l of depth.asks) if (l.quantity > 0) m.ASK.set(l.price, l.quantity);
  }

  clear(): void {
    this.markets.clear();
  }

  private side(marketId: string, side: BookSide, max: number): DepthLevel[] {
    const levels = this.markets.get(marketId)?.[side];
    if (levels === undefined) return [];
    const out = [...levels].map(([price, quantity]) => ({ price, quantity }));
    out.sort((a, b) => (side === 'BID' ? b.price - a.price : a.price - b.price));
    return out.length > max ? out.slice(0, max) : out;
  }

  private sides(marketId: string): Sides {
    let m = this.markets.get(marketId);
    if (m === undefined) this.markets.set(marketId, (m = { BID: new Map(), ASK: new Map() }));
    return m;
  }
}
