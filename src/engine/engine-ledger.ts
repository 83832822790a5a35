/**
 * The engine's ledger: accounts by id, the money that entered or left from outside (for the
 * conservation invariant), and the reservations of the positions a command touched, refreshed
 * once per command. The arithmetic of netting and reserves is in ledger.ts; this is the state
 * around it.
 */
import type { MarketState } from './engine-state.js';
import { shortOf } from './engine-state.js';
import { AccountState, PositionState, refreshReserve } from './ledger.js';
import { PositionIndex } from './position-index.js';
import type { AccountSnapshot, Failure } from './types.js';

/** Totals of money that entered or left the engine from outside, integer cents. */
export interface LedgerTotals {
  readonly deposited: number;
  readonly withdrawn: number;
  /** Restored opening balances, resets and forfeited orphan payouts. */
  readonly adjusted: number;
}

export class EngineLedger {
  readonly accounts = new Map<string, AccountState>();
  private readonly index = new PositionIndex();
  deposited = 0;
  withdrawn = 0;
  adjusted = 0;
  /** Bumped per command so positions are marked stale at most once per command. */
  private epoch = 0;
  private readonly dirty: PositionState[] = [];
  private dirtyCount = 0;

  account(id: string): AccountState | undefined {
    return this.accounts.get(id);
  }

  /** A new account, numbered in creation order. */
  open(id: string): AccountState {
    const account = new AccountState(id, this.accounts.size);
    this.accounts.set(id, account);
    return account;
  }

  /** The (account, market) position state, if the account ever touched the market. */
  position(account: AccountState, market: MarketState): PositionState | undefined {
    return this.index.get(account.index, market.index);
  }

  /** Gets or creates the (account, market) position state. */
  positionOf(account: AccountState, market: MarketState): PositionState {
    return this.index.get(account.index, market.index) ?? this.createPosition(account, market);
  }

  /**
   * Creates the position of an account in a market it has none in (the caller just looked, as
   * placeOrder does): one probe of the index instead of a second lookup.
   */
  createPosition(account: AccountState, market: MarketState): PositionState {
    const ps = new PositionState(account, market.id);
    account.positions.push(ps);
    market.positions.push(ps);
    this.index.add(account.index, market.index, ps);
    return ps;
  }

  /** Forgets the position (an account reset). */
  dropPosition(account: AccountState, market: MarketState): void {
    const ps = this.index.get(account.index, market.index);
    if (ps === undefined) return;
    this.index.delete(account.index, market.index);
    market.positions.splice(market.positions.indexOf(ps), 1);
  }

  /** The position's reserve is stale: it is recomputed at the end of the command. */
  markDirty(ps: PositionState): void {
    if (ps.dirtyEpoch !== this.epoch) {
      ps.dirtyEpoch = this.epoch;
      this.dirty[this.dirtyCount++] = ps;
    }
  }

  /** Recomputes the reserves touched by this command; ends the command's epoch. */
  flushDirty(): void {
    const d = this.dirty;
    // A count instead of `length = 0`: truncating frees the backing store, and the next command
    // would allocate a new one.
    for (let i = 0; i < this.dirtyCount; i++) refreshReserve(d[i]);
    this.dirtyCount = 0;
    this.epoch++;
  }

  /** INSUFFICIENT_FUNDS naming what the order needs of the account's available balance. */
  short(message: string, required: number, account: AccountState): Failure {
    return shortOf(message, required, account.balance - account.reserved);
  }

  totals(): LedgerTotals {
    return { deposited: this.deposited, withdrawn: this.withdrawn, adjusted: this.adjusted };
  }

  snapshot(a: AccountState): AccountSnapshot {
    return {
      accountId: a.id,
      balance: a.balance,
      reserved: a.reserved,
      available: a.balance - a.reserved,
    };
  }
}
