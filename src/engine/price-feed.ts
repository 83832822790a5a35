/**
 * Reference prices for the paper engine: per market, a seeded random walk of the YES probability
 * in log-odds space, rounded to integer YES cents 1..99. Each market has its own generator
 * seeded from (seed, market id), so adding a market or moving one by hand never changes the
 * path of the others. The live engine does not use this.
 */

/** mulberry32: tiny, fast, good enough for a simulated price path. Returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of the market id (or any stream name), mixed with the feed seed. */
export function marketSeed(seed: number, marketId: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < marketId.length; i++) {
    h ^= marketId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

const logit = (p: number): number => Math.log(p / (1 - p));
/** Walk bounds: just outside 1 and 99 cents so the walk can still reach both but not run off. */
const LO = logit(0.005);
const HI = logit(0.995);

function toPrice(x: number): number {
  const p = Math.round(100 / (1 + Math.exp(-x)));
  return p < 1 ? 1 : p > 99 ? 99 : p;
}

const isPrice = (p: number): boolean => Number.isSafeInteger(p) && p >= 1 && p <= 99;

/** Options of a {@link PriceFeed}. */
export interface PriceFeedOptions {
  /** Any 32-bit integer; same seed and same calls give the same prices. */
  seed: number;
  /** Standard deviation of one tick's log-odds step. Default 0.05 (about 1.25 cents at 50). */
  volatility?: number;
}

interface FeedMarket {
  x: number;
  price: number;
  readonly rng: () => number;
}

export class PriceFeed {
  private readonly markets = new Map<string, FeedMarket>();
  private readonly seed: number;
  private readonly volatility: number;

  constructor(options: PriceFeedOptions) {
    this.seed = options.seed | 0;
    this.volatility = options.volatility ?? 0.05;
  }

  /** Starts a market at `initialPrice` YES cents (1..99). Returns false if invalid or present. */
  addMarket(marketId: string, initialPrice = 50): boolean {
    if (this.markets.has(marketId) || !isPrice(initialPrice)) return false;
    this.markets.set(marketId, {
      x: logit(initialPrice / 100),
      price: initialPrice,
      rng: mulberry32(marketSeed(this.seed, marketId)),
    });
    return true;
  }

  /** Stops moving a market (e.g. once resolved). */
  removeMarket(marketId: string): boolean {
    return this.markets.delete(marketId);
  }

  /** Sandbox control: jumps the reference; the walk continues from there. */
  setReference(marketId: string, price: number): boolean {
    const m = this.markets.get(marketId);
    if (m === undefined || !isPrice(price)) return false;
    m.x = logit(price / 100);
    m.price = price;
    return true;
  }

  /** Current reference price in YES cents. */
  reference(marketId: string): number | undefined {
    return this.markets.get(marketId)?.price;
  }

  /** Every market's current reference price in YES cents (in insertion order). */
  references(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [id, m] of this.markets) out.set(id, m.price);
    return out;
  }

  /** Advances every market one step (in insertion order); returns the new reference prices. */
  tick(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [id, m] of this.markets) {
      // Box-Muller; 1 - u keeps the log argument in (0, 1].
      const z = Math.sqrt(-2 * Math.log(1 - m.rng())) * Math.cos(2 * Math.PI * m.rng());
      let x = m.x + this.volatility * z;
      if (x < LO) x = LO;
      else if (x > HI) x = HI;
      m.x = x;
      m.price = toPrice(x);
      out.set(id, m.price);
    }
    return out;
  }
}
