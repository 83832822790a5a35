/**
 * Quote holds: collateral an account sets aside for a binding quote (an RFQ quote) that is not on
 * any book. A hold counts in the account's `reserved` total next to its positions' reserves, so
 * every funding check (orders, amends, withdrawals, other holds) sees it; the position reserves
 * are recomputed incrementally (see `refreshReserve`), so the hold's share is never overwritten.
 */
import type { EngineEvent, HoldReleasedEvent } from './events.js';
import type { AccountState } from './ledger.js';

/** A hold as the engine reports it. */
export interface HoldSnapshot {
  readonly holdId: string;
  readonly accountId: string;
  readonly marketId: string;
  readonly amountCents: number;
  readonly createdAt: number;
}

export class QuoteHold {
  constructor(
    readonly id: string,
    readonly account: AccountState,
    readonly marketId: string,
    readonly amount: number,
    readonly createdAt: number,
  ) {}

  snapshot(): HoldSnapshot {
    return {
      holdId: this.id,
      accountId: this.account.id,
      marketId: this.marketId,
      amountCents: this.amount,
      createdAt: this.createdAt,
    };
  }
}

/** Every hold of the engine by id. */
export class HoldBook {
  private readonly byId = new Map<string, QuoteHold>();

  get(id: string): QuoteHold | undefined {
    return this.byId.get(id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  values(): IterableIterator<QuoteHold> {
    return this.byId.values();
  }

  /** Adds the hold and its amount to the account's reserved total. */
  add(hold: QuoteHold): void {
    this.byId.set(hold.id, hold);
    hold.account.reserved += hold.amount;
  }

  /** Removes the hold, gives its amount back to the account and records why. */
  release(
    hold: QuoteHold,
    reason: HoldReleasedEvent['reason'],
    now: number,
    events: EngineEvent[],
  ): void {
    this.byId.delete(hold.id);
    hold.account.reserved -= hold.amount;
    events.push({
      type: 'hold.released',
      holdId: hold.id,
      accountId: hold.account.id,
      amountCents: hold.amount,
      reason,
      timestamp: now,
    });
  }

  /** Releases every hold of the account (an account reset). */
  releaseAccount(account: AccountState, now: number, events: EngineEvent[]): void {
    for (const h of [...this.byId.values()]) {
      if (h.account === account) this.release(h, 'ACCOUNT_RESET', now, events);
    }
  }

  /** Sum of the account's holds, cents. */
  heldBy(accountId: string): number {
    let sum = 0;
    for (const h of this.byId.values()) if (h.account.id === accountId) sum += h.amount;
    return sum;
  }
}
