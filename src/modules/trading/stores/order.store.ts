import {
  runDeferred,
  type SqlConnection,
  type SqlStatement,
} from '../../../common/sql/sql-connection.js';
import type {
  OrderAmendedEvent,
  OrderCancelledEvent,
  OrderExpiredEvent,
  OrderSnapshot,
  OrderUpdatedEvent,
  SelfTradePrevention,
  TradeEvent,
} from '../../../engine/index.js';
import { iso } from '../../../common/clock/iso.js';
import { StatementCache } from '../../../common/sql/statement-cache.js';

/** An order as stored (`orders`). */
export interface OrderRow {
  id: string;
  user_id: string;
  key_id: string | null;
  client_order_id: string | null;
  market_id: string;
  action: 'BUY' | 'SELL';
  side: 'YES' | 'NO';
  type: 'LIMIT' | 'MARKET' | 'RFQ';
  price: number | null;
  book_side: 'BID' | 'ASK';
  book_price: number | null;
  quantity: number;
  filled_quantity: number;
  fill_cost: number;
  status: 'OPEN' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELLED' | 'EXPIRED';
  cancel_reason: string | null;
  time_in_force: 'GTC' | 'IOC' | 'FOK';
  post_only: number;
  /** CANCEL_TAKER, CANCEL_MAKER or CANCEL_BOTH. */
  self_trade_prevention: SelfTradePrevention;
  sequence: number;
  created_at: string;
  updated_at: string;
  /** RFQ orders: the request for quote they traded under. */
  rfq_id: string | null;
}

/** A trade as stored (`trades`). */
export interface TradeRow {
  id: string;
  market_id: string;
  price: number;
  quantity: number;
  maker_order_id: string;
  taker_order_id: string;
  maker_user_id: string;
  taker_user_id: string;
  taker_book_side: 'BID' | 'ASK';
  created_at: string;
  /** BOOK, or RFQ for a quote cross. */
  source: 'BOOK' | 'RFQ';
}

/**
 * What an order export holds: one user's orders up to the newest one when it started (orders
 * placed while it streams are not in it), optionally by status, market and creation time
 * (`from` inclusive, `to` exclusive; ISO 8601 UTC, as created_at is stored).
 */
export interface ExportFilter {
  userId: string;
  throughId: string;
  status?: string;
  marketId?: string;
  from?: string;
  to?: string;
}

/** A page of a user's orders: optional filters, keyset on id. */
export interface OrderPageFilter {
  status?: string;
  marketId?: string;
  beforeId?: string;
  limit: number;
}

type OrderInsert = [
  id: string,
  userId: string,
  keyId: string | null,
  clientOrderId: string | null,
  marketId: string,
  action: string,
  side: string,
  type: string,
  price: number | null,
  bookSide: string,
  bookPrice: number | null,
  quantity: number,
  filledQuantity: number,
  fillCost: number,
  status: string,
  cancelReason: string | null,
  timeInForce: string,
  postOnly: number,
  sequence: number,
  createdAt: string,
  updatedAt: string,
  rfqId: string | null,
  selfTradePrevention: string,
];

type TradeInsert = [
  id: string,
  marketId: string,
  price: number,
  quantity: number,
  makerOrderId: string,
  takerOrderId: string,
  makerUserId: string,
  takerUserId: string,
  takerBookSide: string,
  createdAt: string,
  source: string,
];

const OPEN_STATUSES = "('OPEN','PARTIALLY_FILLED')";

/**
 * Orders and their trades in one engine database: mirrored from the engine's order and trade
 * events inside the command's transaction, read by the orders API, exports and a restore. The
 * house account's orders are not stored (the house re-quotes after a restart).
 */
export class OrderStore {
  // Positional parameters: on the hot path, binding 23 named ones from an object cost more.
  private readonly insertOrder: SqlStatement<OrderInsert>;
  private readonly updateFill: SqlStatement<[number, number, string, string, string]>;
  private readonly updateFinal: SqlStatement<[string, string, string, string]>;
  private readonly updateAmend: SqlStatement<[number, number, number, number, string, string]>;
  private readonly insertTrade: SqlStatement<TradeInsert>;
  private readonly deleteOfUser: SqlStatement<[string]>;
  private readonly byId: SqlStatement<[string], OrderRow>;
  private readonly tradesOfOne: SqlStatement<[string, string], TradeRow>;
  private readonly tradesOfMany: SqlStatement<[{ ids: string }], TradeRow>;
  private readonly tradesOfMarketPage: SqlStatement<
    [string, string | null, string | null, number],
    TradeRow
  >;
  private readonly open: SqlStatement<[], OrderRow>;
  private readonly newest: SqlStatement<[string], { id: string }>;
  private readonly count: SqlStatement<[string], { n: number }>;
  /** Open house orders, so their updates skip the database (they have no rows). */
  private readonly houseOrders = new Set<string>();
  private readonly lists: StatementCache;

  constructor(
    db: SqlConnection,
    /** The house account, whose orders are not stored. */
    private readonly houseAccountId: string,
  ) {
    this.lists = new StatementCache(db);
    this.insertOrder = db.prepare(`INSERT INTO orders (id, user_id, key_id, client_order_id,
      market_id, action, side, type, price, book_side, book_price, quantity, filled_quantity,
      fill_cost, status, cancel_reason, time_in_force, post_only, sequence, created_at, updated_at,
      rfq_id, self_trade_prevention)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.updateFill = db.prepare(
      'UPDATE orders SET filled_quantity = ?, fill_cost = ?, status = ?, updated_at = ? WHERE id = ?',
    );
    this.updateFinal = db.prepare(
      'UPDATE orders SET status = ?, cancel_reason = ?, updated_at = ? WHERE id = ?',
    );
    this.updateAmend = db.prepare(
      'UPDATE orders SET price = ?, book_price = ?, quantity = ?, sequence = ?, updated_at = ? WHERE id = ?',
    );
    this.insertTrade = db.prepare(`INSERT INTO trades (id, market_id, price, quantity,
      maker_order_id, taker_order_id, maker_user_id, taker_user_id, taker_book_side, created_at,
      source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.deleteOfUser = db.prepare('DELETE FROM orders WHERE user_id = ?');
    this.byId = db.prepare('SELECT * FROM orders WHERE id = ?');
    this.tradesOfOne = db.prepare(
      'SELECT * FROM trades WHERE maker_order_id = ? OR taker_order_id = ? ORDER BY id',
    );
    // Each side through its index; UNION drops a trade met on both sides.
    this.tradesOfMany = db.prepare(
      `SELECT * FROM trades WHERE maker_order_id IN (SELECT value FROM json_each(@ids))
       UNION SELECT * FROM trades WHERE taker_order_id IN (SELECT value FROM json_each(@ids))
       ORDER BY id`,
    );
    this.tradesOfMarketPage = db.prepare(
      'SELECT * FROM trades WHERE market_id = ? AND (CAST(? AS TEXT) IS NULL OR id < ?) ORDER BY id DESC LIMIT ?',
    );
    this.open = db.prepare(
      `SELECT * FROM orders WHERE status IN ${OPEN_STATUSES} ORDER BY sequence`,
    );
    this.newest = db.prepare('SELECT id FROM orders WHERE user_id = ? ORDER BY id DESC LIMIT 1');
    this.count = db.prepare('SELECT COUNT(*) AS n FROM orders WHERE user_id = ?');
  }

  accepted(o: OrderSnapshot): void {
    if (o.accountId === this.houseAccountId) {
      this.houseOrders.add(o.id);
      return;
    }
    runDeferred(
      this.insertOrder,
      o.id,
      o.accountId,
      o.tag,
      o.clientOrderId,
      o.marketId,
      o.action,
      o.side,
      o.type,
      o.price,
      o.bookSide,
      o.bookPrice,
      o.quantity,
      o.filledQuantity,
      o.fillCost,
      o.status,
      o.cancelReason,
      o.timeInForce,
      o.postOnly ? 1 : 0,
      o.sequence,
      iso(o.createdAt),
      iso(o.updatedAt),
      o.rfqId,
      o.selfTradePrevention,
    );
  }

  updated(e: OrderUpdatedEvent): void {
    if (this.houseOrders.has(e.orderId)) {
      if (e.status === 'FILLED') this.houseOrders.delete(e.orderId);
      return;
    }
    runDeferred(
      this.updateFill,
      e.filledQuantity,
      e.fillCost,
      e.status,
      iso(e.updatedAt),
      e.orderId,
    );
  }

  /** A cancelled or expired order's final state. */
  ended(e: OrderCancelledEvent | OrderExpiredEvent): void {
    if (this.houseOrders.delete(e.orderId)) return;
    const status = e.type === 'order.cancelled' ? 'CANCELLED' : 'EXPIRED';
    runDeferred(this.updateFinal, status, e.reason, iso(e.updatedAt), e.orderId);
  }

  amended(e: OrderAmendedEvent): void {
    runDeferred(
      this.updateAmend,
      e.price,
      e.bookPrice,
      e.quantity,
      e.sequence,
      iso(e.updatedAt),
      e.orderId,
    );
  }

  traded(e: TradeEvent): void {
    runDeferred(
      this.insertTrade,
      e.id,
      e.marketId,
      e.price,
      e.quantity,
      e.makerOrderId,
      e.takerOrderId,
      e.makerAccountId,
      e.takerAccountId,
      e.takerBookSide,
      iso(e.timestamp),
      e.source,
    );
  }

  /**
   * A sandbox reset: the user's orders are gone. Deferred (runDeferred): on PostgreSQL the
   * reset's writes go to the server together, one round trip, not one each.
   */
  removeOfUser(userId: string): void {
    runDeferred(this.deleteOfUser, userId);
  }

  /** The open orders a restore rests again, in book sequence. */
  openOrders(): OrderRow[] {
    // The rebuilt engine re-quotes the house from scratch: its old order ids are gone.
    this.houseOrders.clear();
    return this.open.all();
  }

  orderById(id: string): OrderRow | undefined {
    return this.byId.get(id);
  }

  tradesOfOrder(id: string): TradeRow[] {
    return this.tradesOfOne.all(id, id);
  }

  /**
   * The trades of each of `ids` (as maker or taker) in one query, each order's in id order as
   * {@link tradesOfOrder} gives them; an order without trades maps to [].
   */
  tradesOfOrders(ids: readonly string[]): Map<string, TradeRow[]> {
    const byOrder = new Map<string, TradeRow[]>(ids.map((id) => [id, []]));
    if (ids.length === 0) return byOrder;
    for (const t of this.tradesOfMany.all({ ids: JSON.stringify(ids) })) {
      byOrder.get(t.maker_order_id)?.push(t);
      if (t.taker_order_id !== t.maker_order_id) byOrder.get(t.taker_order_id)?.push(t);
    }
    return byOrder;
  }

  /** A market's trades, newest first, keyset on id. */
  tradesOfMarket(marketId: string, beforeId: string | null, limit: number): TradeRow[] {
    return this.tradesOfMarketPage.all(marketId, beforeId, beforeId, limit);
  }

  /**
   * A user's orders, newest first, keyset-paginated on id (ids sort by creation), with optional
   * status and market filters. One prepared statement per filter combination.
   */
  listOrders(userId: string, f: OrderPageFilter): OrderRow[] {
    const key = `list${f.status !== undefined}${f.marketId !== undefined}${f.beforeId !== undefined}`;
    const stmt = this.lists.get(key, () => {
      const where = ['user_id = @userId'];
      if (f.status !== undefined) where.push('status = @status');
      if (f.marketId !== undefined) where.push('market_id = @marketId');
      if (f.beforeId !== undefined) where.push('id < @beforeId');
      return `SELECT * FROM orders WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT @limit`;
    });
    return stmt.all({ userId, ...f }) as OrderRow[];
  }

  /** One prepared statement per filter combination of the export (see {@link ExportFilter}). */
  private exportStatement(what: 'rows' | 'count', f: ExportFilter): SqlStatement {
    const key = `${what}${f.status !== undefined}${f.marketId !== undefined}${f.from !== undefined}${f.to !== undefined}`;
    return this.lists.get(key, () => {
      const where = ['user_id = @userId', 'id <= @throughId'];
      if (f.status !== undefined) where.push('status = @status');
      if (f.marketId !== undefined) where.push('market_id = @marketId');
      if (f.from !== undefined) where.push('created_at >= @from');
      if (f.to !== undefined) where.push('created_at < @to');
      return what === 'rows'
        ? `SELECT * FROM orders WHERE ${where.join(' AND ')} AND id > @afterId ORDER BY id LIMIT @limit`
        : `SELECT COUNT(*) AS n FROM orders WHERE ${where.join(' AND ')}`;
    });
  }

  /** The user's newest order id, or null: the end of an export started now. */
  newestOrderId(userId: string): string | null {
    return this.newest.get(userId)?.id ?? null;
  }

  /** The export's orders in id order after `afterId`, a chunk at a time. */
  exportChunk(f: ExportFilter, afterId: string, limit: number): OrderRow[] {
    return this.exportStatement('rows', f).all({ ...f, afterId, limit }) as OrderRow[];
  }

  /** How many orders the export holds. */
  countExport(f: ExportFilter): number {
    return (this.exportStatement('count', f).get({ ...f }) as { n: number }).n;
  }

  countOrders(userId: string): number {
    return this.count.get(userId)!.n;
  }
}
