import { CryptoWalk, type CryptoWalkState, type CryptoWalkSymbol } from '../../engine/index.js';
import { latestBoundary } from '../../common/sampling/boundaries.js';
import type { CryptoRepository, DueMarket, PriceTick } from './crypto.repository.js';

/** At most this many walk steps per catch-up: a longer gap (the service down, a clock jump) skips the older boundaries. */
export const MAX_STEPS_PER_CATCH_UP = 1000;

/** A symbol's price now: integer cents and when it was set (service clock, ms). */
export interface IndexPrice {
  symbol: string;
  cents: number;
  at: number;
}

export interface CryptoFeedOptions {
  seed: number;
  symbols: readonly CryptoWalkSymbol[];
  /** One walk step per multiple of this on the service clock (epoch based); 0: no steps. */
  intervalMs: number;
  /**
   * False for an ephemeral world: the clock passing takes no step, only {@link CryptoFeed.advance}
   * does (the world's clock moved by its key), so the same seed and the same advances walk the
   * same path whenever they run. Default true (live and paper).
   */
  stepsOnClock?: boolean;
  repo: CryptoRepository;
  now: () => number;
  /**
   * The database holds exactly the seeded prices as of this instant (a reset staged them, see
   * CryptoRepository.stageRestart): the walk starts there without reading or writing them.
   */
  seededAt?: number;
  /** Hears the latest price of each symbol a catch-up or a set moved, after it is stored. */
  publish: (prices: readonly IndexPrice[]) => void;
  /** Settles a due market at `cents`, its index price at close (a failure is the callee's to log). */
  resolve: (market: DueMarket, cents: number) => void;
}

/**
 * One world's crypto indices: the seeded walk, its stored prices and candles, and the crypto
 * markets that resolve from them. Runs when told ({@link catchUp}: a timer about once a second,
 * every crypto read, every sandbox set). A catch-up takes one step per tick boundary passed since
 * the last one (at most {@link MAX_STEPS_PER_CATCH_UP}), each at its boundary time, and settles
 * every due market with the price its index had at its close_time: the markets whose close time
 * comes before a step are settled before that step is taken. An ephemeral world's feed takes no
 * step on the clock: {@link advance} steps it when the world's clock is moved.
 */
export class CryptoFeed {
  private readonly walk: CryptoWalk;
  /** The last tick boundary stepped (or where the walk started from). */
  private lastBoundary: number;
  /** When the prices in the walk were set (service clock ms). */
  private readonly asOf = new Map<string, number>();
  /**
   * Steps of {@link advance} not taken yet: their store failed (a full disk, a locked database),
   * so they were undone. The next advance or read takes them, so no world clock advance loses
   * the steps it crossed.
   */
  private owedSteps = 0;
  /** The clock's instant at which the last look for due markets found none (null: look). */
  private quietAt: number | null = null;

  constructor(private readonly opts: CryptoFeedOptions) {
    const stored = opts.seededAt === undefined ? opts.repo.latestPrices() : [];
    const restored = new Map<string, CryptoWalkState>();
    for (const p of stored) {
      restored.set(p.symbol, { priceCents: Number(p.price_cents), steps: Number(p.steps) });
      this.asOf.set(p.symbol, Date.parse(p.as_of));
    }
    this.walk = new CryptoWalk({ seed: opts.seed, symbols: opts.symbols, restored });
    const now = opts.seededAt ?? opts.now();
    const fresh: PriceTick[] = [];
    for (const s of opts.symbols) {
      if (this.asOf.has(s.symbol)) continue;
      this.asOf.set(s.symbol, now);
      fresh.push({ symbol: s.symbol, cents: s.startCents, steps: 0, at: now });
    }
    // A fresh database starts the walk at the seeded prices, as of now (no candle yet).
    if (opts.seededAt === undefined) opts.repo.savePrices(fresh);
    const newest = Math.max(...this.asOf.values());
    this.lastBoundary = opts.intervalMs > 0 ? latestBoundary(newest, opts.intervalMs) : 0;
  }

  private get stepsOnClock(): boolean {
    return this.opts.stepsOnClock !== false;
  }

  /** The walk's seed. */
  get seed(): number {
    return this.opts.seed;
  }

  has(symbol: string): boolean {
    return this.walk.has(symbol);
  }

  /** Every symbol's price as it stands (call {@link catchUp} first). */
  prices(): IndexPrice[] {
    return this.walk.symbols().map((symbol) => this.priceOf(symbol));
  }

  private priceOf(symbol: string): IndexPrice {
    return { symbol, cents: this.walk.price(symbol)!, at: this.asOf.get(symbol)! };
  }

  /**
   * Steps the walk to the clock (when it steps on the clock), settling the crypto markets that
   * closed meanwhile.
   */
  catchUp(): void {
    const step = this.opts.intervalMs;
    const at: number[] = [];
    if (step > 0 && this.stepsOnClock) {
      const latest = latestBoundary(this.opts.now(), step);
      if (latest > this.lastBoundary) {
        const first = Math.max(
          this.lastBoundary + step,
          latest - (MAX_STEPS_PER_CATCH_UP - 1) * step,
        );
        for (let t = first; t <= latest; t += step) at.push(t);
      }
      this.stepAt(at);
      // Only once stored: a failed store leaves the boundaries for the next catch-up.
      if (latest > this.lastBoundary) this.lastBoundary = latest;
      return;
    }
    if (this.owedSteps > 0) this.advance(0);
    else this.stepAt(at);
  }

  /**
   * Takes `steps` walk steps now (at most {@link MAX_STEPS_PER_CATCH_UP}: the older ones are
   * skipped), the last at the clock's now and each earlier one `intervalMs` before the next, so
   * the candles spread them over the time the clock jumped; settles the markets due meanwhile.
   * An ephemeral world's walk moves only so, when its clock is advanced.
   */
  advance(steps: number): void {
    const n = Math.min(this.owedSteps + Math.max(0, Math.floor(steps)), MAX_STEPS_PER_CATCH_UP);
    const now = this.opts.now();
    const spacing = Math.max(this.opts.intervalMs, 1);
    const at: number[] = [];
    for (let k = n - 1; k >= 0; k--) at.push(now - k * spacing);
    this.owedSteps = n;
    this.stepAt(at);
    this.owedSteps = 0;
  }

  /**
   * One step at each instant of `at` (ascending), each due market settled before the step after
   * its close. All or nothing: if storing the new prices fails, the walk is put back as it was
   * (markets settled before the failure stay settled, on prices that were stored) and it throws.
   */
  private stepAt(at: readonly number[]): void {
    if (at.length === 0) {
      this.settleDue(at);
      return;
    }
    const before = this.walk
      .symbols()
      .map((s) => [s, this.walk.state(s)!, this.asOf.get(s)] as const);
    try {
      this.settleDue(at);
    } catch (err) {
      for (const [symbol, state, asOf] of before) {
        this.walk.restore(symbol, state);
        if (asOf !== undefined) this.asOf.set(symbol, asOf);
      }
      throw err;
    }
  }

  private settleDue(at: readonly number[]): void {
    const now = this.opts.now();
    // Nothing was due at this very instant last time, and nothing can have become due since: a
    // market closes in the future of the world's clock (created or edited so), so only a moved
    // clock makes one due. Every catch-up (each timer round, each read) asked again before,
    // one blocking round trip per call on PostgreSQL while the clock stood still.
    const due = now === this.quietAt ? [] : this.opts.repo.dueMarkets(now);
    this.quietAt = due.length === 0 ? now : null;
    let next = 0;
    const settleBefore = (limit: number): void => {
      while (next < due.length && Date.parse(due[next].close_time) < limit) {
        const m = due[next++];
        if (this.walk.has(m.index_symbol)) this.opts.resolve(m, this.priceAtClose(m));
      }
    };
    const ticks: PriceTick[] = [];
    for (const t of at) {
      // A market closing before this step is settled on the price before it.
      settleBefore(t);
      for (const [symbol, cents] of this.walk.step()) {
        this.asOf.set(symbol, t);
        ticks.push({ symbol, cents, steps: this.walk.state(symbol)!.steps, at: t });
      }
    }
    settleBefore(Number.POSITIVE_INFINITY);
    this.store(ticks);
  }

  /** Sandbox control: sets a symbol's price now (after catching up); the walk goes on from it. */
  set(symbol: string, cents: number): IndexPrice | null {
    this.catchUp();
    if (!this.walk.set(symbol, cents)) return null;
    const at = this.opts.now();
    this.asOf.set(symbol, at);
    this.store([{ symbol, cents, steps: this.walk.state(symbol)!.steps, at }]);
    return this.priceOf(symbol);
  }

  private store(ticks: PriceTick[]): void {
    if (ticks.length === 0) return;
    this.opts.repo.record(ticks);
    // One message per symbol moved: the latest (a catch-up of several steps sends its last).
    const moved = [...new Set(ticks.map((t) => t.symbol))];
    this.opts.publish(moved.map((s) => this.priceOf(s)));
  }

  /**
   * The index price at a market's close: the walk's price when it was set at or before
   * close_time (the normal case, and after a restart that missed the moment: the stored price is
   * the last one before it). Else (only when a settlement failed and the walk went on) the close of
   * the 1m candle holding close_time, and failing that the price now.
   */
  private priceAtClose(m: DueMarket): number {
    const closeAt = Date.parse(m.close_time);
    const current = this.priceOf(m.index_symbol);
    if (current.at <= closeAt) return current.cents;
    const candle = this.opts.repo.minuteCandleAt(m.index_symbol, closeAt);
    return candle === undefined ? current.cents : Number(candle.close_cents);
  }
}
