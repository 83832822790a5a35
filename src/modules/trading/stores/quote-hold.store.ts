import {
  runDeferred,
  type SqlConnection,
  type SqlStatement,
} from '../../../common/sql/sql-connection.js';
import type { HoldPlacedEvent, HoldReleasedEvent } from '../../../engine/index.js';
import { iso } from '../../../common/clock/iso.js';

/** A quote hold as stored (`quote_holds`). */
export interface QuoteHoldRow {
  id: string;
  user_id: string;
  market_id: string;
  amount_cents: number;
  created_at: string;
}

/**
 * The engine's quote holds (RFQ collateral) in its database: written from `hold.*` events inside
 * the command's transaction, read back by a restore, so an OPEN quote's collateral is still
 * reserved after a crash.
 */
export class QuoteHoldStore {
  private readonly insert: SqlStatement<[string, string, string, number, string]>;
  private readonly remove: SqlStatement<[string]>;
  private readonly all: SqlStatement<[], QuoteHoldRow>;

  constructor(db: SqlConnection) {
    this.insert = db.prepare(
      'INSERT INTO quote_holds (id, user_id, market_id, amount_cents, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    this.remove = db.prepare('DELETE FROM quote_holds WHERE id = ?');
    this.all = db.prepare('SELECT * FROM quote_holds ORDER BY created_at, id');
  }

  placed(e: HoldPlacedEvent): void {
    runDeferred(this.insert, e.holdId, e.accountId, e.marketId, e.amountCents, iso(e.timestamp));
  }

  released(e: HoldReleasedEvent): void {
    runDeferred(this.remove, e.holdId);
  }

  /** Every hold, oldest first (the order a restore places them in). */
  load(): QuoteHoldRow[] {
    return this.all.all();
  }
}
