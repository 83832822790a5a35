/**
 * Paper-engine liquidity: a ladder of house LIMIT GTC quotes around the reference price, placed
 * through the normal engine path so that a moving reference trades with users' resting orders
 * at the users' prices, in time priority. Each ladder slot has a finite size that takers
 * consume and that refills by `refill` contracts per requote (tick), up to `size`.
 */
import type { EngineEvent } from './events.js';
import type { MatchingEngine } from './matching-engine.js';
import type { BookSide } from './types.js';

/** Parameters of the house ladder. */
export interface HouseMarketMakerOptions {
  /** The house account (created and funded by the caller). */
  accountId: string;
  /** Levels per side. Default 5. */
  levels?: number;
  /** Distance in cents of the best house bid/ask from the reference. Default 1. */
  spread?: number;
  /** Contracts per level when full. Default 100. */
  size?: number;
  /** Contracts a consumed level regains per tick. Default 25. */
  refill?: number;
  /** Tag on house orders. Default 'house'. */
  tag?: string;
}

interface Slot {
  orderId: string | null;
  /** Contracts this slot may quote now. */
  available: number;
  /** Filled quantity of the current order already subtracted from `available`. */
  seenFilled: number;
}

interface Ladder {
  readonly bids: Slot[];
  readonly asks: Slot[];
}

/** Result of one requote. */
export interface RequoteResult {
  readonly events: EngineEvent[];
  /** House orders the engine refused (e.g. INSUFFICIENT_FUNDS), by code. */
  readonly rejected: string[];
}

export class HouseMarketMaker {
  private readonly ladders = new Map<string, Ladder>();
  readonly accountId: string;
  private readonly levels: number;
  private readonly spread: number;
  private readonly size: number;
  private readonly refill: number;
  private readonly tag: string;

  constructor(
    private readonly engine: MatchingEngine,
    options: HouseMarketMakerOptions,
  ) {
    this.accountId = options.accountId;
    this.levels = options.levels ?? 5;
    this.spread = options.spread ?? 1;
    this.size = options.size ?? 100;
    this.refill = options.refill ?? 25;
    this.tag = options.tag ?? 'house';
  }

  /**
   * Re-quotes one market around `reference` (YES cents): accounts for fills since the last
   * requote, refills, cancels house orders whose price or size is stale (reason REQUOTE) and
   * places the new ones nearest-first. Unchanged quotes keep their place in the queue. A market
   * that is not OPEN gets its quotes withdrawn.
   */
  requote(marketId: string, reference: number): RequoteResult {
    const events: EngineEvent[] = [];
    const rejected: string[] = [];
    if (this.engine.marketSummary(marketId)?.status !== 'OPEN') {
      this.withdrawInto(marketId, events);
      return { events, rejected };
    }
    const ladder = this.ladder(marketId);
    const pending: [Slot, BookSide, number][] = [];
    for (const side of ['BID', 'ASK'] as const) {
      const slots = side === 'BID' ? ladder.bids : ladder.asks;
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[i];
        const order = slot.orderId === null ? undefined : this.engine.getOrder(slot.orderId);
        if (order !== undefined) {
          slot.available -= order.filledQuantity - slot.seenFilled;
          slot.seenFilled = order.filledQuantity;
        }
        slot.available = Math.min(this.size, slot.available + this.refill);
        const price = side === 'BID' ? reference - this.spread - i : reference + this.spread + i;
        const open = order !== undefined && order.remainingQuantity > 0;
        if (open && order.bookPrice === price && order.remainingQuantity === slot.available) {
          continue;
        }
        if (open) this.cancel(slot, events);
        slot.orderId = null;
        if (price >= 1 && price <= 99 && slot.available > 0) pending.push([slot, side, price]);
      }
    }
    // Place only after every stale quote is gone, so the new ladder never meets the old one.
    pending.sort((a, b) => distance(a, reference) - distance(b, reference));
    for (const [slot, side, price] of pending) {
      const r = this.engine.placeOrder({
        accountId: this.accountId,
        marketId,
        action: side === 'BID' ? 'BUY' : 'SELL',
        side: 'YES',
        type: 'LIMIT',
        price,
        quantity: slot.available,
        timeInForce: 'GTC',
        tag: this.tag,
      });
      if (!r.ok) {
        rejected.push(r.code);
        continue;
      }
      for (const e of r.events) events.push(e);
      slot.orderId = r.order.id;
      slot.seenFilled = 0;
    }
    return { events, rejected };
  }

  /** Requotes every market in `references` (e.g. the output of PriceFeed.tick()). */
  tick(references: ReadonlyMap<string, number>): RequoteResult {
    const events: EngineEvent[] = [];
    const rejected: string[] = [];
    for (const [marketId, reference] of references) {
      const r = this.requote(marketId, reference);
      for (const e of r.events) events.push(e);
      for (const c of r.rejected) rejected.push(c);
    }
    return { events, rejected };
  }

  /** Cancels the house quotes of a market and forgets its ladder (sizes start full again). */
  withdraw(marketId: string): EngineEvent[] {
    const events: EngineEvent[] = [];
    this.withdrawInto(marketId, events);
    return events;
  }

  /** Contracts each slot may quote now, nearest level first. */
  capacity(marketId: string): { bids: number[]; asks: number[] } | undefined {
    const l = this.ladders.get(marketId);
    if (l === undefined) return undefined;
    return { bids: l.bids.map((s) => s.available), asks: l.asks.map((s) => s.available) };
  }

  private withdrawInto(marketId: string, events: EngineEvent[]): void {
    const ladder = this.ladders.get(marketId);
    if (ladder === undefined) return;
    for (const slot of [...ladder.bids, ...ladder.asks]) this.cancel(slot, events);
    this.ladders.delete(marketId);
  }

  private cancel(slot: Slot, events: EngineEvent[]): void {
    if (slot.orderId === null) return;
    const r = this.engine.cancelOrder(slot.orderId, this.accountId, 'REQUOTE');
    if (r.ok) for (const e of r.events) events.push(e);
    slot.orderId = null;
  }

  private ladder(marketId: string): Ladder {
    let l = this.ladders.get(marketId);
    if (l === undefined) {
      const make = (): Slot[] =>
        Array.from({ length: this.levels }, () => ({
          orderId: null,
          available: this.size - this.refill,
          seenFilled: 0,
        }));
      l = { bids: make(), asks: make() };
      this.ladders.set(marketId, l);
    }
    return l;
  }
}

function distance(entry: [Slot, BookSide, number], reference: number): number {
  return Math.abs(entry[2] - reference);
}
