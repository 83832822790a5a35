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
  /**
   * Slot i's key pair at 2i (account, or EMPTY / TOMBSTONE) and 2i + 1 (market): both halves of
   * a probe's comparison share one cache line.
   */
  private keys = new Int32Array(2 * INITIAL_CAPACITY).fill(EMPTY);
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
    const keys = this.keys;
    const mask = this.mask;
    for (let i = this.slot(account, market); ; i = (i + 1) & mask) {
      const a = keys[2 * i];
      if (a === EMPTY) return undefined;
      if (a === account && keys[2 * i + 1] === market) return this.states[i]!;
    }
  }

  /** Adds a position that is not in the table. */
  add(account: number, market: number, ps: PositionState): void {
    if ((this.occupied + 1) * 2 > this.states.length) this.rebuild();
    const keys = this.keys;
    const mask = this.mask;
    let i = this.slot(account, market);
    while (keys[2 * i] !== EMPTY) i = (i + 1) & mask;
    keys[2 * i] = account;
    keys[2 * i + 1] = market;
    this.states[i] = ps;
    this.occupied++;
  }

  delete(account: number, market: number): void {
    const keys = this.keys;
    const mask = this.mask;
    for (let i = this.slot(account, market); ; i = (i + 1) & mask) {
      const a = keys[2 * i];
      if (a === EMPTY) return;
      if (a === account && keys[2 * i + 1] === market) {
        keys[2 * i] = TOMBSTONE;
        this.states[i] = null;
        return;
      }
    }
  }

  /** Doubles the table when live entries fill a quarter of it, else rebuilds it in place. */
  private rebuild(): void {
    const keys = this.keys;
    const states = this.states;
    let live = 0;
    for (let i = 0; i < states.length; i++) if (keys[2 * i] >= 0) live++;
    const capacity = (live + 1) * 4 > states.length ? states.length * 2 : states.length;
    this.keys = new Int32Array(2 * capacity).fill(EMPTY);
    this.states = new Array<PositionState | null>(capacity).fill(null);
    this.mask = capacity - 1;
    this.occupied = 0;
    for (let i = 0; i < states.length; i++) {
      if (keys[2 * i] >= 0) this.add(keys[2 * i], keys[2 * i + 1], states[i]!);
    }
  }
}
