/**
 * Cluster mode: what an instance that does not write a world shows of it. The realtime fan-out
 * is the only reader there (every request of the world is forwarded to its writer), and it reads
 * four things: book depth (orderbook snapshots), market summaries (ticker, mark prices, whether a
 * market exists), market ids, and accounts (the reserved figure of wallet messages). This view
 * holds exactly those, kept current from the writer's committed batches as they arrive over the
 * shared stream, with no database read: levels from `book.level` events, market status from
 * `market.status`/`market.resolved`, and what no event carries (accounts' reserved amounts, a
 * market's volume) from the figures the writer adds to each batch ({@link followerExtras}).
 * After a break in the stream, a writer rebuild or a new writer term it is rebuilt once from the
 * database ({@link FollowerView.fromEngine}), then the writer's {@link bookSnapshot} (which holds
 * the house's quotes, stored nowhere) replaces its books at that point of the stream.
 */
import type { EngineEvent, MatchingEngine } from '../../engine/index.js';
import { LevelMirror } from '../../engine/level-mirror.js';
import type {
  AccountSnapshot,
  Depth,
  MarketStatus,
  MarketSummary,
  Outcome,
} from '../../engine/index.js';
import type { BookSnapshot, CommittedEvents, FollowerExtras } from './event-bus.js';

/** What the realtime fan-out reads of a world's state. */
export type FanOutReads = Pick<
  MatchingEngine,
  'depth' | 'marketSummary' | 'marketIds' | 'getAccount'
>;

interface MarketFigures {
  status: MarketStatus;
  outcome: Outcome | null;
  /** 0: no trade yet (as the engine keeps it). */
  lastPrice: number;
  volume: number;
  orphanYes: number;
  orphanNo: number;
}

/**
 * The writer's side: the figures a follower needs beside `events` (committed on `engine`, which
 * now holds the state after them). Accounts named by the events (but `skipAccount`, the house,
 * which no message shows) get [balance, reserved]; markets that traded [last price, volume].
 */
export function followerExtras(
  engine: Pick<MatchingEngine, 'getAccount' | 'marketSummary'>,
  events: readonly EngineEvent[],
  term: number,
  skipAccount: string,
): FollowerExtras {
  const ids = new Set<string>();
  const traded = new Set<string>();
  for (const e of events) {
    switch (e.type) {
      case 'order.accepted':
        ids.add(e.order.accountId);
        break;
      case 'trade':
        ids.add(e.makerAccountId);
        ids.add(e.takerAccountId);
        traded.add(e.marketId);
        break;
      case 'order.updated':
      case 'order.cancelled':
      case 'order.expired':
      case 'order.amended':
      case 'position.changed':
      case 'position.settled':
      case 'balance.changed':
      case 'account.created':
      case 'account.reset':
      case 'hold.placed':
      case 'hold.released':
        ids.add(e.accountId);
        break;
      default:
        break;
    }
  }
  const out: FollowerExtras = { term };
  ids.delete(skipAccount);
  if (ids.size > 0) {
    const accounts: Record<string, [number, number]> = {};
    for (const id of ids) {
      const a = engine.getAccount(id);
      if (a !== undefined) accounts[id] = [a.balance, a.reserved];
    }
    out.accounts = accounts;
  }
  if (traded.size > 0) {
    const markets: Record<string, [number, number]> = {};
    for (const id of traded) {
      const s = engine.marketSummary(id);
      if (s !== undefined) markets[id] = [s.lastPrice ?? 0, s.volume];
    }
    out.markets = markets;
  }
  return out;
}

/** The writer's side: every market's levels and figures now (see {@link FollowerView.replaceBook}). */
export function bookSnapshot(engine: FanOutReads): BookSnapshot {
  const out: BookSnapshot = {};
  for (const id of engine.marketIds()) {
    const s = engine.marketSummary(id)!;
    const d = engine.depth(id, 99)!;
    out[id] = {
      status: s.status,
      outcome: s.outcome,
      lastPrice: s.lastPrice,
      volume: s.volume,
      orphanYes: s.orphanYes,
      orphanNo: s.orphanNo,
      bids: d.bids.map((l) => [l.price, l.quantity]),
      asks: d.asks.map((l) => [l.price, l.quantity]),
    };
  }
  return out;
}

export class FollowerView implements FanOutReads {
  private readonly levels = new LevelMirror();
  private readonly markets = new Map<string, MarketFigures>();
  private readonly accounts = new Map<string, { balance: number; reserved: number }>();
  /** The writer term of the batches applied; null: none applied since the view was built. */
  term: number | null = null;

  /** The view of a whole engine (one restored from the database: no house quotes). */
  static fromEngine(engine: FanOutReads & Pick<MatchingEngine, 'accountIds'>): FollowerView {
    const view = new FollowerView();
    view.replaceBook(bookSnapshot(engine));
    for (const id of engine.accountIds()) {
      const a = engine.getAccount(id)!;
      view.accounts.set(id, { balance: a.balance, reserved: a.reserved });
    }
    return view;
  }

  /** One committed batch of the writer, in stream order. */
  apply(batch: Pick<CommittedEvents, 'events' | 'follow'>): void {
    for (const e of batch.events) {
      switch (e.type) {
        case 'book.level':
          this.levels.apply(e);
          break;
        case 'market.status': {
          const m = this.markets.get(e.marketId);
          if (m === undefined) this.markets.set(e.marketId, newMarket(e.status));
          else m.status = e.status;
          break;
        }
        case 'market.resolved': {
          const m = this.markets.get(e.marketId);
          if (m !== undefined) {
            m.status = 'RESOLVED';
            m.outcome = e.outcome;
          }
          break;
        }
        case 'trade': {
          // The writer's figures below say the same; without them (an older writer) this holds.
          const m = this.markets.get(e.marketId);
          if (m !== undefined) {
            m.lastPrice = e.price;
            m.volume += e.quantity;
          }
          break;
        }
        case 'account.created':
          this.accounts.set(e.accountId, { balance: e.balance, reserved: 0 });
          break;
        case 'balance.changed': {
          const a = this.accounts.get(e.accountId);
          if (a === undefined) this.accounts.set(e.accountId, { balance: e.balance, reserved: 0 });
          else a.balance = e.balance;
          break;
        }
        default:
          break;
      }
    }
    const extras = batch.follow;
    if (extras === undefined) return;
    this.term = extras.term;
    for (const [id, [balance, reserved]] of Object.entries(extras.accounts ?? {})) {
      this.accounts.set(id, { balance, reserved });
    }
    for (const [id, [lastPrice, volume]] of Object.entries(extras.markets ?? {})) {
      const m = this.markets.get(id);
      if (m !== undefined) {
        m.lastPrice = lastPrice;
        m.volume = volume;
      }
    }
    if (extras.book !== undefined) this.replaceBook(extras.book);
  }

  /** Every market's levels and figures replaced by the writer's at one point of the stream. */
  replaceBook(book: BookSnapshot): void {
    this.levels.clear();
    for (const [id, m] of Object.entries(book)) {
      this.markets.set(id, {
        status: m.status,
        outcome: m.outcome,
        lastPrice: m.lastPrice ?? 0,
        volume: m.volume,
        orphanYes: m.orphanYes,
        orphanNo: m.orphanNo,
      });
      this.levels.replace(id, {
        bids: m.bids.map(([price, quantity]) => ({ price, quantity })),
        asks: m.asks.map(([price, quantity]) => ({ price, quantity })),
      });
    }
  }

  depth(marketId: string, levels = 10): Depth | undefined {
    if (!this.markets.has(marketId)) return undefined;
    return this.levels.depth(marketId, levels);
  }

  marketSummary(marketId: string): MarketSummary | undefined {
    const m = this.markets.get(marketId);
    if (m === undefined) return undefined;
    return {
      marketId,
      status: m.status,
      outcome: m.outcome,
      bestBid: this.levels.best(marketId, 'BID'),
      bestAsk: this.levels.best(marketId, 'ASK'),
      lastPrice: m.lastPrice === 0 ? null : m.lastPrice,
      volume: m.volume,
      orphanYes: m.orphanYes,
      orphanNo: m.orphanNo,
    };
  }

  marketIds(): string[] {
    return [...this.markets.keys()];
  }

  getAccount(accountId: string): AccountSnapshot | undefined {
    const a = this.accounts.get(accountId);
    if (a === undefined) return undefined;
    return {
      accountId,
      balance: a.balance,
      reserved: a.reserved,
      available: a.balance - a.reserved,
    };
  }
}

function newMarket(status: MarketStatus): MarketFigures {
  return { status, outcome: null, lastPrice: 0, volume: 0, orphanYes: 0, orphanNo: 0 };
}
