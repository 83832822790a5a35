import {
  runDeferred,
  type SqlConnection,
  type SqlStatement,
} from '../../../common/sql/sql-connection.js';
import type {
  AccountResetEvent,
  BalanceChangedEvent,
  BalanceReason,
} from '../../../engine/index.js';
import { iso } from '../../../common/clock/iso.js';
import type { Environment } from '../../../common/environment.js';
import { StatementCache } from '../../../common/sql/statement-cache.js';

/** A ledger row as stored (`ledger`). */
export interface LedgerRow {
  id: string;
  user_id: string;
  type: 'DEPOSIT' | 'WITHDRAWAL' | 'TRADE' | 'SETTLEMENT' | 'FUNDING' | 'RESET';
  amount_cents: number;
  balance_after_cents: number;
  reference_id: string | null;
  created_at: string;
}

/** An account's balance as stored (`accounts`). */
export interface AccountRow {
  user_id: string;
  balance_cents: number;
}

/**
 * The ledger type of a balance change, as the ledger and the wallet stream both name it: money
 * added on the paper engine (starting balance, sandbox funding) is FUNDING, not a DEPOSIT of
 * real money.
 */
export function ledgerTypeOf(reason: BalanceReason, environment: Environment): LedgerRow['type'] {
  return reason === 'DEPOSIT' && environment === 'test' ? 'FUNDING' : reason;
}

/**
 * Accounts and their ledger in one engine database: balances and one ledger row per money
 * movement, mirrored from balance events inside the command's transaction; read by the wallet
 * API and a restore. The house account has a balance but no ledger.
 */
export class LedgerStore {
  private readonly upsertAccount: SqlStatement<[string, number, string, string]>;
  private readonly insertLedger: SqlStatement<
    [string, string, LedgerRow['type'], number, number, string | null, string]
  >;
  private readonly deleteOfUser: SqlStatement<[string]>;
  private readonly byId: SqlStatement<[string], LedgerRow>;
  private readonly allAccounts: SqlStatement<[], AccountRow>;
  private readonly pages: StatementCache;
  /** The last ledger row {@link balanceChanged} wrote (see {@link lastRowOf}). */
  private last: { userId: string; id: string } | null = null;

  constructor(
    db: SqlConnection,
    private readonly environment: Environment,
    /** The house account, which keeps no ledger. */
    private readonly houseAccountId: string,
    private readonly ledgerId: () => string,
  ) {
    this.pages = new StatementCache(db);
    this.upsertAccount = db.prepare(`INSERT INTO accounts (user_id, balance_cents, created_at,
      updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET
      balance_cents = excluded.balance_cents, updated_at = excluded.updated_at`);
    this.insertLedger = db.prepare(`INSERT INTO ledger (id, user_id, type, amount_cents,
      balance_after_cents, reference_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`);
    this.deleteOfUser = db.prepare('DELETE FROM ledger WHERE user_id = ?');
    this.byId = db.prepare('SELECT * FROM ledger WHERE id = ?');
    this.allAccounts = db.prepare('SELECT user_id, balance_cents FROM accounts');
  }

  accountCreated(accountId: string, balance: number, at: string): void {
    runDeferred(this.upsertAccount, accountId, balance, at, at);
  }

  /**
   * A balance change: the account's balance and its ledger row. `writeAccount` false leaves the
   * balance to a later change of the same batch; `createdAt`: the account row's insert time if
   * it does not exist yet (the batch's first change of it), else this change's.
   */
  balanceChanged(e: BalanceChangedEvent, writeAccount = true, createdAt?: string): void {
    const at = iso(e.timestamp);
    // A reset's RESET row is written by accountReset (which clears the ledger first), so the
    // balance.changed that follows it must not add a second one; its balance goes with the
    // reset's other deferred writes.
    if (e.reason === 'RESET') {
      runDeferred(this.upsertAccount, e.accountId, e.balance, at, at);
      return;
    }
    if (writeAccount) runDeferred(this.upsertAccount, e.accountId, e.balance, createdAt ?? at, at);
    if (e.accountId === this.houseAccountId) return;
    const id = this.ledgerId();
    this.last = { userId: e.accountId, id };
    const type = ledgerTypeOf(e.reason, this.environment);
    runDeferred(this.insertLedger, id, e.accountId, type, e.delta, e.balance, e.referenceId, at);
  }

  /**
   * A sandbox reset: the ledger starts again with one RESET row of the new balance. Deferred
   * writes (runDeferred): on PostgreSQL they go with the reset's next round trip.
   */
  accountReset(e: AccountResetEvent): void {
    const at = iso(e.timestamp);
    runDeferred(this.deleteOfUser, e.accountId);
    runDeferred(this.upsertAccount, e.accountId, e.balance, at, at);
    runDeferred(
      this.insertLedger,
      this.ledgerId(),
      e.accountId,
      'RESET',
      e.balance,
      e.balance,
      null,
      at,
    );
  }

  /** Every account's balance (a restore). */
  accounts(): AccountRow[] {
    return this.allAccounts.all();
  }

  /**
   * The ledger row the last committed command wrote for this user (a deposit, withdrawal or
   * funding answers with its own row), or undefined if that command wrote none for them. Read it
   * right after the command: the next one replaces it. Found by id, not as the user's newest row,
   * which a wall clock that went back would get wrong.
   */
  lastRowOf(userId: string): LedgerRow | undefined {
    const last = this.last;
    if (last === null || last.userId !== userId) return undefined;
    return this.byId.get(last.id);
  }

  /**
   * A user's ledger, newest first, keyset on id (ids sort by creation), optional type filter;
   * each filter combination is one statement, a range scan of the index (user_id, id).
   */
  page(
    userId: string,
    f: { beforeId?: string; type?: LedgerRow['type']; limit: number },
  ): LedgerRow[] {
    const key = `${f.beforeId !== undefined}${f.type !== undefined}`;
    const stmt = this.pages.get(key, () => {
      const where = ['user_id = @userId'];
      if (f.beforeId !== undefined) where.push('id < @beforeId');
      if (f.type !== undefined) where.push('type = @type');
      return `SELECT * FROM ledger WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT @limit`;
    });
    return stmt.all({ userId, ...f }) as LedgerRow[];
  }
}
