/**
 * Internal mutable order record. It is its own node in two intrusive doubly linked lists (its
 * price level's FIFO queue and its owner's open-order list) so that cancel is O(1) with no
 * allocation.
 */
import type { PositionState } from './ledger.js';
import { DEFAULT_SELF_TRADE_PREVENTION, type SelfTradePrevention } from './self-trade.js';
import type {
  Action,
  BookSide,
  CancelReason,
  ExpireReason,
  OrderSnapshot,
  OrderStatus,
  OrderType,
  Side,
  TimeInForce,
} from './types.js';

/** YES-terms book side of a user order. */
export function bookSideOf(action: Action, side: Side): BookSide {
  return (action === 'BUY') === (side === 'YES') ? 'BID' : 'ASK';
}

/** YES-terms book price of a price given in the order's own side terms. */
export function bookPriceOf(side: Side, price: number): number {
  return side === 'YES' ? price : 100 - price;
}

/**
 * Instances are recycled by the engine once an order is final and forgotten (see
 * `OrderRegistry.retire`), so nothing outside the engine may keep a reference: callers only ever
 * see {@link OrderSnapshot} copies. Every field is declared here, in one order, so recycled and
 * new instances share one hidden class.
 */
export class BookOrder {
  id = '';
  accountId = '';
  marketId = '';
  owner: PositionState = null as unknown as PositionState;
  tag: string | null = null;
  clientOrderId: string | null = null;
  action: Action = 'BUY';
  side: Side = 'YES';
  type: OrderType = 'LIMIT';
  /** Own-terms price; null for MARKET. Changes on amend. */
  price: number | null = null;
  bookSide: BookSide = 'BID';
  /** YES-terms limit: MARKET orders use 99 (bid) or 1 (ask) so they can walk the whole book. */
  bookPrice = 0;
  quantity = 0;
  timeInForce: TimeInForce = 'GTC';
  postOnly = false;
  /** Set after {@link init} (which resets it to the default), as the restore and place paths do. */
  selfTradePrevention: SelfTradePrevention = DEFAULT_SELF_TRADE_PREVENTION;
  createdAt = 0;
  sequence = 0;
  filledQuantity = 0;
  /** Sum of own-terms fill price x quantity. */
  fillCost = 0;
  status: OrderStatus = 'OPEN';
  /** Why it ended CANCELLED or EXPIRED; null while open and once filled. */
  cancelReason: CancelReason | ExpireReason | null = null;
  updatedAt = 0;
  /** Storage slot in a handle book while resting there (-1 otherwise). */
  handle = -1;
  /** Level FIFO links (object book only). */
  prev: BookOrder | null = null;
  next: BookOrder | null = null;
  /** Owner (account x market) open-order list links. */
  ownerPrev: BookOrder | null = null;
  ownerNext: BookOrder | null = null;
  /** Slot in the engine's {@link OrderIdTable} while findable by id (-1 otherwise). */
  idSlot = -1;
  /** RFQ orders only (set after {@link init}, which clears it). */
  rfqId: string | null = null;

  /** (Re)initialises a new or recycled instance as a fresh OPEN order. */
  init(
    id: string,
    owner: PositionState,
    tag: string | null,
    clientOrderId: string | null,
    action: Action,
    side: Side,
    type: OrderType,
    price: number | null,
    bookSide: BookSide,
    bookPrice: number,
    quantity: number,
    timeInForce: TimeInForce,
    postOnly: boolean,
    createdAt: number,
    sequence: number,
  ): this {
    this.id = id;
    this.accountId = owner.account.id;
    this.marketId = owner.marketId;
    this.owner = owner;
    this.tag = tag;
    this.clientOrderId = clientOrderId;
    this.action = action;
    this.side = side;
    this.type = type;
    this.price = price;
    this.bookSide = bookSide;
    this.bookPrice = bookPrice;
    this.quantity = quantity;
    this.timeInForce = timeInForce;
    this.postOnly = postOnly;
    this.selfTradePrevention = DEFAULT_SELF_TRADE_PREVENTION;
    this.createdAt = createdAt;
    this.sequence = sequence;
    this.filledQuantity = 0;
    this.fillCost = 0;
    this.status = 'OPEN';
    this.cancelReason = null;
    this.updatedAt = createdAt;
    this.handle = -1;
    this.prev = null;
    this.next = null;
    this.ownerPrev = null;
    this.ownerNext = null;
    this.idSlot = -1;
    this.rfqId = null;
    return this;
  }

  get remaining(): number {
    return this.quantity - this.filledQuantity;
  }

  get isOpen(): boolean {
    return this.status === 'OPEN' || this.status === 'PARTIALLY_FILLED';
  }

  /** Own-terms price of a fill at YES price `yesPrice`. */
  ownPrice(yesPrice: number): number {
    return this.side === 'YES' ? yesPrice : 100 - yesPrice;
  }

  averageFillPrice(): number | null {
    return this.filledQuantity === 0 ? null : this.fillCost / this.filledQuantity;
  }

  snapshot(): OrderSnapshot {
    const open = this.isOpen;
    return {
      id: this.id,
      accountId: this.accountId,
      marketId: this.marketId,
      tag: this.tag,
      clientOrderId: this.clientOrderId,
      action: this.action,
      side: this.side,
      type: this.type,
      price: this.price,
      bookSide: this.bookSide,
      bookPrice: this.type === 'MARKET' ? null : this.bookPrice,
      quantity: this.quantity,
      filledQuantity: this.filledQuantity,
      remainingQuantity: open ? this.quantity - this.filledQuantity : 0,
      fillCost: this.fillCost,
      averageFillPrice: this.averageFillPrice(),
      status: this.status,
      timeInForce: this.timeInForce,
      postOnly: this.postOnly,
      selfTradePrevention: this.selfTradePrevention,
      cancelReason: this.cancelReason,
      createdAt: this.createdAt,
      updatedAt: this.updatedAt,
      sequence: this.sequence,
      rfqId: this.rfqId,
    };
  }
}
