import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectContractError, type JsonResponse } from '../support/harness.js';
import { startService, type ServiceProcess } from '../support/process.js';
import {
  allOrders,
  as,
  book,
  cancel,
  engineMoney,
  getOrder,
  limit,
  market,
  place,
  placeRaw,
  prng,
  replayFills,
  storedBalance,
  storedHoldings,
  STARTING_BALANCE,
  TRADABLE,
  trader,
  yes,
  type Level,
  type Order,
  type OrderBody,
  type Trader,
} from '../support/orders.js';
import { dropDatabaseOf } from '../support/test-database.js';

const OPEN = new Set(['OPEN', 'PARTIALLY_FILLED']);
const STP_MODES = ['CANCEL_TAKER', 'CANCEL_MAKER', 'CANCEL_BOTH'] as const;
const FINAL = new Set(['FILLED', 'CANCELLED', 'EXPIRED']);

/**
 * Durability (issue 4): the built server (`node dist/main.js`) is killed with SIGKILL while a
 * stream of orders from two users is in flight, then restarted on the same DATA_DIR (in the
 * PostgreSQL pass on the pass's PostgreSQL + Redis, the same database again). Every
 * acknowledged order must be there with its acknowledged state (or later progress consistent with
 * it), no fill lost or duplicated, the rebuilt books hold exactly the stored open orders, and new
 * orders still match the restored ones in time priority.
 */
describe('orders: durability across kill -9', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-orders-kill-'));
  const env = {
    SANDBOX_FEED_INTERVAL_MS: '0',
    RATE_LIMITS_ENABLED: 'false',
    LOG_LEVEL: 'warn',
  };
  let svc: ServiceProcess | undefined;

  afterAll(async () => {
    await svc?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    await dropDatabaseOf(dataDir);
  });

  it('acknowledged orders and fills survive SIGKILL mid-stream; the books are rebuilt from them', async () => {
    svc = await startService({ dataDir, env, testDatabase: true });
    const a = await trader(svc);
    const b = await trader(svc, 'durable@orders.test');
    const [m1, m2, m3] = [TRADABLE[0], TRADABLE[1], TRADABLE[2]];

    // Markets the stream does not touch: time priority at R2, a partial fill at R3.
    const prio1 = await place(
      svc,
      a,
      limit(m2, 'BUY', 'YES', m2.reference, 5, { client_order_id: 'prio-1' }),
    );
    const prio2 = await place(svc, b, limit(m2, 'SELL', 'NO', 100 - m2.reference, 5));
    const prio3 = await place(
      svc,
      a,
      limit(m2, 'BUY', 'YES', m2.reference, 5, { client_order_id: 'prio-3' }),
    );
    const partial = await place(svc, a, limit(m3, 'BUY', 'YES', m3.reference, 10));
    await place(svc, b, limit(m3, 'SELL', 'YES', m3.reference, 4, { time_in_force: 'IOC' }));
    expect(await getOrder(svc, a, partial.id)).toMatchObject({
      status: 'PARTIALLY_FILLED',
      filled_quantity: 4,
    });
    const moneyBefore = engineMoney(svc);

    // The stream: 8 requests always in flight, resting and crossing orders of both users in m1
    // (against each other and the house), market orders, cancels of their own open orders.
    const acked = new Map<string, { user: Trader; order: Order }>();
    const record = (user: Trader, res: JsonResponse): void => {
      if ((res.status === 200 || res.status === 201) && typeof res.body?.id === 'string') {
        acked.set(res.body.id as string, { user, order: res.body as Order });
      }
    };
    const cancelSent = new Set<string>();
    const rnd = prng(424242);
    let killed = false;
    let inFlightAtKill = 0;
    let inFlight = 0;
    let unanswered = 0;
    const target = 300;
    const worker = async (): Promise<void> => {
      while (!killed) {
        const user = rnd() < 0.5 ? a : b;
        const roll = rnd();
        const action = rnd() < 0.5 ? 'BUY' : 'SELL';
        const side = rnd() < 0.5 ? 'YES' : 'NO';
        const yesPrice = m1.reference - 7 + Math.floor(rnd() * 15);
        const qty = 1 + Math.floor(rnd() * 25);
        let send: () => Promise<JsonResponse>;
        // Both users cross their own orders too: self-trade prevention in every mode.
        const stp = STP_MODES[Math.floor(rnd() * STP_MODES.length)];
        if (roll < 0.6) {
          const body: OrderBody = limit(m1, action, side, yes(side, yesPrice), qty, {
            self_trade_prevention: stp,
          });
          send = () => placeRaw(svc!, user, body);
        } else if (roll < 0.75) {
          send = () => placeRaw(svc!, user, market(m1, action, side, qty));
        } else {
          const mine = [...acked.values()].filter(
            (x) => x.user === user && OPEN.has(x.order.status as string),
          );
          if (mine.length === 0) continue;
          const id = mine[Math.floor(rnd() * mine.length)].order.id as string;
          cancelSent.add(id);
          send = () => cancel(svc!, user, id);
        }
        inFlight++;
        try {
          const res = await send();
          if (!killed) {
            expect(res.status).toBeLessThan(500);
            record(user, res);
          }
        } catch {
          unanswered++; // the connection died with the process: not acknowledged
        } finally {
          inFlight--;
        }
        if (!killed && acked.size >= target) {
          killed = true;
          inFlightAtKill = inFlight;
          svc!.proc.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, () => worker()));
    const exit = await svc.exited;
    expect(exit.signal).toBe('SIGKILL');
    expect(inFlightAtKill).toBeGreaterThan(0);
    expect(acked.size).toBeGreaterThanOrEqual(target);

    // Restart on the same directory.
    svc = await startService({ dataDir, env, testDatabase: true });

    // 1. Every acknowledged order is there, in its acknowledged state or later progress.
    for (const [id, { user, order }] of acked) {
      const now = await getOrder(svc, user, id);
      expect(now.filled_quantity).toBeGreaterThanOrEqual(order.filled_quantity);
      if (FINAL.has(order.status)) {
        expect({ id, status: now.status, filled: now.filled_quantity }).toEqual({
          id,
          status: order.status,
          filled: order.filled_quantity,
        });
      }
      // An order acknowledged open ends cancelled only if a cancel for it was sent, or a later
      // CANCEL_MAKER or CANCEL_BOTH order of its own user met it.
      if (now.status === 'CANCELLED' && OPEN.has(order.status as string)) {
        const why = cancelSent.has(id) || now.cancel_reason === 'SELF_TRADE_PREVENTION';
        expect({ id, why }).toEqual({ id, why: true });
      }
      // No acknowledged fill is lost.
      const fillIds = new Set(now.fills.map((f: { id: string }) => f.id));
      for (const f of order.fills as { id: string }[]) expect(fillIds.has(f.id)).toBe(true);
    }

    // 2. Fills: unique per order, adding up to filled_quantity; every trade on both sides.
    const owner = new Map<string, Trader>();
    const all: Order[] = [];
    for (const u of [a, b]) {
      for (const o of await allOrders(svc, u)) {
        owner.set(o.id as string, u);
        all.push(o);
      }
    }
    const byTrade = new Map<string, { order: string; liquidity: string; user: Trader }[]>();
    for (const o of all) {
      const ids = o.fills.map((f: { id: string }) => f.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(o.fills.reduce((s: number, f: { quantity: number }) => s + f.quantity, 0)).toBe(
        o.filled_quantity,
      );
      expect(
        o.fills.reduce(
          (s: number, f: { quantity: number; price: number }) => s + f.price * f.quantity,
          0,
        ),
      ).toBe(o.filled_cost_cents);
      expect(o.filled_quantity).toBeLessThanOrEqual(o.quantity);
      for (const f of o.fills as { id: string; liquidity: string }[]) {
        const list = byTrade.get(f.id) ?? [];
        list.push({
          order: o.id as string,
          liquidity: f.liquidity,
          user: owner.get(o.id as string)!,
        });
        byTrade.set(f.id, list);
      }
    }
    for (const [, sides] of byTrade) {
      expect(sides.length).toBeLessThanOrEqual(2);
      if (sides.length === 2) {
        expect(sides.map((s) => s.liquidity).sort()).toEqual(['MAKER', 'TAKER']);
        // Self-trade prevention: never the same user on both sides.
        expect(sides[0].user).not.toBe(sides[1].user);
      }
    }
    const stpEnded = all.filter((o) => o.cancel_reason === 'SELF_TRADE_PREVENTION').length;
    expect(stpEnded).toBeGreaterThan(0);
    const userUser = [...byTrade.values()].filter((s) => s.length === 2).length;
    expect(userUser).toBeGreaterThan(0);

    // 3. Money: balances and holdings are what the stored fills imply; nothing was created or
    // destroyed by the crash (balances + 100 per open pair unchanged).
    for (const u of [a, b]) {
      const implied = replayFills(all.filter((o) => owner.get(o.id as string) === u));
      expect(storedBalance(svc, u.userId)).toBe(STARTING_BALANCE + implied.cash);
      const held = storedHoldings(svc, u.userId);
      for (const [marketId, h] of implied.holdings)
        expect(held.get(marketId) ?? { yes: 0, no: 0 }).toEqual(h);
    }
    expect(engineMoney(svc)).toBe(moneyBefore);

    // 4. New orders match the restored ones in time priority; the client_order_id of a restored
    // open order is still taken.
    expectContractError(
      await placeRaw(
        svc,
        a,
        limit(m2, 'BUY', 'YES', m2.reference - 10, 1, { client_order_id: 'prio-3' }),
      ),
      409,
      'DUPLICATE_CLIENT_ORDER_ID',
    );
    const t1 = await place(
      svc,
      b,
      limit(m2, 'SELL', 'YES', m2.reference, 5, { time_in_force: 'IOC' }),
    );
    expect(t1.fills).toEqual([expect.objectContaining({ price: m2.reference, quantity: 5 })]);
    expect((await getOrder(svc, a, prio1.id)).status).toBe('FILLED');
    expect((await getOrder(svc, b, prio2.id)).status).toBe('OPEN');
    expect((await getOrder(svc, a, prio3.id)).status).toBe('OPEN');
    // prio2 is b's own: a sells into it (b selling would be a self-trade, now prevented).
    await place(svc, a, limit(m2, 'SELL', 'YES', m2.reference, 5, { time_in_force: 'IOC' }));
    expect((await getOrder(svc, b, prio2.id)).status).toBe('FILLED');
    expect((await getOrder(svc, a, prio3.id)).status).toBe('OPEN');
    // And a restored order still meets self-trade prevention: a's next sell reaches its own prio3.
    const self = await place(
      svc,
      a,
      limit(m2, 'SELL', 'YES', m2.reference, 5, { time_in_force: 'IOC' }),
    );
    expect(self).toMatchObject({
      status: 'CANCELLED',
      cancel_reason: 'SELF_TRADE_PREVENTION',
      filled_quantity: 0,
    });
    expect((await getOrder(svc, a, prio3.id)).status).toBe('OPEN');
    // The partially filled order came back with its fill and its remainder.
    const t2 = await place(
      svc,
      b,
      limit(m3, 'SELL', 'YES', m3.reference, 6, { time_in_force: 'IOC' }),
    );
    expect(t2.filled_quantity).toBe(6);
    const done = await getOrder(svc, a, partial.id);
    expect(done).toMatchObject({
      status: 'FILLED',
      filled_quantity: 10,
      filled_cost_cents: 10 * m3.reference,
    });
    expect(done.fills).toHaveLength(2);

    // 5. The rebuilt book of m1 holds exactly the stored open orders: the book minus the same
    // book after cancelling every stored open order (each cancel must succeed: the engine has
    // it) is the stored open orders, level by level. What stays is the house's.
    const openNow = all.filter((o) => o.market_id === m1.id && OPEN.has(o.status as string));
    const expected = { bids: new Map<number, number>(), asks: new Map<number, number>() };
    for (const o of openNow) {
      const isBid = (o.action === 'BUY') === (o.side === 'YES');
      const levels = isBid ? expected.bids : expected.asks;
      const p = yes(o.side, o.price);
      levels.set(p, (levels.get(p) ?? 0) + o.remaining_quantity);
    }
    const before = await book(svc, a, m1.id);
    for (const o of openNow) {
      expect((await cancel(svc, owner.get(o.id as string)!, o.id as string)).status).toBe(200);
    }
    const after = await book(svc, a, m1.id);
    const diff = (x: Level[], y: Level[]): Map<number, number> => {
      const out = new Map<number, number>();
      for (const l of x) out.set(l.price, l.quantity - levelQty(y, l.price));
      for (const [p, q] of out) if (q === 0) out.delete(p);
      return out;
    };
    expect(diff(before.bids, after.bids)).toEqual(expected.bids);
    expect(diff(before.asks, after.asks)).toEqual(expected.asks);
    // The rest is a house ladder: at most 5 levels a side, 100 at most each, never crossed.
    for (const side of [after.bids, after.asks]) {
      expect(side.length).toBeLessThanOrEqual(5);
      for (const l of side) expect(l.quantity).toBeLessThanOrEqual(100);
    }
    if (after.bids.length > 0 && after.asks.length > 0) {
      expect(after.bids[0].price).toBeLessThan(after.asks[0].price);
    }

    // 6. Orders closed before the crash answer as closed, not as unknown.
    const closed = [...acked.entries()].filter(([, x]) => FINAL.has(x.order.status as string));
    expect(closed.length).toBeGreaterThan(0);
    for (const [id, { user }] of closed.slice(0, 20)) {
      expectContractError(await cancel(svc, user, id), 409, 'ORDER_NOT_OPEN');
      expectContractError(
        await as(user, `${svc.api}/orders/${id}`, { method: 'PATCH', json: { quantity: 1 } }),
        409,
        'ORDER_NOT_OPEN',
      );
    }
    console.log(
      `durability: ${acked.size} acknowledged, ${unanswered} unanswered at the kill, ${inFlightAtKill} in flight, ${userUser} user-user trades, ${stpEnded} orders ended by self-trade prevention`,
    );
  });
});

function levelQty(levels: Level[], price: number): number {
  return levels.find((l) => l.price === price)?.quantity ?? 0;
}
