/**
 * A persistence-layer stand-in for tests: it rebuilds the engine state from events alone (as a
 * SQL mirror would) and lists every difference with the engine. This is how the suites prove
 * that the events are sufficient.
 */
import type { EngineEvent } from './events.js';
import { LevelMirror } from './level-mirror.js';
import type { MatchingEngine } from './matching-engine.js';
import type { BookSide, OrderStatus } from './types.js';

interface MirrorOrder {
  accountId: string;
  marketId: string;
  status: OrderStatus;
  price: number | null;
  bookPrice: number | null;
  bookSide: BookSide;
  quantity: number;
  filled: number;
  fillCost: number;
  sequence: number;
}

interface MirrorPosition {
  yes: number;
  no: number;
  yesCost: number;
  noCost: number;
  realizedPnl: number;
}

const isOpen = (s: OrderStatus): boolean => s === 'OPEN' || s === 'PARTIALLY_FILLED';

export class EventMirror {
  readonly orders = new Map<string, MirrorOrder>();
  readonly positions = new Map<string, MirrorPosition>();
  readonly balances = new Map<string, number>();
  readonly levels = new LevelMirror();
  /** Quote holds: id -> account and amount. */
  readonly holds = new Map<string, { accountId: string; amountCents: number }>();
  readonly problems: string[] = [];

  apply(events: readonly EngineEvent[]): void {
    for (const e of events) this.applyEvent(e);
  }

  applyEvent(e: EngineEvent): void {
    switch (e.type) {
      case 'order.accepted': {
        const o = e.order;
        this.orders.set(o.id, {
          accountId: o.accountId,
          marketId: o.marketId,
          status: o.status,
          price: o.price,
          bookPrice: o.bookPrice,
          bookSide: o.bookSide,
          quantity: o.quantity,
          filled: o.filledQuantity,
          fillCost: o.fillCost,
          sequence: o.sequence,
        });
        break;
      }
      case 'order.rested':
        this.order(e.orderId).sequence = e.sequence;
        break;
      case 'order.updated': {
        const o = this.order(e.orderId);
        o.filled = e.filledQuantity;
        o.fillCost = e.fillCost;
        o.status = e.status;
        break;
      }
      case 'order.cancelled':
        this.order(e.orderId).status = 'CANCELLED';
        break;
      case 'order.expired':
        this.order(e.orderId).status = 'EXPIRED';
        break;
      case 'order.amended': {
        const o = this.order(e.orderId);
        o.price = e.price;
        o.bookPrice = e.bookPrice;
        o.quantity = e.quantity;
        o.sequence = e.sequence;
        break;
      }
      case 'position.changed':
        this.positions.set(`${e.accountId}|${e.marketId}`, {
          yes: e.yes,
          no: e.no,
          yesCost: e.yesCost,
          noCost: e.noCost,
          realizedPnl: e.realizedPnl,
        });
        break;
      case 'position.settled':
        this.positions.set(`${e.accountId}|${e.marketId}`, {
          yes: 0,
          no: 0,
          yesCost: 0,
          noCost: 0,
          realizedPnl: e.realizedPnl,
        });
        break;
      case 'balance.changed': {
        const before = this.balances.get(e.accountId) ?? 0;
        if (before + e.delta !== e.balance)
          this.problems.push(`balance event ${e.accountId} inconsistent`);
        this.balances.set(e.accountId, e.balance);
        break;
      }
      case 'account.created':
        this.balances.set(e.accountId, e.balance);
        break;
      case 'account.reset':
        for (const o of this.orders.values()) {
          if (o.accountId === e.accountId && isOpen(o.status)) o.status = 'CANCELLED';
        }
        for (const key of [...this.positions.keys()]) {
          if (key.startsWith(`${e.accountId}|`)) this.positions.delete(key);
        }
        break;
      case 'book.level':
        this.levels.apply(e);
        break;
      case 'hold.placed':
        if (this.holds.has(e.holdId)) this.problems.push(`hold ${e.holdId} placed twice`);
        this.holds.set(e.holdId, { accountId: e.accountId, amountCents: e.amountCents });
        break;
      case 'hold.released':
        if (!this.holds.delete(e.holdId)) this.problems.push(`hold ${e.holdId} released unheld`);
        break;
      case 'trade':
      case 'market.status':
      case 'market.resolved':
        break;
    }
  }

  private order(id: string): MirrorOrder {
    const o = this.orders.get(id);
    if (o === undefined) throw new Error(`event for unknown order ${id}`);
    return o;
  }

  /** Differences between the mirror and the engine. */
  diff(engine: MatchingEngine): string[] {
    const out = [...this.problems];
    const engineOpen = new Set<string>();
    for (const marketId of engine.marketIds()) {
      for (const o of engine.bookOrders(marketId)) {
        engineOpen.add(o.id);
        const m = this.orders.get(o.id);
        if (m === undefined || !isOpen(m.status)) {
          out.push(`order ${o.id} open in engine, ${m?.status ?? 'missing'} in mirror`);
          continue;
        }
        const same =
          m.status === o.status &&
          m.filled === o.filledQuantity &&
          m.quantity === o.quantity &&
          m.price === o.price &&
          m.bookPrice === o.bookPrice &&
          m.sequence === o.sequence &&
          m.fillCost === o.fillCost;
        if (!same) out.push(`order ${o.id} differs: ${JSON.stringify(m)} vs ${JSON.stringify(o)}`);
      }
      for (const p of engine.marketPositions(marketId)) {
        const m = this.positions.get(`${p.accountId}|${marketId}`) ?? {
          yes: 0,
          no: 0,
          yesCost: 0,
          noCost: 0,
          realizedPnl: 0,
        };
        if (
          m.yes !== p.yes ||
          m.no !== p.no ||
          m.yesCost !== p.yesCost ||
          m.noCost !== p.noCost ||
          m.realizedPnl !== p.realizedPnl
        ) {
          out.push(`position ${p.accountId}|${marketId} differs`);
        }
      }
      const depth = engine.depth(marketId, 99)!;
      let n = 0;
      for (const [side, levels] of [
        ['BID', depth.bids],
        ['ASK', depth.asks],
      ] as const) {
        for (const l of levels) {
          n++;
          if (this.levels.quantity(marketId, side, l.price) !== l.quantity) {
            out.push(`level ${marketId} ${side} ${l.price} differs`);
          }
        }
      }
      const mirrored = this.levels.count(marketId);
      if (mirrored !== n)
        out.push(`market ${marketId}: mirror has ${mirrored} levels, engine ${n}`);
    }
    for (const [id, o] of this.orders) {
      if (isOpen(o.status) && !engineOpen.has(id)) out.push(`order ${id} open only in mirror`);
    }
    for (const accountId of engine.accountIds()) {
      if (this.balances.get(accountId) !== engine.balance(accountId)) {
        out.push(`balance ${accountId} differs`);
      }
    }
    const engineHolds = engine.heldQuotes();
    for (const h of engineHolds) {
      const m = this.holds.get(h.holdId);
      if (m?.accountId !== h.accountId || m.amountCents !== h.amountCents) {
        out.push(`hold ${h.holdId} differs`);
      }
    }
    if (engineHolds.length !== this.holds.size) {
      out.push(`mirror has ${this.holds.size} holds, engine ${engineHolds.length}`);
    }
    return out;
  }
}
