import type { SqlConnection } from '../../common/sql/sql-connection.js';
import type { BalanceChangedEvent, EngineEvent, TradeEvent } from '../../engine/index.js';
import { LEDGER_ONLY, MARKET_SKIPPED, planBatch, WRITE } from './stores/batch-plan.js';
import { iso } from '../../common/clock/iso.js';
import type { Environment } from '../../common/environment.js';
import { EffectStore } from './stores/effect.store.js';
import { type AccountRow, LedgerStore } from './stores/ledger.store.js';
import { type MarketRow, MarketStore } from './stores/market.store.js';
import { type OrderRow, OrderStore } from './stores/order.store.js';
import { type PositionRow, PositionStore } from './stores/position.store.js';
import { type QuoteHoldRow, QuoteHoldStore } from './stores/quote-hold.store.js';
import { WebhookSpoolStore } from './stores/webhook-spool.store.js';

/** What a restore needs, in the order it needs it. */
export interface RestoreState {
  markets: MarketRow[];
  accounts: AccountRow[];
  positions: PositionRow[];
  openOrders: OrderRow[];
  holds: QuoteHoldRow[];
}

/**
 * One engine database's stores, each owning its table(s) and prepared statements, and the one
 * place that mirrors a command's engine events into them (inside the caller's transaction).
 * TypeORM owns the schema; the stores own the queries, so moving to PostgreSQL later means
 * rewriting the stores.
 */
export class TradingRepository {
  readonly orders: OrderStore;
  readonly ledger: LedgerStore;
  readonly positions: PositionStore;
  readonly markets: MarketStore;
  /** Idempotency-Key effects, recorded with the commands they describe. */
  readonly effects: EffectStore;
  /** RFQ quote holds. */
  readonly holds: QuoteHoldStore;
  /** The webhook spool. */
  readonly webhookSpool: WebhookSpoolStore;

  constructor(
    readonly db: SqlConnection,
    environment: Environment,
    /** The house account: its orders are not stored and it keeps no ledger. */
    private readonly houseAccountId: string,
    ledgerId: () => string,
  ) {
    this.orders = new OrderStore(db, houseAccountId);
    this.ledger = new LedgerStore(db, environment, houseAccountId, ledgerId);
    this.positions = new PositionStore(db);
    this.markets = new MarketStore(db);
    this.effects = new EffectStore(db);
    this.holds = new QuoteHoldStore(db);
    this.webhookSpool = new WebhookSpoolStore(db);
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  /**
   * Mirrors a batch's events into the stores. Call inside {@link transaction}. Writes a later
   * write of the batch supersedes are left out (see stores/batch-plan.ts).
   */
  apply(events: readonly EngineEvent[], now: number): void {
    const at = iso(now);
    if (events.length < 2) {
      for (const e of events) this.applyOne(e, at);
      return;
    }
    const plan = planBatch(events, this.houseAccountId, iso);
    const { action } = plan;
    for (let i = 0; i < events.length; i++) {
      const e = events[i];
      const act = action[i];
      if (act === WRITE) {
        if (e.type === 'order.accepted') {
          this.orders.accepted(plan.finalOrders.get(e.order.id) ?? e.order);
        } else if (e.type === 'trade') {
          this.orders.traded(e);
          this.markets.traded(e, plan.marketVolume.get(e.marketId));
        } else if (e.type === 'balance.changed') {
          this.ledger.balanceChanged(e, true, plan.accountCreatedAt.get(e.accountId));
        } else {
          this.applyOne(e, at);
        }
      } else if (act === LEDGER_ONLY) {
        this.ledger.balanceChanged(e as BalanceChangedEvent, false);
      } else if (act === MARKET_SKIPPED) {
        this.orders.traded(e as TradeEvent);
      }
      // SKIP: a later write of the batch sets the row.
    }
  }

  private applyOne(e: EngineEvent, at: string): void {
    switch (e.type) {
      case 'order.accepted':
        return this.orders.accepted(e.order);
      case 'order.updated':
        return this.orders.updated(e);
      case 'order.cancelled':
      case 'order.expired':
        return this.orders.ended(e);
      case 'order.amended':
        return this.orders.amended(e);
      case 'trade':
        this.orders.traded(e);
        return this.markets.traded(e);
      case 'position.changed':
        return this.positions.changed(e, at);
      case 'position.settled':
        return this.positions.settled(e, at);
      case 'balance.changed':
        return this.ledger.balanceChanged(e);
      case 'account.created':
        return this.ledger.accountCreated(e.accountId, e.balance, at);
      case 'account.reset':
        this.orders.removeOfUser(e.accountId);
        this.positions.removeOfUser(e.accountId);
        return this.ledger.accountReset(e);
      case 'market.status':
        return this.markets.statusChanged(e.marketId, e.status, at);
      case 'market.resolved':
        return this.markets.resolvedAs(e);
      case 'hold.placed':
        return this.holds.placed(e);
      case 'hold.released':
        return this.holds.released(e);
      case 'order.rested':
      case 'book.level':
        return; // derived state: the order row already says OPEN; levels come from the book
    }
  }

  /** What a restore needs, in the order it needs it. */
  loadForRestore(): RestoreState {
    return {
      markets: this.markets.all(),
      accounts: this.ledger.accounts(),
      positions: this.positions.all(),
      openOrders: this.orders.openOrders(),
      holds: this.holds.load(),
    };
  }
}
