import {
  runDeferred,
  type SqlConnection,
  type SqlStatement,
} from '../../../common/sql/sql-connection.js';
import type { MarketResolvedEvent, TradeEvent } from '../../../engine/index.js';
import { iso } from '../../../common/clock/iso.js';

/** The trading state of a market as stored (`markets`; the rest of the row is the catalogue's). */
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

const COLUMNS = 'id, status, outcome, reference_price, last_price, volume, close_time';

/**
 * The trading state of the markets in one engine database: status, outcome, last price, volume
 * and the paper feed's reference price, mirrored from market and trade events inside the
 * command's transaction; read by a restore and the market rules.
 */
export class MarketStore {
  private readonly lastTrade: SqlStatement<[number, number, string, string]>;
  private readonly status: SqlStatement<[string, string, string]>;
  private readonly resolved: SqlStatement<[string, string, string, string]>;
  private readonly reference: SqlStatement<[number, string, string]>;
  private readonly every: SqlStatement<[], MarketRow>;
  private readonly one: SqlStatement<[string], MarketRow>;

  constructor(private readonly db: SqlConnection) {
    this.lastTrade = db.prepare(
      'UPDATE markets SET last_price = ?, volume = volume + ?, updated_at = ? WHERE id = ?',
    );
    this.status = db.prepare('UPDATE markets SET status = ?, updated_at = ? WHERE id = ?');
    // resolved_at stays as it was set: the 30-day comment rule counts from it.
    this.resolved = db.prepare(
      `UPDATE markets SET status = 'RESOLVED', outcome = ?, resolved_at = ?, updated_at = ? WHERE id = ?`,
    );
    this.reference = db.prepare(
      'UPDATE markets SET reference_price = ?, updated_at = ? WHERE id = ?',
    );
    this.every = db.prepare(`SELECT ${COLUMNS} FROM markets ORDER BY id`);
    this.one = db.prepare(`SELECT ${COLUMNS} FROM markets WHERE id = ?`);
  }

  /** The market's last trade; `volume`: the quantity of every trade it stands for (a batch's). */
  traded(e: TradeEvent, volume = e.quantity): void {
    runDeferred(this.lastTrade, e.price, volume, iso(e.timestamp), e.marketId);
  }

  statusChanged(marketId: string, status: string, at: string): void {
    runDeferred(this.status, status, at, marketId);
  }

  resolvedAs(e: MarketResolvedEvent): void {
    const at = iso(e.timestamp);
    runDeferred(this.resolved, e.outcome, at, at, e.marketId);
  }

  /**
   * Stores the paper feed's reference prices, so a restart quotes where the market was (a sandbox
   * price move included), not at a stale last trade.
   */
  saveReferences(refs: ReadonlyMap<string, number>, now: number): void {
    if (refs.size === 0) return;
    const at = iso(now);
    this.db.transaction(() => {
      for (const [id, price] of refs) runDeferred(this.reference, price, at, id);
    })();
  }

  /** Every market (a restore). */
  all(): MarketRow[] {
    return this.every.all();
  }

  market(id: string): MarketRow | undefined {
    return this.one.get(id);
  }
}
