/**
 * Reference prices of crypto indices (BTC-USD, ...): per symbol, a seeded geometric random walk in
 * integer cents. Each symbol draws from its own mulberry32 stream seeded from (seed, symbol), the
 * PRNG of the paper price feed, so adding a symbol or moving one by hand never changes the path of
 * the others. A step multiplies the price by exp(sigma * z) (z standard normal, Box-Muller) and
 * rounds to the cent, never below 1 cent.
 *
 * A mulberry32 generator's state only counts up by a constant per draw, so the generator after n
 * draws is mulberry32(seed + n * C): a walk restored with its step count continues the very path
 * an uninterrupted one would have taken, in O(1).
 */
import { marketSeed, mulberry32 } from './price-feed.js';

/** mulberry32's per-draw increment. */
const GOLDEN = 0x6d2b79f5;
/** Draws per step (Box-Muller takes two). */
const DRAWS_PER_STEP = 2;
/** No index goes above this (10 billion USD): keeps every product a safe integer. */
export const MAX_INDEX_CENTS = 1_000_000_000_000;

export interface CryptoWalkSymbol {
  symbol: string;
  /** Starting price in integer cents (a restored state overrides it). */
  startCents: number;
  /** Standard deviation of one step's log return (0.001: about 0.1 % a step). */
  sigma: number;
}

/** What a restart needs to continue a symbol's walk where it stood. */
export interface CryptoWalkState {
  priceCents: number;
  /** Steps taken since the stream started (sets by hand are not steps). */
  steps: number;
}

export interface CryptoWalkOptions {
  /** Any 32-bit integer; the same seed and the same calls give the same prices. */
  seed: number;
  symbols: readonly CryptoWalkSymbol[];
  /** Stored states by symbol (a restart); absent symbols start at their startCents. */
  restored?: ReadonlyMap<string, CryptoWalkState>;
}

interface WalkEntry {
  price: number;
  steps: number;
  readonly sigma: number;
  readonly stream: number;
  rng: () => number;
}

const isCents = (c: number): boolean => Number.isSafeInteger(c) && c >= 1 && c <= MAX_INDEX_CENTS;

export class CryptoWalk {
  private readonly entries = new Map<string, WalkEntry>();

  constructor(options: CryptoWalkOptions) {
    const seed = options.seed | 0;
    for (const s of options.symbols) {
      if (!isCents(s.startCents)) throw new RangeError(`${s.symbol}: start price out of range`);
      if (!(s.sigma >= 0 && s.sigma < 1)) throw new RangeError(`${s.symbol}: sigma out of range`);
      const restored = options.restored?.get(s.symbol);
      const state =
        restored !== undefined && isCents(restored.priceCents) && restored.steps >= 0
          ? restored
          : { priceCents: s.startCents, steps: 0 };
      const stream = marketSeed(seed, `crypto:${s.symbol}`);
      this.entries.set(s.symbol, {
        price: state.priceCents,
        steps: state.steps,
        sigma: s.sigma,
        stream,
        rng: mulberry32(advanced(stream, state.steps)),
      });
    }
  }

  symbols(): string[] {
    return [...this.entries.keys()];
  }

  has(symbol: string): boolean {
    return this.entries.has(symbol);
  }

  /** The current price in cents; undefined for an unknown symbol. */
  price(symbol: string): number | undefined {
    return this.entries.get(symbol)?.price;
  }

  state(symbol: string): CryptoWalkState | undefined {
    const e = this.entries.get(symbol);
    return e === undefined ? undefined : { priceCents: e.price, steps: e.steps };
  }

  /**
   * Puts a symbol back to a state {@link state} returned (a failed store undoing its steps): the
   * price, the step count and the generator after that many steps, so the path goes on as if the
   * undone steps were never taken.
   */
  restore(symbol: string, state: CryptoWalkState): void {
    const e = this.entries.get(symbol);
    if (e === undefined) return;
    e.price = state.priceCents;
    e.steps = state.steps;
    e.rng = mulberry32(advanced(e.stream, state.steps));
  }

  /** Sandbox control: jumps a symbol's price; the walk continues from there. False if refused. */
  set(symbol: string, cents: number): boolean {
    const e = this.entries.get(symbol);
    if (e === undefined || !isCents(cents)) return false;
    e.price = cents;
    return true;
  }

  /** Advances every symbol one step (in the order given); returns the new prices in cents. */
  step(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [symbol, e] of this.entries) {
      // Box-Muller; 1 - u keeps the log argument in (0, 1].
      const z = Math.sqrt(-2 * Math.log(1 - e.rng())) * Math.cos(2 * Math.PI * e.rng());
      const next = Math.round(e.price * Math.exp(e.sigma * z));
      e.price = next < 1 ? 1 : next > MAX_INDEX_CENTS ? MAX_INDEX_CENTS : next;
      e.steps++;
      out.set(symbol, e.price);
    }
    return out;
  }
}

/** The mulberry32 seed whose first draw is the stream's draw number `steps * DRAWS_PER_STEP`. */
function advanced(stream: number, steps: number): number {
  const draws = steps * DRAWS_PER_STEP;
  // Math.imul multiplies modulo 2^32 (its operands reduced modulo 2^32), as the generator adds.
  return (stream + Math.imul(draws % 4294967296, GOLDEN)) >>> 0;
}
