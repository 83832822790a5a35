/**
 * Whole-engine consistency checks, written against the public read API only and recomputing the
 * reservation from scratch with plain 99-slot arrays (a second, independent implementation of
 * the reservation rule). Used by the test suites; cheap enough for a debug endpoint on small
 * states, far too slow for the hot path.
 */
import type { MatchingEngine } from './matching-engine.js';
import { bookPriceOf, bookSideOf } from './order.js';
import type { OrderSnapshot } from './types.js';

/** Worst-case reserve of one account's resting orders in one market (see the ledger rule). */
export function recomputeReserve(
  orders: readonly OrderSnapshot[],
  yes: number,
  no: number,
): number {
  const bid = new Array<number>(100).fill(0);
  const ask = new Array<number>(100).fill(0);
  let bids = 0;
  let asks = 0;
  for (const o of orders) {
    if (o.bookPrice === null) continue;
    if (o.bookSide === 'BID') {
      bid[o.bookPrice] += o.remainingQuantity;
      bids += o.remainingQuantity;
    } else {
      ask[o.bookPrice] += o.remainingQuantity;
      asks += o.remainingQuantity;
    }
  }
  let sum = 0;
  let k = bids - no;
  for (let p = 99; p >= 1 && k > 0; p--) {
    const t = Math.min(bid[p], k);
    sum += p * t;
    k -= t;
  }
  k = asks - yes;
  for (let p = 1; p <= 99 && k > 0; p++) {
    const t = Math.min(ask[p], k);
    sum += (100 - p) * t;
    k -= t;
  }
  return sum;
}

/** Returns a description of every broken invariant (empty when consistent). */
export function checkInvariants(engine: MatchingEngine): string[] {
  const errors: string[] = [];
  const reserveByAccount = new Map<string, number>();
  let pairs = 0;
  for (const marketId of engine.marketIds()) {
    const summary = engine.marketSummary(marketId)!;
    const orders = engine.bookOrders(marketId);
    const levelTotals = new Map<string, number>();
    const byAccount = new Map<string, OrderSnapshot[]>();
    let maxBid = 0;
    let minAsk = 100;
    let lastKey = '';
    let lastSeq = -1;
    for (const o of orders) {
      const where = `${marketId} order ${o.id}`;
      if (o.status !== 'OPEN' && o.status !== 'PARTIALLY_FILLED')
        errors.push(`${where} resting with status ${o.status}`);
      if (o.type === 'RFQ') errors.push(`${where} is an RFQ order on the book`);
      if (o.filledQuantity < 0 || o.filledQuantity >= o.quantity)
        errors.push(`${where} filled ${o.filledQuantity}/${o.quantity}`);
      if (o.filledQuantity > 0 !== (o.status === 'PARTIALLY_FILLED'))
        errors.push(`${where} status ${o.status} with fill ${o.filledQuantity}`);
      if (o.remainingQuantity !== o.quantity - o.filledQuantity)
        errors.push(`${where} remaining mismatch`);
      if (o.price === null || o.bookPrice === null || o.bookPrice < 1 || o.bookPrice > 99) {
        errors.push(`${where} at invalid level ${o.bookPrice}`);
        continue;
      }
      if (
        o.bookPrice !== bookPriceOf(o.side, o.price) ||
        o.bookSide !== bookSideOf(o.action, o.side)
      ) {
        errors.push(`${where} book mapping wrong`);
      }
      const key = `${o.bookSide}:${o.bookPrice}`;
      if (key === lastKey && o.sequence <= lastSeq) errors.push(`${where} breaks FIFO sequence`);
      lastKey = key;
      lastSeq = o.sequence;
      levelTotals.set(key, (levelTotals.get(key) ?? 0) + o.remainingQuantity);
      if (o.bookSide === 'BID') maxBid = Math.max(maxBid, o.bookPrice);
      else minAsk = Math.min(minAsk, o.bookPrice);
      let list = byAccount.get(o.accountId);
      if (list === undefined) byAccount.set(o.accountId, (list = []));
      list.push(o);
    }
    if (maxBid >= minAsk) errors.push(`${marketId} crossed: bid ${maxBid} >= ask ${minAsk}`);
    if ((summary.bestBid ?? 0) !== maxBid || (summary.bestAsk ?? 100) !== minAsk) {
      errors.push(
        `${marketId} cached best ${summary.bestBid}/${summary.bestAsk} != ${maxBid}/${minAsk}`,
      );
    }
    const depth = engine.depth(marketId, 99)!;
    let depthLevels = 0;
    for (const [side, levels] of [
      ['BID', depth.bids],
      ['ASK', depth.asks],
    ] as const) {
      for (const l of levels) {
        depthLevels++;
        if (levelTotals.get(`${side}:${l.price}`) !== l.quantity)
          errors.push(`${marketId} level ${side} ${l.price} total mismatch`);
      }
    }
    if (depthLevels !== levelTotals.size)
      errors.push(`${marketId} depth has ${depthLevels} levels, orders ${levelTotals.size}`);
    if (summary.status === 'RESOLVED' && orders.length > 0)
      errors.push(`${marketId} resolved with orders`);
    let yes = 0;
    let no = 0;
    for (const p of engine.marketPositions(marketId)) {
      const where = `${marketId} position ${p.accountId}`;
      if (p.yes < 0 || p.no < 0 || (p.yes > 0 && p.no > 0))
        errors.push(`${where} yes ${p.yes} no ${p.no}`);
      if (
        !Number.isSafeInteger(p.yesCost) ||
        !Number.isSafeInteger(p.noCost) ||
        p.yesCost < 0 ||
        p.noCost < 0
      )
        errors.push(`${where} bad cost`);
      yes += p.yes;
      no += p.no;
      const r = recomputeReserve(byAccount.get(p.accountId) ?? [], p.yes, p.no);
      if (r !== p.reserved) errors.push(`${where} reserve ${p.reserved} != recomputed ${r}`);
      reserveByAccount.set(p.accountId, (reserveByAccount.get(p.accountId) ?? 0) + r);
    }
    if (yes + summary.orphanYes !== no + summary.orphanNo) {
      errors.push(
        `${marketId} sum(yes) ${yes}+${summary.orphanYes} != sum(no) ${no}+${summary.orphanNo}`,
      );
    }
    pairs += yes + summary.orphanYes;
  }
  let money = 0;
  for (const accountId of engine.accountIds()) {
    const a = engine.getAccount(accountId)!;
    money += a.balance;
    if (!Number.isSafeInteger(a.balance) || a.balance < 0)
      errors.push(`${accountId} balance ${a.balance}`);
    if (a.reserved < 0 || a.balance < a.reserved)
      errors.push(`${accountId} balance ${a.balance} < reserved ${a.reserved}`);
    // Quote holds (RFQ) are reserved on top of the resting orders' worst case.
    let held = 0;
    for (const h of engine.heldQuotes(accountId)) {
      if (!Number.isSafeInteger(h.amountCents) || h.amountCents <= 0)
        errors.push(`${accountId} hold ${h.holdId} amount ${h.amountCents}`);
      held += h.amountCents;
    }
    const r = (reserveByAccount.get(accountId) ?? 0) + held;
    if (r !== a.reserved) errors.push(`${accountId} reserved ${a.reserved} != recomputed ${r}`);
  }
  const t = engine.ledgerTotals();
  const expected = t.deposited - t.withdrawn + t.adjusted;
  if (money + 100 * pairs !== expected) {
    errors.push(`money not conserved: balances ${money} + 100*${pairs} pairs != ${expected}`);
  }
  return errors;
}
