/**
 * The engine bench's order flow, ported from ../shared/anchors/engine/workload.mjs so both engines
 * see exactly the anchor's stream: the same generator (mulberry32), the same seed and draws in the
 * same order. The whole stream is built up front by a small reference book (price-time priority,
 * cents 1..99), so nothing of it is timed.
 *
 * Mix per operation: 60% LIMIT (GTC near a per-market mid that random-walks one tick with p=0.05),
 * 25% CANCEL of a uniformly random live order, 10% IOC (limit 0..2 ticks through the opposite
 * best), 5% REDUCE (lower the remaining quantity of a random live order). Quantities 1..100.
 * A LIMIT on a market above its target of live orders is, with a probability rising with the
 * excess, priced through the opposite best: that holds the resting book near ~4,100 orders.
 */

export const OP_LIMIT = 0;
export const OP_CANCEL = 1;
export const OP_IOC = 2;
export const OP_REDUCE = 3;
export const OP_NAMES = ['limit', 'cancel', 'ioc', 'reduce'] as const;
export const BUY = 0;
export const SELL = 1;

export interface WorkloadOptions {
  seed: number;
  ops: number;
  warmup: number;
  markets: number;
  targetPerMarket?: number;
}

export interface WorkloadSummary {
  seed: number;
  ops: number;
  warmup: number;
  markets: number;
  counts: { limit: number; cancel: number; ioc: number; reduce: number };
  limitCrossedPct: number;
  makerFills: number;
  liveOrdersAvg: number;
  liveOrdersMin: number;
  liveOrdersMax: number;
  liveOrdersEnd: number;
}

/** Column-wise operation stream: entry i is one operation. */
export interface Workload {
  readonly total: number;
  readonly warmup: number;
  readonly ops: number;
  readonly markets: number;
  readonly kind: Uint8Array;
  readonly mkt: Uint16Array;
  /** BUY (bid) or SELL (ask). */
  readonly side: Uint8Array;
  readonly price: Uint8Array;
  /** LIMIT/IOC: quantity; REDUCE: the new remaining quantity. */
  readonly qty: Uint32Array;
  /** LIMIT/IOC: the new order's id; CANCEL/REDUCE: the target's id. */
  readonly id: Uint32Array;
  readonly maxId: number;
  readonly summary: WorkloadSummary;
}

/** The anchor's generator (same constants, same draw order: a changed seed sequence is a bug). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return function rnd(): number {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NPRICE = 100;
const MID_LO = 8;
const MID_HI = 90;
const MID_STEP_PROB = 0.05;
const MIX = { limit: 0.6, cancel: 0.25, ioc: 0.1 };

const clampP = (p: number): number => (p < 1 ? 1 : p > 99 ? 99 : p);

/** The reference book the generator drives (array-backed, per-level queues with lazy deletion). */
class ReferenceBook {
  readonly oMkt: Uint16Array;
  readonly oSide: Uint8Array;
  readonly oPrice: Uint8Array;
  readonly oQty: Int32Array;
  readonly livePos: Int32Array;
  readonly liveArr: Int32Array;
  liveN = 0;
  readonly liveCount: Int32Array;
  private readonly levelQty: Int32Array;
  private readonly levelCnt: Int32Array;
  private readonly levelHead: Int32Array;
  private readonly levelQ: number[][];
  makerFills = 0;
  measuring = false;

  constructor(capacity: number, markets: number) {
    this.oMkt = new Uint16Array(capacity);
    this.oSide = new Uint8Array(capacity);
    this.oPrice = new Uint8Array(capacity);
    this.oQty = new Int32Array(capacity);
    this.livePos = new Int32Array(capacity).fill(-1);
    this.liveArr = new Int32Array(capacity);
    this.liveCount = new Int32Array(markets);
    const n = markets * 2 * NPRICE;
    this.levelQty = new Int32Array(n);
    this.levelCnt = new Int32Array(n);
    this.levelHead = new Int32Array(n);
    this.levelQ = Array.from({ length: n }, () => []);
  }

  lvl(m: number, s: number, p: number): number {
    return ((m << 1) | s) * NPRICE + p;
  }

  bestAsk(m: number): number {
    const base = ((m << 1) | SELL) * NPRICE;
    for (let p = 1; p <= 99; p++) if (this.levelQty[base + p] > 0) return p;
    return 0;
  }

  bestBid(m: number): number {
    const base = ((m << 1) | BUY) * NPRICE;
    for (let p = 99; p >= 1; p--) if (this.levelQty[base + p] > 0) return p;
    return 0;
  }

  private addLive(o: number): void {
    this.livePos[o] = this.liveN;
    this.liveArr[this.liveN++] = o;
  }

  private removeLive(o: number): void {
    const pos = this.livePos[o];
    const last = this.liveArr[--this.liveN];
    this.liveArr[pos] = last;
    this.livePos[last] = pos;
    this.livePos[o] = -1;
  }

  private clearIfEmpty(li: number): void {
    if (this.levelCnt[li] === 0) {
      this.levelQ[li].length = 0;
      this.levelHead[li] = 0;
    }
  }

  rest(o: number, m: number, s: number, p: number, q: number): void {
    this.oMkt[o] = m;
    this.oSide[o] = s;
    this.oPrice[o] = p;
    this.oQty[o] = q;
    const li = this.lvl(m, s, p);
    const arr = this.levelQ[li];
    const h = this.levelHead[li];
    if (arr.length - h > 2 * this.levelCnt[li] + 32) {
      let w = 0;
      for (let r = h; r < arr.length; r++) if (this.livePos[arr[r]] >= 0) arr[w++] = arr[r];
      arr.length = w;
      this.levelHead[li] = 0;
    }
    arr.push(o);
    this.levelQty[li] += q;
    this.levelCnt[li]++;
    this.addLive(o);
    this.liveCount[m]++;
  }

  unrest(o: number): void {
    const m = this.oMkt[o];
    const li = this.lvl(m, this.oSide[o], this.oPrice[o]);
    this.levelQty[li] -= this.oQty[o];
    this.levelCnt[li]--;
    this.oQty[o] = 0;
    this.removeLive(o);
    this.liveCount[m]--;
    this.clearIfEmpty(li);
  }

  reduce(o: number, nq: number): void {
    const li = this.lvl(this.oMkt[o], this.oSide[o], this.oPrice[o]);
    this.levelQty[li] -= this.oQty[o] - nq;
    this.oQty[o] = nq; // a reduce keeps its queue position
  }

  /** Matches an incoming order (side s, limit P, quantity q) on market m; returns the unfilled rest. */
  match(m: number, s: number, P: number, q: number): number {
    const opp = s ^ 1;
    while (q > 0) {
      let bp: number;
      if (s === BUY) {
        bp = this.bestAsk(m);
        if (bp === 0 || bp > P) break;
      } else {
        bp = this.bestBid(m);
        if (bp === 0 || bp < P) break;
      }
      const li = this.lvl(m, opp, bp);
      const arr = this.levelQ[li];
      let h = this.levelHead[li];
      while (q > 0 && h < arr.length) {
        const o = arr[h];
        if (this.livePos[o] < 0) {
          h++;
          continue;
        }
        const f = q < this.oQty[o] ? q : this.oQty[o];
        q -= f;
        this.oQty[o] -= f;
        this.levelQty[li] -= f;
        if (this.measuring) this.makerFills++;
        if (this.oQty[o] === 0) {
          this.levelCnt[li]--;
          this.removeLive(o);
          this.liveCount[m]--;
          h++;
        }
      }
      this.levelHead[li] = h;
      this.clearIfEmpty(li);
    }
    return q;
  }
}

/** Builds the whole stream (warm-up first, then the measured operations). */
export function generateWorkload(o: WorkloadOptions): Workload {
  const { seed, ops, warmup, markets } = o;
  const targetPerMarket = o.targetPerMarket ?? 40;
  const total = warmup + ops;
  const rnd = mulberry32(seed);
  const pL = MIX.limit;
  const pC = pL + MIX.cancel;
  const pI = pC + MIX.ioc;
  const kind = new Uint8Array(total);
  const mkt = new Uint16Array(total);
  const side = new Uint8Array(total);
  const price = new Uint8Array(total);
  const qty = new Uint32Array(total);
  const id = new Uint32Array(total);
  const book = new ReferenceBook(total + 2, markets);
  const mid = new Int32Array(markets);
  for (let m = 0; m < markets; m++) mid[m] = 25 + Math.floor(rnd() * 50);
  let nextId = 1;
  const count = [0, 0, 0, 0];
  let limitCrossed = 0;
  let liveSum = 0;
  let liveMin = Infinity;
  let liveMax = 0;

  const stepMid = (m: number): void => {
    if (rnd() < MID_STEP_PROB) {
      const v = mid[m] + (rnd() < 0.5 ? -1 : 1);
      mid[m] = v < MID_LO ? MID_LO : v > MID_HI ? MID_HI : v;
    }
  };
  const target = (i: number, k: number, ord: number): void => {
    kind[i] = k;
    mkt[i] = book.oMkt[ord];
    side[i] = book.oSide[ord];
    price[i] = book.oPrice[ord];
    id[i] = ord;
  };

  for (let i = 0; i < total; i++) {
    const measuring = i >= warmup;
    book.measuring = measuring;
    const r = rnd();
    let k = r < pL ? OP_LIMIT : r < pC ? OP_CANCEL : r < pI ? OP_IOC : OP_REDUCE;
    if ((k === OP_CANCEL || k === OP_REDUCE) && book.liveN === 0) k = OP_LIMIT;
    if (k === OP_REDUCE) {
      let ord = -1;
      for (let t = 0; t < 8; t++) {
        ord = book.liveArr[Math.floor(rnd() * book.liveN)];
        if (book.oQty[ord] >= 2) break;
      }
      if (book.oQty[ord] >= 2) {
        const nq = 1 + Math.floor(rnd() * (book.oQty[ord] - 1));
        book.reduce(ord, nq);
        target(i, OP_REDUCE, ord);
        qty[i] = nq;
      } else {
        k = OP_CANCEL;
        target(i, OP_CANCEL, ord);
        book.unrest(ord);
      }
    } else if (k === OP_CANCEL) {
      const ord = book.liveArr[Math.floor(rnd() * book.liveN)];
      target(i, OP_CANCEL, ord);
      book.unrest(ord);
    } else {
      const m = Math.floor(rnd() * markets);
      stepMid(m);
      const s = rnd() < 0.5 ? BUY : SELL;
      const q = 1 + Math.floor(rnd() * 100);
      const ord = nextId++;
      let p = 0;
      if (k === OP_IOC) {
        const bp = s === BUY ? book.bestAsk(m) : book.bestBid(m);
        const through = Math.floor(rnd() * 3);
        if (bp !== 0) p = s === BUY ? clampP(bp + through) : clampP(bp - through);
        else p = s === BUY ? mid[m] + 1 : mid[m];
        book.match(m, s, p, q);
      } else {
        const over = book.liveCount[m] - targetPerMarket;
        if (over > 0 && rnd() < Math.min(0.9, (over / targetPerMarket) * 4)) {
          const bp = s === BUY ? book.bestAsk(m) : book.bestBid(m);
          if (bp !== 0) {
            const through = Math.floor(rnd() * 3);
            p = s === BUY ? clampP(bp + through) : clampP(bp - through);
          }
        }
        if (p === 0) {
          const u = rnd();
          const off = Math.floor(u * u * 8);
          p = s === BUY ? clampP(mid[m] - off) : clampP(mid[m] + 1 + off);
        }
        const rem = book.match(m, s, p, q);
        if (measuring && rem < q) limitCrossed++;
        if (rem > 0) book.rest(ord, m, s, p, rem);
      }
      kind[i] = k;
      mkt[i] = m;
      side[i] = s;
      price[i] = p;
      qty[i] = q;
      id[i] = ord;
    }
    if (measuring) {
      count[k]++;
      liveSum += book.liveN;
      if (book.liveN < liveMin) liveMin = book.liveN;
      if (book.liveN > liveMax) liveMax = book.liveN;
    }
  }
  const summary: WorkloadSummary = {
    seed,
    ops,
    warmup,
    markets,
    counts: { limit: count[0], cancel: count[1], ioc: count[2], reduce: count[3] },
    limitCrossedPct: +((100 * limitCrossed) / Math.max(1, count[0])).toFixed(2),
    makerFills: book.makerFills,
    liveOrdersAvg: Math.round(liveSum / Math.max(1, ops)),
    liveOrdersMin: ops > 0 ? liveMin : 0,
    liveOrdersMax: liveMax,
    liveOrdersEnd: book.liveN,
  };
  return {
    total,
    warmup,
    ops,
    markets,
    kind,
    mkt,
    side,
    price,
    qty,
    id,
    maxId: nextId - 1,
    summary,
  };
}
