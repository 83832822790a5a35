/**
 * Read-only simulation of a taker walking the book, used for MARKET buying power and quotes.
 * It applies the same netting as real fills so the resulting cash and position are exact
 * (an account's own resting orders can be left out: it never trades with them).
 */
import type { OrderBook } from './order-book.js';
import type { BookSide, DepthLevel } from './types.js';

export interface WalkResult {
  filled: number;
  /** Sum of YES price x quantity. */
  yesNotional: number;
  /** Cash delta of the taker with netting against its holdings. */
  cash: number;
  finalYes: number;
  finalNo: number;
  levels: number;
}

export function newWalkResult(): WalkResult {
  return { filled: 0, yesNotional: 0, cash: 0, finalYes: 0, finalNo: 0, levels: 0 };
}

/**
 * Walks the side opposite `takerSide` while it crosses `limit`, up to `wanted` contracts.
 * `levelsOut`, when given, receives each walked level (YES price, quantity taken). `exclude`,
 * when given, is resting quantity per YES price to leave out (the taker's own orders).
 */
export function walkBook(
  book: OrderBook,
  takerSide: BookSide,
  limit: number,
  wanted: number,
  yes: number,
  no: number,
  out: WalkResult,
  levelsOut: DepthLevel[] | null,
  exclude: Float64Array | null = null,
): WalkResult {
  let filled = 0;
  let notional = 0;
  let cash = 0;
  let levels = 0;
  if (takerSide === 'BID') {
    let held = no;
    for (let p = book.bestAsk; p <= limit && p < 100 && filled < wanted; p++) {
      const lq = book.levelQuantity('ASK', p) - (exclude === null ? 0 : exclude[p]);
      if (lq === 0) continue;
      const t = lq < wanted - filled ? lq : wanted - filled;
      const c = t < held ? t : held;
      held -= c;
      cash += (100 - p) * c - p * (t - c);
      notional += p * t;
      filled += t;
      levels++;
      if (levelsOut !== null) levelsOut.push({ price: p, quantity: t });
    }
    out.finalNo = held;
    out.finalYes = yes + filled - (no - held);
  } else {
    let held = yes;
    for (let p = book.bestBid; p >= limit && p > 0 && filled < wanted; p--) {
      const lq = book.levelQuantity('BID', p) - (exclude === null ? 0 : exclude[p]);
      if (lq === 0) continue;
      const t = lq < wanted - filled ? lq : wanted - filled;
      const c = t < held ? t : held;
      held -= c;
      cash += p * c - (100 - p) * (t - c);
      notional += p * t;
      filled += t;
      levels++;
      if (levelsOut !== null) levelsOut.push({ price: p, quantity: t });
    }
    out.finalYes = held;
    out.finalNo = no + filled - (yes - held);
  }
  out.filled = filled;
  out.yesNotional = notional;
  out.cash = cash;
  out.levels = levels;
  return out;
}
