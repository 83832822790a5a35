/**
 * Positions by (account, market) numeric indexes: one open-addressing table over typed arrays,
 * for the lookup every order makes. A per-market Map keyed by account id cost two dependent
 * cache misses per order (bucket, then entry) on a table of every account that ever touched the
 * market; here the key pair and the slot share one probe. Memory grows with positions, not with
 * accounts x markets. Deletions (account reset only) leave tombstones, dropped at the next
 * rebuild.
 */
import type { PositionState } from './ledger.js';

const EMPTY = -1;
const TOMBSTONE = -2;
const INITIAL_CAPACITY = 1024;

export class PositionIndex {
  private accountOf = new Int32Array(INITIAL_CAPACITY).fill(EMPTY);
  private marketOf = new Int32Array(INITIAL_CAPACITY);
  private states: (PositionState | null)[] = new Array<PositionState | null>(INITIAL_CAPACITY).fill(
    null,
  );
  private mask = INITIAL_CAPACITY - 1;
  /** Live entries plus tombstones: what the load factor counts. */
  private occupied = 0;

  private slot(account: number, market: number): number {
    return (Math.imul(account, 0x9e3779b1) ^ Math.imul(market, 0x85ebca77)) & this.mask;
  }

  get(account: number, market: number): PositionState | undefined {
    const accounts = this.accountOf;
    const mask = this.mask;
    for (let i = this.slot(account, market); ; i = (i + 1) & mask) {
      const a = accounts[i];
      if (a === EMPTY) return undefined;
      if (a === account && this.marketOf[i] === market) return this.states[i]!;
    }
  }

  /** Adds a position that is not in the table. */
  add(account: number, market: number, ps: PositionState): void {
    if ((this.occupied + 1) * 2 > this.states.length) this.rebuild();
    const mask = this.mask;
    let i = this.slot(account, market);
    while (this.accountOf[i] !== EMPTY) i = (i + 1) & mask;
    this.accountOf[i] = account;
    this.marketOf[i] = market;
    this.states[i] = ps;
    this.occupied++;
  }

  delete(account: number, market: number): void {
    const mask = this.mask;
    for (let i = this.slot(account, market); ; i = (i + 1) & mask) {
      const a = this.accountOf[i];
      if (a === EMPTY) return;
      if (a === account && this.marketOf[i] === market) {
        this.accountOf[i] = TOMBSTONE;
        this.states[i] = null;
        return;
      }
    }
  }

  /** Doubles the table when live entries fill a quarter of it, else rebuilds it in place. */
  private rebuild(): void {
    const accounts = this.accountOf;
    const markets = this.marketOf;
    const states = this.states;
    let live = 0;
    for (let i = 0; i < accounts.length; i++) if (accounts[i] >= 0) live++;
    const capacity = (live + 1) * 4 > accounts.length ? accounts.length * 2 : accounts.length;
    this.accountOf = new Int32Array(capacity).fill(EMPTY);
    this.marketOf = new Int32Array(capacity);
    this.states = new Array<PositionState | null>(capacity).fill(null);
    this.mask = capacity - 1;
    this.occupied = 0;
    for (let i = 0; i < accounts.length; i++) {
      if (accounts[i] >= 0) this.add(accounts[i], markets[i], states[i]!);
    }
  }
}
