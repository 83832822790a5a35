import type { Database, Statement } from 'better-sqlite3';
import type {
  BalanceReason,
  EngineEvent,
  OrderSnapshot,
  SelfTradePrevention,
} from '../../engine/index.js';
import { iso } from '../../common/clock/iso.js';
import type { Environment } from '../../common/environment.js';
import { QuoteHoldStore, type QuoteHoldRow } from './quote-hold.store.js';
import { WebhookSpoolStore } from './stores/webhook-spool.store.js';

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

/** Row shapes as stored. */
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

export interface PositionRow {
  user_id: string;
  market_id: string;
  yes_qty: number;
  no_qty: number;
  yes_cost: number;
  no_cost: number;
  realized_pnl: number;
  updated_at: string;
}

export interface LedgerRow {
  id: string;
  user_id: string;
  type: 'DEPOSIT' | 'WITHDRAWAL' | 'TRADE' | 'SETTLEMENT' | 'FUNDING' | 'RESET';
  amount_cents: number;
  balance_after_cents: number;
  reference_id: string | null;
  created_at: string;
}

export interface MarketRow {
  id: string;
  status: 'OPEN' | 'HALTED' | 'CLOSED' | 'RESOLVED';
  outcome: 'YES' | 'NO' | null;
  reference_price: number;
  last_price: number | null;
  volume: number;
  /** ISO time at which trading stops (the market closes). */
  close_time: string;
}

/**
 * The ledger type of a balance change, as the ledger and the wallet stream both name it: money
 * added on the paper engine (starting balance, sandbox funding) is FUNDING, not a DEPOSIT of
 * real money.
 */
export function ledgerTypeOf(reason: BalanceReason, environment: Environment): LedgerRow['type'] {
  return reason === 'DEPOSIT' && environment === 'test' ? 'FUNDING' : reason;
}

/** An Idempotency-Key's effect on an engine: the orders it placed, the ledger references it wrote. */
export interface EffectRecord {
  ownerId: string;
  key: string;
  orderIds: string[];
  referenceIds: string[];
}

/**
 * Reads and clean-up of the engine's `idempotency_effects`, for the Idempotency-Key service,
 * which needs them at boot and after a 5xx but runs no engine. They are written only by
 * {@link TradingRepository.recordEffect}, inside the engine transaction of the effect itself.
 */
export class EffectStore {
  private readonly byKey: Statement;
  private readonly ofOwner: Statement;
  private readonly olderThan: Statement;
  private readonly ofKey: Statement;

  constructor(db: Database) {
    this.byKey = db.prepare(
      'SELECT order_ids, reference_ids FROM idempotency_effects WHERE owner_id = ? AND idem_key = ? AND created_at >= ?',
    );
    this.ofOwner = db.prepare(
      'SELECT DISTINCT idem_key FROM idempotency_effects WHERE owner_id = ? AND created_at >= ?',
    );
    this.olderThan = db.prepare('DELETE FROM idempotency_effects WHERE created_at < ?');
    this.ofKey = db.prepare('DELETE FROM idempotency_effects WHERE owner_id = ? AND idem_key = ?');
  }

  /** Forgets what the key's request did (its answer was forgotten: the key is free again). */
  forgetKey(ownerId: string, key: string): void {
    this.ofKey.run(ownerId, key);
  }

  /** The keys whose requests changed this engine for `ownerId` since `since` (ISO time). */
  keysOf(ownerId: string, since: string): string[] {
    return (this.ofOwner.all(ownerId, since) as { idem_key: string }[]).map((r) => r.idem_key);
  }

  /**
   * What the key's request did since `since` (ISO time, the key's current use: an older effect
   * belongs to an expired earlier use), or null if it changed nothing in this engine.
   */
  effectOf(
    ownerId: string,
    key: string,
    since: string,
  ): { orderIds: string[]; referenceIds: string[] } | null {
    const row = this.byKey.get(ownerId, key, since) as
      { order_ids: string; reference_ids: string } | undefined;
    if (row === undefined) return null;
    return {
      orderIds: JSON.parse(row.order_ids) as string[],
      referenceIds: JSON.parse(row.reference_ids) as string[],
    };
  }

  /** Forgets the effects recorded before `cutoff` (ISO time). */
  forgetBefore(cutoff: string): void {
    this.olderThan.run(cutoff);
  }
}

const OPEN_STATUSES = "('OPEN','PARTIALLY_FILLED')";
/** Every fixed statement of the trading hot path, prepared once per engine database. */
function prepareStatements(db: Database) {
  const p = (sql: string) => db.prepare(sql);
  return {
    // Positional parameters: on the hot path, binding 21 named ones from an object cost more.
    insertOrder:
      p(`INSERT INTO orders (id, user_id, key_id, client_order_id, market_id, action, side, type, price,
      book_side, book_price, quantity, filled_quantity, fill_cost, status, cancel_reason, time_in_force, post_only,
      sequence, created_at, updated_at, rfq_id, self_trade_prevention) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    updateFill: p(
      `UPDATE orders SET filled_quantity = ?, fill_cost = ?, status = ?, updated_at = ? WHERE id = ?`,
    ),
    updateFinal: p(`UPDATE orders SET status = ?, cancel_reason = ?, updated_at = ? WHERE id = ?`),
    updateAmend: p(
      `UPDATE orders SET price = ?, book_price = ?, quantity = ?, sequence = ?, updated_at = ? WHERE id = ?`,
    ),
    insertTrade:
      p(`INSERT INTO trades (id, market_id, price, quantity, maker_order_id, taker_order_id, maker_user_id,
      taker_user_id, taker_book_side, created_at, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    marketTrade: p(
      `UPDATE markets SET last_price = ?, volume = volume + ?, updated_at = ? WHERE id = ?`,
    ),
    upsertPosition:
      p(`INSERT INTO positions (user_id, market_id, yes_qty, no_qty, yes_cost, no_cost, realized_pnl, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, market_id) DO UPDATE SET yes_qty = excluded.yes_qty,
      no_qty = excluded.no_qty, yes_cost = excluded.yes_cost, no_cost = excluded.no_cost,
      realized_pnl = excluded.realized_pnl, updated_at = excluded.updated_at`),
    upsertAccount:
      p(`INSERT INTO accounts (user_id, balance_cents, created_at, updated_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (user_id) DO UPDATE SET balance_cents = excluded.balance_cents, updated_at = excluded.updated_at`),
    insertLedger:
      p(`INSERT INTO ledger (id, user_id, type, amount_cents, balance_after_cents, reference_id, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?)`),
    marketStatus: p(`UPDATE markets SET status = ?, updated_at = ? WHERE id = ?`),
    // resolved_at stays as it was set: the 30-day comment rule counts from it.
    marketResolved: p(
      `UPDATE markets SET status = 'RESOLVED', outcome = ?, resolved_at = ?, updated_at = ? WHERE id = ?`,
    ),
    resetOrders: p(`DELETE FROM orders WHERE user_id = ?`),
    resetPositions: p(`DELETE FROM positions WHERE user_id = ?`),
    resetLedger: p(`DELETE FROM ledger WHERE user_id = ?`),
    orderById: p(`SELECT * FROM orders WHERE id = ?`),
    tradesOfOrder: p(
      `SELECT * FROM trades WHERE maker_order_id = ? OR taker_order_id = ? ORDER BY id`,
    ),
    // Each side through its index; UNION drops a trade met on both sides.
    tradesOfOrders: p(
      `SELECT * FROM trades WHERE maker_order_id IN (SELECT value FROM json_each(@ids))
       UNION SELECT * FROM trades WHERE taker_order_id IN (SELECT value FROM json_each(@ids))
       ORDER BY id`,
    ),
    openOrders: p(`SELECT * FROM orders WHERE status IN ${OPEN_STATUSES} ORDER BY sequence`),
    accounts: p(`SELECT user_id, balance_cents FROM accounts`),
    // Every position, closed ones included, as the engine held them before the restart: a
    // closed position traded again goes on from its realized P&L instead of a fresh 0, and a
    // sandbox reset names every market the account was in.
    positions: p(`SELECT * FROM positions`),
    markets: p(
      `SELECT id, status, outcome, reference_price, last_price, volume, close_time FROM markets ORDER BY id`,
    ),
    market: p(
      `SELECT id, status, outcome, reference_price, last_price, volume, close_time FROM markets WHERE id = ?`,
    ),
    newestOrderId: p(`SELECT id FROM orders WHERE user_id = ? ORDER BY id DESC LIMIT 1`),
    countOrders: p(`SELECT COUNT(*) AS n FROM orders WHERE user_id = ?`),
    tradesOfMarket: p(
      `SELECT * FROM trades WHERE market_id = ? AND (? IS NULL OR id < ?) ORDER BY id DESC LIMIT ?`,
    ),
    saveReference: p(`UPDATE markets SET reference_price = ?, updated_at = ? WHERE id = ?`),
    insertEffect: p(`INSERT INTO idempotency_effects (owner_id, idem_key, order_ids, reference_ids,
      created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (owner_id, idem_key) DO UPDATE SET
      order_ids = excluded.order_ids, reference_ids = excluded.reference_ids,
      created_at = excluded.created_at`),
  };
}

type TradingStatements = ReturnType<typeof prepareStatements>;

/**
 * All SQL of the trading hot path, as prepared better-sqlite3 statements on one engine database:
 * mirroring engine events (inside the caller's transaction), the reads of the trading API, and
 * loading state for a restore. TypeORM owns the schema; this class owns the queries, so moving to
 * PostgreSQL later means rewriting one file.
 */
export class TradingRepository {
  /** The hot path's prepared statements, each a named field (a misspelled one does not compile). */
  private readonly s: TradingStatements;
  /** The house account's orders are not persisted: the house re-quotes after a restart. */
  private readonly skipOrdersOf: string;
  /** Open house orders, so their updates skip the database (they have no rows). */
  private readonly houseOrders = new Set<string>();
  private readonly ledgerId: () => string;
  /** RFQ quote holds (their own table and statements). */
  private readonly holds: QuoteHoldStore;
  /** The webhook spool (its own table and statements). */
  readonly webhookSpool: WebhookSpoolStore;

  constructor(
    readonly db: Database,
    readonly environment: Environment,
    houseAccountId: string,
    ledgerId: () => string,
  ) {
    this.skipOrdersOf = houseAccountId;
    this.ledgerId = ledgerId;
    this.holds = new QuoteHoldStore(db);
    this.webhookSpool = new WebhookSpoolStore(db);
    this.s = prepareStatements(db);
  }

  /**
   * Stores the paper feed's reference prices, so a restart quotes where the market was (a sandbox
   * price move included), not at a stale last trade.
   */
  saveReferences(refs: ReadonlyMap<string, number>, now: number): void {
    if (refs.size === 0) return;
    const at = iso(now);
    this.db.transaction(() => {
      for (const [id, price] of refs) this.s.saveReference.run(price, at, id);
    })();
  }

  /**
   * Records that the request with this Idempotency-Key changed the engine (replacing the record
   * of an expired earlier use of the key). Call inside {@link transaction}, with the effect.
   */
  recordEffect(e: EffectRecord, now: number): void {
    this.s.insertEffect.run(
      e.ownerId,
      e.key,
      JSON.stringify(e.orderIds),
      JSON.stringify(e.referenceIds),
      iso(now),
    );
  }

  /** Mirrors a command's events. Call inside {@link transaction}. */
  apply(events: readonly EngineEvent[], now: number): void {
    const at = iso(now);
    for (const e of events) {
      switch (e.type) {
        case 'order.accepted':
          if (e.order.accountId !== this.skipOrdersOf) this.insertOrder(e.order);
          else this.houseOrders.add(e.order.id);
          break;
        case 'order.updated':
          if (this.houseOrders.has(e.orderId)) {
            if (e.status === 'FILLED') this.houseOrders.delete(e.orderId);
            break;
          }
          this.s.updateFill.run(
            e.filledQuantity,
            e.fillCost,
            e.status,
            iso(e.updatedAt),
            e.orderId,
          );
          break;
        case 'order.cancelled':
          if (this.houseOrders.delete(e.orderId)) break;
          this.s.updateFinal.run('CANCELLED', e.reason, iso(e.updatedAt), e.orderId);
          break;
        case 'order.expired':
          if (this.houseOrders.delete(e.orderId)) break;
          this.s.updateFinal.run('EXPIRED', e.reason, iso(e.updatedAt), e.orderId);
          break;
        case 'order.amended':
          this.s.updateAmend.run(
            e.price,
            e.bookPrice,
            e.quantity,
            e.sequence,
            iso(e.updatedAt),
            e.orderId,
          );
          break;
        case 'trade':
          this.s.insertTrade.run(
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
          this.s.marketTrade.run(e.price, e.quantity, iso(e.timestamp), e.marketId);
          break;
        case 'position.changed':
          this.s.upsertPosition.run(
            e.accountId,
            e.marketId,
            e.yes,
            e.no,
            e.yesCost,
            e.noCost,
            e.realizedPnl,
            at,
          );
          break;
        case 'position.settled':
          this.s.upsertPosition.run(e.accountId, e.marketId, 0, 0, 0, 0, e.realizedPnl, at);
          break;
        case 'balance.changed':
          this.s.upsertAccount.run(e.accountId, e.balance, iso(e.timestamp), iso(e.timestamp));
          // A reset's RESET row is written by 'account.reset' (which clears the ledger first), so
          // the balance.changed that follows it must not add a second one.
          if (e.accountId !== this.skipOrdersOf && e.reason !== 'RESET') {
            const type = ledgerTypeOf(e.reason, this.environment);
            const id = this.ledgerId();
            this.lastLedger = { userId: e.accountId, id };
            this.s.insertLedger.run(
              id,
              e.accountId,
              type,
              e.delta,
              e.balance,
              e.referenceId,
              iso(e.timestamp),
            );
          }
          break;
        case 'account.created':
          this.s.upsertAccount.run(e.accountId, e.balance, at, at);
          break;
        case 'account.reset':
          this.s.resetOrders.run(e.accountId);
          this.s.resetPositions.run(e.accountId);
          this.s.resetLedger.run(e.accountId);
          this.s.upsertAccount.run(e.accountId, e.balance, iso(e.timestamp), iso(e.timestamp));
          this.s.insertLedger.run(
            this.ledgerId(),
            e.accountId,
            'RESET',
            e.balance,
            e.balance,
            null,
            iso(e.timestamp),
          );
          break;
        case 'market.status':
          this.s.marketStatus.run(e.status, at, e.marketId);
          break;
        case 'market.resolved':
          this.s.marketResolved.run(e.outcome, iso(e.timestamp), iso(e.timestamp), e.marketId);
          break;
        case 'hold.placed':
          this.holds.placed(e);
          break;
        case 'hold.released':
          this.holds.released(e);
          break;
        case 'order.rested':
        case 'book.level':
          break; // derived state: the order row already says OPEN; levels come from the book
      }
    }
  }

  /** The last ledger row {@link apply} wrote (see {@link lastLedgerRowOf}). */
  private lastLedger: { userId: string; id: string } | null = null;

  /**
   * The ledger row the last committed command wrote for this user (a deposit, withdrawal or
   * funding answers with its own row), or undefined if that command wrote none for them. Read it
   * right after the command: the next one replaces it. Found by id, not as the user's newest row,
   * which a wall clock that went back would get wrong.
   */
  lastLedgerRowOf(userId: string): LedgerRow | undefined {
    const last = this.lastLedger;
    if (last === null || last.userId !== userId) return undefined;
    return this.read('ledger:by-id', () => 'SELECT * FROM ledger WHERE id = ?').get(last.id) as
      LedgerRow | undefined;
  }

  private insertOrder(o: OrderSnapshot): void {
    this.s.insertOrder.run(
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

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  orderById(id: string): OrderRow | undefined {
    return this.s.orderById.get(id) as OrderRow | undefined;
  }

  tradesOfOrder(id: string): TradeRow[] {
    return this.s.tradesOfOrder.all(id, id) as TradeRow[];
  }

  /**
   * The trades of each of `ids` (as maker or taker) in one query, each order's in id order as
   * {@link tradesOfOrder} gives them; an order without trades maps to [].
   */
  tradesOfOrders(ids: readonly string[]): Map<string, TradeRow[]> {
    const byOrder = new Map<string, TradeRow[]>(ids.map((id) => [id, []]));
    if (ids.length === 0) return byOrder;
    for (const t of this.s.tradesOfOrders.all({ ids: JSON.stringify(ids) }) as TradeRow[]) {
      byOrder.get(t.maker_order_id)?.push(t);
      if (t.taker_order_id !== t.maker_order_id) byOrder.get(t.taker_order_id)?.push(t);
    }
    return byOrder;
  }

  tradesOfMarket(marketId: string, beforeId: string | null, limit: number): TradeRow[] {
    return this.s.tradesOfMarket.all(marketId, beforeId, beforeId, limit) as TradeRow[];
  }

  private readonly listCache = new Map<string, Statement>();

  /**
   * A user's orders, newest first, keyset-paginated on id (ids sort by creation), with optional
   * status and market filters. One prepared statement per filter combination.
   */
  listOrders(
    userId: string,
    f: { status?: string; marketId?: string; beforeId?: string; limit: number },
  ): OrderRow[] {
    const key = `${f.status !== undefined}${f.marketId !== undefined}${f.beforeId !== undefined}`;
    let stmt = this.listCache.get(key);
    if (stmt === undefined) {
      const where = ['user_id = @userId'];
      if (f.status !== undefined) where.push('status = @status');
      if (f.marketId !== undefined) where.push('market_id = @marketId');
      if (f.beforeId !== undefined) where.push('id < @beforeId');
      stmt = this.db.prepare(
        `SELECT * FROM orders WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT @limit`,
      );
      this.listCache.set(key, stmt);
    }
    return stmt.all({ userId, ...f }) as OrderRow[];
  }

  private readonly exportCache = new Map<string, Statement>();

  /** One prepared statement per filter combination of the export (see {@link ExportFilter}). */
  private exportStatement(what: 'rows' | 'count', f: ExportFilter): Statement {
    const key = `${what}${f.status !== undefined}${f.marketId !== undefined}${f.from !== undefined}${f.to !== undefined}`;
    let stmt = this.exportCache.get(key);
    if (stmt === undefined) {
      const where = ['user_id = @userId', 'id <= @throughId'];
      if (f.status !== undefined) where.push('status = @status');
      if (f.marketId !== undefined) where.push('market_id = @marketId');
      if (f.from !== undefined) where.push('created_at >= @from');
      if (f.to !== undefined) where.push('created_at < @to');
      stmt = this.db.prepare(
        what === 'rows'
          ? `SELECT * FROM orders WHERE ${where.join(' AND ')} AND id > @afterId ORDER BY id LIMIT @limit`
          : `SELECT COUNT(*) AS n FROM orders WHERE ${where.join(' AND ')}`,
      );
      this.exportCache.set(key, stmt);
    }
    return stmt;
  }

  /** The user's newest order id, or null: the end of an export started now. */
  newestOrderId(userId: string): string | null {
    const row = this.s.newestOrderId.get(userId) as { id: string } | undefined;
    return row?.id ?? null;
  }

  /** The export's orders in id order after `afterId`, a chunk at a time. */
  exportChunk(f: ExportFilter, afterId: string, limit: number): OrderRow[] {
    return this.exportStatement('rows', f).all({ ...f, afterId, limit }) as OrderRow[];
  }

  countOrders(userId: string): number {
    return (this.s.countOrders.get(userId) as { n: number }).n;
  }

  /** How many orders the export holds. */
  countExport(f: ExportFilter): number {
    return (this.exportStatement('count', f).get({ ...f }) as { n: number }).n;
  }

  market(id: string): MarketRow | undefined {
    return this.s.market.get(id) as MarketRow | undefined;
  }

  /** What a restore needs, in the order it needs it. */
  loadForRestore(): {
    markets: MarketRow[];
    accounts: { user_id: string; balance_cents: number }[];
    positions: PositionRow[];
    openOrders: OrderRow[];
    holds: QuoteHoldRow[];
  } {
    // The rebuilt engine re-quotes the house from scratch: its old order ids are gone.
    this.houseOrders.clear();
    return {
      markets: this.s.markets.all() as MarketRow[],
      accounts: this.s.accounts.all() as { user_id: string; balance_cents: number }[],
      positions: this.s.positions.all() as PositionRow[],
      openOrders: this.s.openOrders.all() as OrderRow[],
      holds: this.holds.load(),
    };
  }

  // Wallet, positions and market reads (GET /transactions/cursor, /positions/cursor, ...). Each
  // filter combination is one prepared statement, prepared on first use and kept; every query
  // is a range scan of an index: ledger (user_id, id), positions (user_id, market_id).
  private readonly readCache = new Map<string, Statement>();

  private read(key: string, sql: () => string): Statement {
    let stmt = this.readCache.get(key);
    if (stmt === undefined) {
      stmt = this.db.prepare(sql());
      this.readCache.set(key, stmt);
    }
    return stmt;
  }

  /** A user's ledger, newest first, keyset on id (ids sort by creation), optional type filter. */
  ledgerPage(
    userId: string,
    f: { beforeId?: string; type?: LedgerRow['type']; limit: number },
  ): LedgerRow[] {
    const key = `ledger:${f.beforeId !== undefined}${f.type !== undefined}`;
    const stmt = this.read(key, () => {
      const where = ['user_id = @userId'];
      if (f.beforeId !== undefined) where.push('id < @beforeId');
      if (f.type !== undefined) where.push('type = @type');
      return `SELECT * FROM ledger WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT @limit`;
    });
    return stmt.all({ userId, ...f }) as LedgerRow[];
  }

  /** A user's positions by market id after `afterMarketId`; flat ones only when asked. */
  positionsPage(
    userId: string,
    f: { afterMarketId?: string; includeFlat: boolean; limit: number },
  ): PositionRow[] {
    const key = `positions:${f.afterMarketId !== undefined}${f.includeFlat}`;
    const stmt = this.read(key, () => {
      const where = ['user_id = @userId'];
      if (f.afterMarketId !== undefined) where.push('market_id > @afterMarketId');
      if (!f.includeFlat) where.push('(yes_qty > 0 OR no_qty > 0)');
      return `SELECT * FROM positions WHERE ${where.join(' AND ')} ORDER BY market_id LIMIT @limit`;
    });
    return stmt.all({
      userId,
      afterMarketId: f.afterMarketId,
      limit: f.limit,
    }) as PositionRow[];
  }
}
