import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { ManualClock, SequentialIdGenerator } from './clock.js';
import { checkInvariants } from './invariants.js';
import { MatchingEngine } from './matching-engine.js';
import { Rig, standardRig } from './testing.js';

let rig: Rig;
beforeEach(() => {
  rig = standardRig();
});
afterEach(() => {
  expect(rig.violations()).toEqual([]);
});

const e = () => rig.engine;
const pos = (a: string, m = 'm1') => e().position(a, m)!;

describe('reservations and insufficient funds', () => {
  it('reserves the worst case net of holdings', () => {
    rig.limit('bob', 'm1', 'BUY', 'YES', 50, 5);
    rig.limit('alice', 'm1', 'BUY', 'NO', 50, 5); // alice now holds NO 5
    rig.limit('alice', 'm1', 'BUY', 'YES', 60, 10);
    rig.limit('alice', 'm1', 'BUY', 'YES', 40, 10);
    // 20 bid contracts, 5 close NO: the 15 highest-priced may open YES: 10x60 + 5x40.
    expect(pos('alice').reserved).toBe(800);
    rig.limit('carol', 'm2', 'SELL', 'YES', 50, 8);
    rig.limit('dave', 'm2', 'BUY', 'YES', 50, 8); // dave holds YES 8
    rig.limit('dave', 'm2', 'SELL', 'YES', 30, 10);
    rig.limit('dave', 'm2', 'SELL', 'YES', 70, 10);
    // 20 ask contracts, 8 close YES: the 12 lowest-priced may open NO: 10x70 + 2x30.
    expect(pos('dave', 'm2').reserved).toBe(760);
    expect(e().getAccount('dave')).toMatchObject({ reserved: 760, balance: 1_000_000 - 400 });
  });

  it('rejects an order the available balance cannot cover, with no effect', () => {
    rig.addAccount('eve', 1_000);
    rig.ok(rig.limit('eve', 'm1', 'BUY', 'YES', 50, 20));
    expect(e().getAccount('eve')).toEqual({
      accountId: 'eve',
      balance: 1_000,
      reserved: 1_000,
      available: 0,
    });
    const events = rig.events.length;
    const depth = e().depth('m1');
    expect(rig.limit('eve', 'm1', 'BUY', 'YES', 1, 1)).toMatchObject({
      code: 'INSUFFICIENT_FUNDS',
    });
    expect(rig.limit('eve', 'm1', 'SELL', 'YES', 99, 1)).toMatchObject({
      code: 'INSUFFICIENT_FUNDS',
    });
    expect(e().withdraw('eve', 1)).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    expect(rig.events.length).toBe(events);
    expect(e().depth('m1')).toEqual(depth);
    expect(e().openOrders('eve')).toHaveLength(1);
  });

  it('needs no cash to sell what is held', () => {
    rig.addAccount('eve', 1_000);
    rig.limit('eve', 'm1', 'BUY', 'YES', 50, 20);
    rig.limit('bob', 'm1', 'SELL', 'YES', 50, 20);
    expect(e().getAccount('eve')).toMatchObject({ balance: 0, reserved: 0 });
    // 20 of the 21 YES sold are held; the 21st needs 100 - 60 = 40 cents.
    expect(rig.limit('eve', 'm1', 'SELL', 'YES', 60, 21)).toMatchObject({
      code: 'INSUFFICIENT_FUNDS',
      funds: { required: 40, available: 0 },
    });
    expect(rig.limit('eve', 'm1', 'SELL', 'YES', 60, 20)).toMatchObject({ ok: true });
    // Both asks could close the same 20 YES only once: the second needs 20 x 40 cash.
    expect(rig.limit('eve', 'm1', 'BUY', 'NO', 40, 20)).toMatchObject({
      code: 'INSUFFICIENT_FUNDS',
    });
  });

  it('validates deposits and withdrawals', () => {
    for (const bad of [0, -5, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 2]) {
      expect(e().deposit('alice', bad)).toMatchObject({ code: 'INVALID_AMOUNT' });
      expect(e().withdraw('alice', bad)).toMatchObject({ code: 'INVALID_AMOUNT' });
    }
    expect(e().deposit('nobody', 5)).toMatchObject({ code: 'UNKNOWN_ACCOUNT' });
    expect(e().createAccount('alice')).toMatchObject({ code: 'DUPLICATE_ACCOUNT' });
    rig.ok(e().deposit('alice', 500, 'dep-1'));
    rig.ok(e().withdraw('alice', 1_000_500, 'wd-1'));
    expect(e().getAccount('alice')).toMatchObject({ balance: 0, available: 0 });
    expect(Rig.only(rig.events, 'balance.changed').slice(-2)).toMatchObject([
      { reason: 'DEPOSIT', delta: 500, referenceId: 'dep-1' },
      { reason: 'WITHDRAWAL', delta: -1_000_500, balance: 0, referenceId: 'wd-1' },
    ]);
  });
});

/** The worked example: opens, a pair redemption and partial closes with exact cents. */
function tradeScenario(): void {
  rig.limit('bob', 'm1', 'SELL', 'YES', 60, 10);
  rig.limit('alice', 'm1', 'BUY', 'YES', 60, 10); // alice YES 10 @60, bob NO 10 @40
  rig.limit('carol', 'm1', 'BUY', 'YES', 70, 10);
  rig.limit('alice', 'm1', 'BUY', 'NO', 30, 10); // alice closes YES at 70: pair redeemed
  rig.limit('dave', 'm1', 'BUY', 'YES', 65, 4);
  rig.limit('carol', 'm1', 'SELL', 'YES', 65, 4); // carol closes 4 of 10 YES at 65
  rig.limit('dave', 'm1', 'SELL', 'YES', 68, 3);
  rig.limit('bob', 'm1', 'BUY', 'YES', 70, 3); // bob closes 3 NO at YES 68
}

describe('netting and pair redemption', () => {
  it('books every fill with exact cash, cost basis and realized P&L', () => {
    tradeScenario();
    expect(e().balance('alice')).toBe(1_000_000 - 600 + 700);
    expect(pos('alice')).toMatchObject({ yes: 0, no: 0, yesCost: 0, realizedPnl: 100 });
    expect(e().balance('bob')).toBe(1_000_000 - 400 + 96);
    expect(pos('bob')).toMatchObject({ yes: 0, no: 7, noCost: 280, realizedPnl: 96 - 120 });
    expect(e().balance('carol')).toBe(1_000_000 - 700 + 260);
    expect(pos('carol')).toMatchObject({ yes: 6, yesCost: 420, realizedPnl: 260 - 280 });
    expect(e().balance('dave')).toBe(1_000_000 - 260 + 204);
    expect(pos('dave')).toMatchObject({ yes: 1, yesCost: 65, realizedPnl: 204 - 195 });
    expect(Rig.only(rig.events, 'trade').map((t) => t.price)).toEqual([60, 70, 65, 68]);
  });

  it('buying NO while holding YES needs no cash: the pairs redeem for 100 each', () => {
    rig.addAccount('eve', 600);
    rig.limit('bob', 'm1', 'SELL', 'YES', 60, 10);
    rig.limit('eve', 'm1', 'BUY', 'YES', 60, 10);
    expect(e().getAccount('eve')).toMatchObject({ balance: 0, reserved: 0 });
    rig.limit('carol', 'm1', 'BUY', 'YES', 75, 10);
    rig.ok(rig.limit('eve', 'm1', 'BUY', 'NO', 25, 10));
    expect(e().balance('eve')).toBe(750);
    expect(pos('eve')).toMatchObject({ yes: 0, no: 0, realizedPnl: 150 });
  });
});

describe('resolution', () => {
  it('pays exactly 100 per winning contract and closes everything', () => {
    tradeScenario();
    rig.limit('alice', 'm1', 'BUY', 'YES', 20, 50);
    rig.limit('bob', 'm1', 'SELL', 'NO', 10, 5);
    const before = ['alice', 'bob', 'carol', 'dave'].map((a) => e().balance(a)!);
    const r = rig.ok(e().resolveMarket('m1', 'YES'));
    const cancelled = Rig.only(r.events, 'order.cancelled');
    expect(cancelled.map((c) => c.reason)).toEqual(['MARKET_RESOLVED', 'MARKET_RESOLVED']);
    expect(Rig.only(r.events, 'position.settled')).toEqual([
      {
        type: 'position.settled',
        accountId: 'bob',
        marketId: 'm1',
        outcome: 'YES',
        yes: 0,
        no: 7,
        payout: 0,
        realizedPnl: -24 - 280,
      },
      {
        type: 'position.settled',
        accountId: 'carol',
        marketId: 'm1',
        outcome: 'YES',
        yes: 6,
        no: 0,
        payout: 600,
        realizedPnl: -20 + 180,
      },
      {
        type: 'position.settled',
        accountId: 'dave',
        marketId: 'm1',
        outcome: 'YES',
        yes: 1,
        no: 0,
        payout: 100,
        realizedPnl: 9 + 35,
      },
    ]);
    expect(r.events.at(-1)).toMatchObject({ type: 'market.resolved', outcome: 'YES' });
    const after = ['alice', 'bob', 'carol', 'dave'].map((a) => e().balance(a)!);
    expect(after.map((b, i) => b - before[i])).toEqual([0, 0, 600, 100]);
    expect(e().reserved('alice')).toBe(0);
    expect(e().marketSummary('m1')).toMatchObject({
      status: 'RESOLVED',
      outcome: 'YES',
      bestBid: null,
    });
    expect(rig.limit('alice', 'm1', 'BUY', 'YES', 50, 1)).toMatchObject({
      code: 'MARKET_NOT_OPEN',
    });
    expect(e().resolveMarket('m1', 'NO')).toMatchObject({ code: 'MARKET_ALREADY_RESOLVED' });
    expect(e().setMarketStatus('m1', 'OPEN')).toMatchObject({ code: 'MARKET_ALREADY_RESOLVED' });
  });

  it('pays the NO side on a NO outcome', () => {
    tradeScenario();
    const r = rig.ok(e().resolveMarket('m1', 'NO'));
    expect(Rig.only(r.events, 'balance.changed')).toMatchObject([
      { accountId: 'bob', delta: 700, reason: 'SETTLEMENT', referenceId: 'm1' },
    ]);
  });
});

describe('restore', () => {
  it('rebuilds the same book, positions, balances and priority', () => {
    tradeScenario();
    rig.limit('alice', 'm1', 'BUY', 'YES', 55, 10, { tag: 'k', clientOrderId: 'c1' });
    rig.limit('bob', 'm1', 'BUY', 'YES', 55, 7);
    rig.limit('carol', 'm1', 'SELL', 'YES', 80, 10);
    rig.limit('dave', 'm1', 'BUY', 'YES', 80, 4); // partially fills carol's ask
    rig.limit('dave', 'm1', 'SELL', 'NO', 45, 3); // bid at 55, behind alice and bob
    rig.limit('alice', 'm2', 'SELL', 'NO', 10, 9);
    const a = e();
    const b = new MatchingEngine({
      clock: new ManualClock(5),
      ids: new SequentialIdGenerator(1000),
    });
    for (const m of a.marketIds()) {
      const s = a.marketSummary(m)!;
      b.addMarket(m, { lastPrice: s.lastPrice, volume: s.volume });
    }
    for (const id of a.accountIds())
      expect(b.restoreAccount(id, a.balance(id)!)).toMatchObject({ ok: true });
    for (const m of a.marketIds()) {
      for (const p of a.marketPositions(m))
        expect(b.restorePosition(p.accountId, m, p)).toMatchObject({ ok: true });
    }
    const orders = a.marketIds().flatMap((m) => a.bookOrders(m));
    for (const o of [...orders].reverse()) {
      expect(b.restoreOrder({ ...o, price: o.price! })).toMatchObject({ ok: true, events: [] });
    }
    expect(b.completeRestore()).toMatchObject({ ok: true, underfundedAccounts: [] });
    expect(checkInvariants(b)).toEqual([]);
    for (const m of a.marketIds()) {
      expect(b.bookOrders(m)).toEqual(a.bookOrders(m));
      expect(b.marketSummary(m)).toEqual(a.marketSummary(m));
      expect(b.marketPositions(m)).toEqual(a.marketPositions(m));
    }
    for (const id of a.accountIds()) expect(b.getAccount(id)).toEqual(a.getAccount(id));
    const sell = {
      accountId: 'carol',
      marketId: 'm1',
      action: 'SELL',
      side: 'YES',
      type: 'MARKET',
      quantity: 30,
    } as const;
    const fills = (r: ReturnType<MatchingEngine['placeOrder']>) =>
      r.ok ? Rig.only(r.events, 'trade').map((t) => [t.makerOrderId, t.price, t.quantity]) : r.code;
    const expected = fills(rig.record(a.placeOrder(sell)));
    expect(fills(b.placeOrder(sell))).toEqual(expected);
    expect((expected as unknown[]).length).toBeGreaterThan(2);
    const next = b.placeOrder({ ...sell, type: 'LIMIT', price: 50, quantity: 1 });
    expect(next.ok && next.order.sequence).toBeGreaterThan(
      Math.max(...orders.map((o) => o.sequence)),
    );
  });

  it('refuses crossing, duplicate and malformed restores', () => {
    const b = new MatchingEngine({ clock: new ManualClock(), ids: new SequentialIdGenerator() });
    b.addMarket('m');
    b.restoreAccount('x', 10_000);
    const base = {
      id: 'o1',
      accountId: 'x',
      marketId: 'm',
      action: 'BUY',
      side: 'YES',
      price: 50,
      quantity: 5,
      filledQuantity: 0,
      createdAt: 1,
      sequence: 3,
    } as const;
    expect(b.restoreOrder(base)).toMatchObject({ ok: true });
    expect(b.restoreOrder(base)).toMatchObject({ code: 'DUPLICATE_ORDER' });
    expect(b.restoreOrder({ ...base, id: 'o2', action: 'SELL', price: 49 })).toMatchObject({
      code: 'INVALID_STATE',
    });
    expect(b.restoreOrder({ ...base, id: 'o3', filledQuantity: 5 })).toMatchObject({
      code: 'INVALID_ORDER',
    });
    expect(b.restorePosition('x', 'm', { yes: 1, no: 1 })).toMatchObject({ code: 'INVALID_STATE' });
    expect(b.reserved('x')).toBe(250);
  });
});

describe('account reset', () => {
  it('drops orders and positions with one summary event and keeps the books consistent', () => {
    rig.limit('bob', 'm1', 'SELL', 'YES', 60, 10);
    rig.limit('alice', 'm1', 'BUY', 'YES', 60, 10); // alice YES 10, bob NO 10
    const o = rig.id(rig.limit('alice', 'm1', 'BUY', 'YES', 50, 5));
    rig.limit('alice', 'm1', 'BUY', 'YES', 50, 5);
    rig.limit('bob', 'm1', 'BUY', 'YES', 50, 5);
    rig.limit('alice', 'm2', 'SELL', 'YES', 70, 5);
    const r = rig.ok(e().resetAccount('alice', 500_000));
    expect(r.events.map((x) => x.type).sort()).toEqual([
      'account.reset',
      'balance.changed',
      'book.level',
      'book.level',
    ]);
    expect(r.events).toContainEqual(
      expect.objectContaining({
        type: 'account.reset',
        cancelledOrders: 3,
        marketIds: ['m1', 'm2'],
      }),
    );
    expect(r.account).toEqual({
      accountId: 'alice',
      balance: 500_000,
      reserved: 0,
      available: 500_000,
    });
    expect(e().openOrders('alice')).toEqual([]);
    expect(e().positions('alice')).toEqual([]);
    expect(e().depth('m1')!.bids).toEqual([{ price: 50, quantity: 5 }]);
    expect(e().depth('m2')!.asks).toEqual([]);
    expect(e().marketSummary('m1')).toMatchObject({ orphanYes: 10, orphanNo: 0 });
    expect(e().cancelOrder(o)).toMatchObject({ code: 'UNKNOWN_ORDER' });
    rig.ok(e().resolveMarket('m1', 'NO'));
    expect(e().balance('bob')).toBe(1_000_000 - 400 + 1_000);
  });
});

describe('invariant checker', () => {
  it('reports a broken engine', () => {
    const b = new MatchingEngine({ clock: new ManualClock(), ids: new SequentialIdGenerator() });
    b.addMarket('m');
    b.createAccount('x', 100);
    b.restorePosition('x', 'm', { yes: 3, no: 0 });
    expect(checkInvariants(b)).toEqual([
      'm sum(yes) 3+0 != sum(no) 0+0',
      'money not conserved: balances 100 + 100*3 pairs != 100',
    ]);
  });
});
