/**
 * Request for quote, the engine side: quote holds and the quote cross (issue 20).
 *
 * A responder's binding quote sets collateral aside with {@link EngineRfq.placeHold}: the hold
 * counts in the account's reserved total (so its available balance drops) until
 * {@link EngineRfq.releaseHold}, a replacing hold, the cross of its quote or an account reset
 * ends it. Accepting a quote is ONE command, {@link EngineRfq.crossQuote}: the requester (taker)
 * and the responder (maker) each get an order of type RFQ, FILLED at once at the quote's price,
 * and one trade (`source: 'RFQ'`) is booked between them with the very netting of a book fill
 * (`applyFill`: positions net, pairs redeem, money is conserved). The resting book is not
 * touched; the market's last price and volume move as for any trade. Events:
 *
 * - placeHold: [`hold.released` REPLACED of `replacesHoldId`], `hold.placed`.
 * - releaseHold: `hold.released` RELEASED.
 * - crossQuote: [`hold.released` CROSSED of `releaseHoldId`], `order.accepted` (taker),
 *   `order.accepted` (maker), `trade`, then per side as a book fill does: maker `order.updated`
 *   (FILLED), `position.changed`, `balance.changed` (TRADE, referenceId = trade id); taker the
 *   same three.
 *
 * The taker's price is in the taker's own side terms; the maker's order is the YES-terms mirror
 * (SELL YES at the ask when the taker bids, BUY YES at the bid when the taker asks). The RFQ
 * module maps the quote to the taker's terms: BUY YES at ask, SELL NO at 100 - ask, SELL YES at
 * bid, BUY NO at 100 - bid. Failures change nothing. The runtime side (persistence in one
 * transaction with the module's own rows, restore at boot) is `EngineRuntime.holdQuote`,
 * `releaseQuote` and `crossQuote`; /work/tasks/rfq-interface.md holds the whole interface.
 *
 * The interface the RFQ module calls (EngineRuntime of the world, `engines.get(world)`):
 *
 * ```ts
 * holdQuote(req: HoldRequest, inCommit?: InCommit): Success<{ hold: HoldSnapshot }> | Failure;
 * releaseQuote(holdId: string, inCommit?: InCommit): Success<{ hold: HoldSnapshot }> | Failure;
 * crossQuote(req: CrossQuoteRequest, inCommit?: InCommit, idempotency?: IdempotencyScope):
 *   Success<CrossQuoteResult> | Failure;   // { takerOrder, makerOrder, trade }
 * heldQuotes(accountId?: string): HoldSnapshot[];
 * type InCommit = (db: Database) => void;  // runs inside the transaction of the events
 * ```
 *
 * Each settles the waiting group-commit batch, runs the command, and commits its events with
 * `inCommit` in one SQLite transaction before returning; if `inCommit` throws, all of it rolls
 * back, the engine is rebuilt from the database and the error is rethrown. Holds are stored in
 * `quote_holds` and restored at boot. Afterwards: `GET /orders` shows the two orders with
 * `type: "RFQ"`, `rfq_id`, `time_in_force: "FOK"`, FILLED; `GET /markets/{id}/trades` and the
 * realtime `trades:<market_id>` show the trade with `source: "RFQ"` (book trades `"BOOK"`); the
 * private `orders`/`fills` channels and `order.*` webhooks behave as for a book fill. An account
 * reset releases the account's holds (ACCOUNT_RESET); market resolution does not.
 *
 * A collaborator of the {@link MatchingEngine} façade: the state it adds is the {@link HoldBook}
 * (shared with the admin, whose account reset releases holds) and the `rfqId` of an order.
 */
import type { EngineLedger } from './engine-ledger.js';
import { fail, isAmount, isPrice, isQuantity, shortOf, type MarketState } from './engine-state.js';
import { balanceChanged, orderUpdated, positionChanged } from './event-builders.js';
import type { EngineEvent, TradeEvent } from './events.js';
import { QuoteHold, type HoldBook, type HoldSnapshot } from './holds.js';
import { AccountState, applyFill, computeReserve, PositionState } from './ledger.js';
import { bookPriceOf, bookSideOf, type BookOrder } from './order.js';
import type { OrderRegistry } from './order-registry.js';
import type {
  CrossQuoteRequest,
  CrossQuoteResult,
  HoldRequest,
  RestoreHoldInput,
} from './rfq-types.js';
import {
  MAX_ORDER_QUANTITY,
  type Action,
  type BookSide,
  type Clock,
  type IdGenerator,
  type Result,
  type Side,
} from './types.js';

export type { CrossQuoteRequest, CrossQuoteResult, HoldRequest, RestoreHoldInput };

const isId = (s: unknown): s is string => typeof s === 'string' && s.length > 0;

export class EngineRfq {
  constructor(
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly markets: Map<string, MarketState>,
    private readonly ledger: EngineLedger,
    private readonly orders: OrderRegistry,
    private readonly holds: HoldBook,
  ) {}

  /** Scratch holdings for the funding check of a cross (never part of the state). */
  private readonly trial = new PositionState(new AccountState(''), '');
  /** Stands for an account with no position in the market (no resting orders). */
  private readonly flat = new PositionState(new AccountState(''), '');

  /**
   * Holds `amountCents` of the account's available balance for a quote. Codes: INVALID_STATE
   * (empty id), INVALID_AMOUNT, UNKNOWN_MARKET, MARKET_NOT_OPEN, UNKNOWN_ACCOUNT,
   * DUPLICATE_HOLD, UNKNOWN_HOLD (`replacesHoldId` not the account's), INSUFFICIENT_FUNDS (the
   * amount exceeds the available balance plus the replaced hold).
   */
  placeHold(req: HoldRequest): Result<{ hold: HoldSnapshot }> {
    if (!isId(req.holdId)) return fail('INVALID_STATE', 'holdId must be a non-empty string');
    if (!isAmount(req.amountCents)) {
      return fail('INVALID_AMOUNT', 'amountCents must be a positive safe integer');
    }
    const market = this.markets.get(req.marketId);
    if (market === undefined) return fail('UNKNOWN_MARKET', req.marketId);
    if (market.status !== 'OPEN') return fail('MARKET_NOT_OPEN', market.status);
    const account = this.ledger.accounts.get(req.accountId);
    if (account === undefined) return fail('UNKNOWN_ACCOUNT', req.accountId);
    if (this.holds.has(req.holdId)) return fail('DUPLICATE_HOLD', req.holdId);
    let replaced: QuoteHold | null = null;
    if (req.replacesHoldId !== undefined && req.replacesHoldId !== null) {
      const h = this.holds.get(req.replacesHoldId);
      if (h === undefined || h.account !== account) {
        return fail('UNKNOWN_HOLD', req.replacesHoldId);
      }
      replaced = h;
    }
    const available = account.balance - account.reserved + (replaced?.amount ?? 0);
    if (req.amountCents > available) {
      return shortOf('quote hold exceeds available balance', req.amountCents, available);
    }
    const now = this.clock.now();
    const events: EngineEvent[] = [];
    if (replaced !== null) this.holds.release(replaced, 'REPLACED', now, events);
    const hold = new QuoteHold(req.holdId, account, market.id, req.amountCents, now);
    this.holds.add(hold);
    events.push({
      type: 'hold.placed',
      holdId: hold.id,
      accountId: account.id,
      marketId: market.id,
      amountCents: hold.amount,
      timestamp: now,
    });
    return { ok: true, events, hold: hold.snapshot() };
  }

  /**
   * Releases a hold (quote withdrawn, expired, cancelled). `accountId`, when given, must own it.
   * Codes: UNKNOWN_HOLD.
   */
  releaseHold(holdId: string, accountId?: string): Result<{ hold: HoldSnapshot }> {
    const hold = this.holds.get(holdId);
    if (hold === undefined || (accountId !== undefined && hold.account.id !== accountId)) {
      return fail('UNKNOWN_HOLD', holdId);
    }
    const events: EngineEvent[] = [];
    const snapshot = hold.snapshot();
    this.holds.release(hold, 'RELEASED', this.clock.now(), events);
    return { ok: true, events, hold: snapshot };
  }

  /** The holds of an account (or every hold), in placement order. */
  heldQuotes(accountId?: string): HoldSnapshot[] {
    const out: HoldSnapshot[] = [];
    for (const h of this.holds.values()) {
      if (accountId === undefined || h.account.id === accountId) out.push(h.snapshot());
    }
    return out;
  }

  /** Sum of the account's quote holds, cents (part of its reserved amount). */
  held(accountId: string): number {
    return this.holds.heldBy(accountId);
  }

  /**
   * Restores a persisted hold (no events, no funding check: an underfunded account shows in
   * completeRestore). Codes: INVALID_STATE (empty id), INVALID_AMOUNT, UNKNOWN_ACCOUNT,
   * DUPLICATE_HOLD.
   */
  restoreHold(input: RestoreHoldInput): Result {
    if (!isId(input.holdId)) return fail('INVALID_STATE', 'holdId must be non-empty');
    if (!isAmount(input.amountCents)) return fail('INVALID_AMOUNT', 'bad amountCents');
    const account = this.ledger.accounts.get(input.accountId);
    if (account === undefined) return fail('UNKNOWN_ACCOUNT', input.accountId);
    if (this.holds.has(input.holdId)) return fail('DUPLICATE_HOLD', input.holdId);
    this.holds.add(
      new QuoteHold(input.holdId, account, input.marketId, input.amountCents, input.createdAt),
    );
    return { ok: true, events: [] };
  }

  /**
   * Trades `quantity` between the taker and the maker at the taker's price, off the book, all or
   * nothing (see the file comment). Checks, in order: INVALID_ORDER (action, side, price 1..99,
   * quantity, rfqId), UNKNOWN_MARKET, MARKET_NOT_OPEN, UNKNOWN_ACCOUNT, SELF_TRADE,
   * UNKNOWN_HOLD (`releaseHoldId` not the maker's hold on this market), DUPLICATE_ORDER (given
   * ids), INSUFFICIENT_FUNDS with `party` TAKER or MAKER: each side needs its reserve increase
   * less the fill's cash within its available balance (the maker's includes the released hold),
   * with its holdings netted as for a book fill.
   */
  crossQuote(req: CrossQuoteRequest): Result<CrossQuoteResult> {
    const t = req.taker;
    if (t.action !== 'BUY' && t.action !== 'SELL') {
      return fail('INVALID_ORDER', 'action must be BUY or SELL');
    }
    if (t.side !== 'YES' && t.side !== 'NO') return fail('INVALID_ORDER', 'bad side');
    if (!isPrice(t.price)) return fail('INVALID_ORDER', 'price must be an integer 1..99');
    if (!isQuantity(req.quantity)) {
      return fail('INVALID_ORDER', `quantity must be an integer 1..${MAX_ORDER_QUANTITY}`);
    }
    if (!isId(req.rfqId)) return fail('INVALID_ORDER', 'rfqId must be a non-empty string');
    if (req.tradeId !== undefined && !isId(req.tradeId)) {
      return fail('INVALID_ORDER', 'tradeId must be a non-empty string');
    }
    const market = this.markets.get(req.marketId);
    if (market === undefined) return fail('UNKNOWN_MARKET', req.marketId);
    if (market.status !== 'OPEN') return fail('MARKET_NOT_OPEN', market.status);
    const taker = this.ledger.accounts.get(t.accountId);
    if (taker === undefined) return fail('UNKNOWN_ACCOUNT', t.accountId);
    const maker = this.ledger.accounts.get(req.maker.accountId);
    if (maker === undefined) return fail('UNKNOWN_ACCOUNT', req.maker.accountId);
    if (taker === maker) return fail('SELF_TRADE', 'a quote cannot cross its own account');
    let hold: QuoteHold | null = null;
    if (req.releaseHoldId !== undefined && req.releaseHoldId !== null) {
      const h = this.holds.get(req.releaseHoldId);
      if (h === undefined || h.account !== maker || h.marketId !== market.id) {
        return fail('UNKNOWN_HOLD', req.releaseHoldId);
      }
      hold = h;
    }
    const duplicate = this.duplicateIds(req.takerOrderId, req.makerOrderId);
    if (duplicate !== null) return fail('DUPLICATE_ORDER', duplicate);
    const takerSide = bookSideOf(t.action, t.side);
    const makerSide: BookSide = takerSide === 'BID' ? 'ASK' : 'BID';
    const price = bookPriceOf(t.side, t.price);
    const qty = req.quantity;
    const takerPs = this.ledger.position(taker, market);
    const makerPs = this.ledger.position(maker, market);
    const takerNeeds = this.crossNeeds(takerPs, takerSide, price, qty);
    const takerAvailable = taker.balance - taker.reserved;
    if (takerNeeds > takerAvailable) {
      return shortOf('requester cannot cover the trade', takerNeeds, takerAvailable, 'TAKER');
    }
    const makerNeeds = this.crossNeeds(makerPs, makerSide, price, qty);
    const makerAvailable = maker.balance - maker.reserved + (hold?.amount ?? 0);
    if (makerNeeds > makerAvailable) {
      return shortOf('responder cannot cover the trade', makerNeeds, makerAvailable, 'MAKER');
    }

    const now = this.clock.now();
    const events: EngineEvent[] = [];
    if (hold !== null) this.holds.release(hold, 'CROSSED', now, events);
    const tps = takerPs ?? this.ledger.positionOf(taker, market);
    const mps = makerPs ?? this.ledger.positionOf(maker, market);
    const takerOrder = this.rfqOrder(
      req.takerOrderId,
      tps,
      t.tag,
      t.action,
      t.side,
      t.price,
      qty,
      now,
    );
    // The maker's order is the YES-terms mirror: same YES price, the other book side.
    const makerAction: Action = makerSide === 'BID' ? 'BUY' : 'SELL';
    const makerOrder = this.rfqOrder(
      req.makerOrderId,
      mps,
      req.maker.tag,
      makerAction,
      'YES',
      price,
      qty,
      now,
    );
    takerOrder.rfqId = req.rfqId;
    makerOrder.rfqId = req.rfqId;
    events.push(
      { type: 'order.accepted', order: takerOrder.snapshot() },
      { type: 'order.accepted', order: makerOrder.snapshot() },
    );
    const trade: TradeEvent = {
      type: 'trade',
      source: 'RFQ',
      id: req.tradeId ?? this.ids.next('fil_'),
      marketId: market.id,
      price,
      quantity: qty,
      makerOrderId: makerOrder.id,
      takerOrderId: takerOrder.id,
      makerAccountId: maker.id,
      takerAccountId: taker.id,
      makerSide: 'YES',
      takerSide: t.side,
      takerBookSide: takerSide,
      timestamp: now,
    };
    events.push(trade);
    market.lastPrice = price;
    market.volume += qty;
    // Maker first, then taker, each side's events right after its own booking, as fill() does.
    for (const [order, ps] of [
      [makerOrder, mps],
      [takerOrder, tps],
    ] as const) {
      order.filledQuantity = qty;
      order.fillCost = order.ownPrice(price) * qty;
      order.status = 'FILLED';
      order.updatedAt = now;
      const cash = applyFill(ps, order.bookSide, price, qty);
      this.ledger.markDirty(ps);
      events.push(
        orderUpdated(order),
        positionChanged(ps),
        balanceChanged(ps.account, cash, 'TRADE', trade.id, now),
      );
    }
    this.ledger.flushDirty();
    const result = { takerOrder: takerOrder.snapshot(), makerOrder: makerOrder.snapshot(), trade };
    // Final orders stay readable through getOrder like any other (after the snapshots: retiring
    // may recycle an older order object).
    this.orders.retire(makerOrder);
    this.orders.retire(takerOrder);
    return { ok: true, events, ...result };
  }

  /** The first of the caller's order ids that is taken (or repeated), or null. */
  private duplicateIds(takerId?: string, makerId?: string): string | null {
    for (const id of [takerId, makerId]) {
      if (id === undefined) continue;
      if (!isId(id) || this.orders.find(id) !== undefined) return String(id);
    }
    return takerId !== undefined && takerId === makerId ? takerId : null;
  }

  /** A new RFQ order (FOK: it trades in full at once or not at all), not on the book. */
  private rfqOrder(
    id: string | undefined,
    ps: PositionState,
    tag: string | null | undefined,
    action: Action,
    side: Side,
    price: number,
    qty: number,
    now: number,
  ): BookOrder {
    return this.orders
      .newOrder()
      .init(
        id ?? this.ids.next('ord_'),
        ps,
        tag ?? null,
        null,
        action,
        side,
        'RFQ',
        price,
        bookSideOf(action, side),
        bookPriceOf(side, price),
        qty,
        'FOK',
        false,
        now,
        this.orders.nextSequence(),
      );
  }

  /**
   * What filling `qty` at YES `price` on `side` needs of the account's available balance: its
   * reserve after the fill, less its reserve now, less the fill's cash (negative when it pays).
   * The fill is tried on a scratch copy of the holdings, with the very netting of a book fill.
   */
  private crossNeeds(
    ps: PositionState | undefined,
    side: BookSide,
    price: number,
    qty: number,
  ): number {
    const real = ps ?? this.flat;
    const s = this.trial;
    s.yes = real.yes;
    s.no = real.no;
    s.yesCost = real.yesCost;
    s.noCost = real.noCost;
    s.realizedPnl = 0;
    const cash = applyFill(s, side, price, qty);
    s.account.balance = 0;
    const after = computeReserve(real, s.yes, s.no, null, 0, 0);
    return after - real.reserve - cash;
  }
}
