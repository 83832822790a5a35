/**
 * Test support (no test-framework imports, so it also compiles with the benchmark): a rig that
 * wraps an engine, records every event of the commands it runs and checks, as events arrive,
 * the per-order rules that the state invariants cannot see (trade inside the limit, no overfill,
 * FOK all-or-nothing).
 */
import { ManualClock, SequentialIdGenerator } from './clock.js';
import type { EngineEvent } from './events.js';
import { checkInvariants } from './invariants.js';
import { MatchingEngine } from './matching-engine.js';
import { EventMirror } from './testing-mirror.js';
import type { CrossQuoteRequest, CrossQuoteResult, HoldRequest } from './engine-rfq.js';
import type { HoldSnapshot } from './holds.js';
import type {
  Action,
  BookSide,
  OrderSnapshot,
  PlaceOrderRequest,
  Result,
  Side,
  Success,
  TimeInForce,
} from './types.js';

/** Extra order fields for the rig's shorthand. */
export type OrderExtras = Partial<
  Pick<
    PlaceOrderRequest,
    'timeInForce' | 'postOnly' | 'tag' | 'clientOrderId' | 'selfTradePrevention'
  >
>;

interface Tracked {
  quantity: number;
  filled: number;
  bookSide: BookSide;
  limit: number;
  tif: TimeInForce;
}

export class Rig {
  readonly clock = new ManualClock(1_700_000_000_000);
  readonly engine: MatchingEngine;
  readonly events: EngineEvent[] = [];
  readonly problems: string[] = [];
  /** Rebuilt from events only, as a persistence layer would. */
  readonly mirror = new EventMirror();
  private readonly tracked = new Map<string, Tracked>();

  constructor(closedOrderRetention = 1_000_000) {
    this.engine = new MatchingEngine({
      clock: this.clock,
      ids: new SequentialIdGenerator(),
      closedOrderRetention,
    });
  }

  private readonly seen = new WeakSet<object>();

  /** Records a command result's events once (and checks them) and returns the result. */
  record<R extends Result<object>>(r: R): R {
    if (r.ok && !this.seen.has(r)) {
      this.seen.add(r);
      for (const e of r.events) this.observe(e);
    }
    return r;
  }

  /** Records events produced outside a single command result (e.g. by the house maker). */
  recordEvents(events: readonly EngineEvent[]): void {
    for (const e of events) this.observe(e);
  }

  /** Like record, but throws on a failure. */
  ok<T extends object>(r: Result<T>): Success<T> {
    this.record(r);
    if (!r.ok) throw new Error(`expected ok, got ${r.code}: ${r.message}`);
    return r;
  }

  addAccount(id: string, cents: number): void {
    this.ok(this.engine.createAccount(id, cents));
  }

  addMarket(id: string): void {
    this.ok(this.engine.addMarket(id));
  }

  limit(
    accountId: string,
    marketId: string,
    action: Action,
    side: Side,
    price: number,
    quantity: number,
    extras: OrderExtras = {},
  ): Result<{ order: OrderSnapshot }> {
    return this.record(
      this.engine.placeOrder({
        accountId,
        marketId,
        action,
        side,
        type: 'LIMIT',
        price,
        quantity,
        ...extras,
      }),
    );
  }

  marketOrder(
    accountId: string,
    marketId: string,
    action: Action,
    side: Side,
    quantity: number,
    extras: OrderExtras = {},
  ): Result<{ order: OrderSnapshot }> {
    return this.record(
      this.engine.placeOrder({
        accountId,
        marketId,
        action,
        side,
        type: 'MARKET',
        quantity,
        ...extras,
      }),
    );
  }

  /** A quote hold (RFQ), recorded. */
  hold(req: HoldRequest): Result<{ hold: HoldSnapshot }> {
    return this.record(this.engine.placeHold(req));
  }

  /** A quote cross (RFQ), recorded. */
  cross(req: CrossQuoteRequest): Result<CrossQuoteResult> {
    return this.record(this.engine.crossQuote(req));
  }

  /** Order id of a successful placement. */
  id(r: Result<{ order: OrderSnapshot }>): string {
    if (!r.ok) throw new Error(`expected ok, got ${r.code}: ${r.message}`);
    return r.order.id;
  }

  /**
   * Every broken rule: engine invariants, the per-event checks so far, and differences between
   * the engine and a mirror rebuilt from the recorded events alone.
   */
  violations(): string[] {
    const out = [
      ...this.problems,
      ...checkInvariants(this.engine),
      ...this.mirror.diff(this.engine),
    ];
    for (const [id, t] of this.tracked) {
      const o = this.engine.getOrder(id);
      if (o === undefined) continue;
      if (o.filledQuantity !== t.filled)
        out.push(`${id} filled ${o.filledQuantity} != trades ${t.filled}`);
      if (o.filledQuantity > o.quantity) out.push(`${id} overfilled`);
    }
    return out;
  }

  private observe(e: EngineEvent): void {
    this.events.push(e);
    this.mirror.applyEvent(e);
    switch (e.type) {
      case 'order.accepted': {
        const o = e.order;
        this.tracked.set(o.id, {
          quantity: o.quantity,
          filled: 0,
          bookSide: o.bookSide,
          limit: o.bookPrice ?? (o.bookSide === 'BID' ? 99 : 1),
          tif: o.timeInForce,
        });
        break;
      }
      case 'order.amended': {
        const t = this.tracked.get(e.orderId);
        if (t !== undefined) {
          t.limit = e.bookPrice;
          t.quantity = e.quantity;
        }
        break;
      }
      case 'trade':
        // Self-trade prevention: no trade, on the book or by a quote cross, is with oneself.
        if (e.makerAccountId === e.takerAccountId) {
          this.problems.push(`trade ${e.id} has ${e.makerAccountId} on both sides`);
        }
        this.onTrade(e.makerOrderId, e.price, e.quantity);
        this.onTrade(e.takerOrderId, e.price, e.quantity);
        break;
      case 'order.expired': {
        const t = this.tracked.get(e.orderId);
        if (t?.tif === 'FOK' && e.filledQuantity !== 0)
          this.problems.push(`FOK ${e.orderId} partial`);
        break;
      }
      case 'order.rested':
      case 'order.updated':
      case 'order.cancelled':
      case 'position.changed':
      case 'balance.changed':
      case 'book.level':
      case 'account.created':
      case 'account.reset':
      case 'market.status':
      case 'market.resolved':
      case 'position.settled':
      case 'hold.placed':
      case 'hold.released':
        break;
    }
  }

  private onTrade(orderId: string, price: number, qty: number): void {
    const t = this.tracked.get(orderId);
    if (t === undefined) return; // restored order
    t.filled += qty;
    if (t.filled > t.quantity) this.problems.push(`${orderId} filled ${t.filled} > ${t.quantity}`);
    const inside = t.bookSide === 'BID' ? price <= t.limit : price >= t.limit;
    if (!inside) this.problems.push(`${orderId} traded at ${price} outside limit ${t.limit}`);
  }

  /** Events of one type, narrowed. */
  static only<K extends EngineEvent['type']>(
    events: readonly EngineEvent[],
    type: K,
  ): Extract<EngineEvent, { type: K }>[] {
    return events.filter((e): e is Extract<EngineEvent, { type: K }> => e.type === type);
  }
}

/** Standard accounts (alice, bob, carol, dave with 10,000 dollars each) and markets m1, m2. */
export function standardRig(): Rig {
  const rig = new Rig();
  for (const id of ['alice', 'bob', 'carol', 'dave']) rig.addAccount(id, 1_000_000);
  rig.addMarket('m1');
  rig.addMarket('m2');
  return rig;
}
