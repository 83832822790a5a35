import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { CrossQuoteRequest } from './engine-rfq.js';
import type { Action, Side } from './types.js';
import { Rig, standardRig } from './testing.js';

let rig: Rig;
beforeEach(() => {
  rig = standardRig();
});
afterEach(() => {
  expect(rig.violations()).toEqual([]);
});

const e = () => rig.engine;
const START = 1_000_000;

/** The taker's own-terms price of accepting a YES quote bid/ask (the RFQ module's mapping). */
function takerPrice(action: Action, side: Side, bid: number, ask: number): number {
  if (action === 'BUY' && side === 'YES') return ask;
  if (action === 'SELL' && side === 'NO') return 100 - ask;
  if (action === 'SELL' && side === 'YES') return bid;
  return 100 - bid;
}

function accept(
  action: Action,
  side: Side,
  quantity: number,
  extra: Partial<CrossQuoteRequest> = {},
  quote = { bid: 40, ask: 45 },
): CrossQuoteRequest {
  return {
    marketId: 'm1',
    quantity,
    taker: {
      accountId: 'alice',
      action,
      side,
      price: takerPrice(action, side, quote.bid, quote.ask),
    },
    maker: { accountId: 'bob' },
    rfqId: 'rfq_1',
    ...extra,
  };
}

/** Everything a failed command must leave as it was. */
function fingerprint(): string {
  return JSON.stringify([
    e()
      .accountIds()
      .map((a) => [e().getAccount(a), e().positions(a)]),
    e().heldQuotes(),
    e()
      .marketIds()
      .map((m) => [e().bookOrders(m), e().marketSummary(m)]),
  ]);
}

/** Resting orders of other accounts on m1, so "the book is untouched" means something. */
function restingBook(): void {
  rig.ok(rig.limit('carol', 'm1', 'BUY', 'YES', 42, 7));
  rig.ok(rig.limit('dave', 'm1', 'SELL', 'YES', 44, 9));
  rig.ok(rig.limit('carol', 'm1', 'BUY', 'NO', 50, 3)); // an ask at YES 50
}

describe('crossQuote: the four accept forms', () => {
  // bid 40 / ask 45, 10 contracts, both flat. YES price of the trade, then what each pays.
  const forms: [Action, Side, number, number, number][] = [
    ['BUY', 'YES', 45, 450, 550], // alice opens YES at 45; bob sells YES: opens NO at 55
    ['SELL', 'NO', 45, 450, 550], // SELL NO at 55 = a YES bid at 45: the same economics
    ['SELL', 'YES', 40, 600, 400], // alice opens NO at 60; bob buys YES at 40
    ['BUY', 'NO', 40, 600, 400], // BUY NO at 60 = a YES ask at 40
  ];
  it.each(forms)(
    '%s %s trades at YES %i, both balances to the cent, the book untouched',
    (action, side, yesPrice, alicePays, bobPays) => {
      restingBook();
      const book = JSON.stringify([e().bookOrders('m1'), e().depth('m1', 99)]);
      const r = rig.ok(rig.cross(accept(action, side, 10, { releaseHoldId: null })));
      expect(r.trade).toMatchObject({
        source: 'RFQ',
        price: yesPrice,
        quantity: 10,
        takerAccountId: 'alice',
        makerAccountId: 'bob',
        takerSide: side,
        makerSide: 'YES',
      });
      const ownPrice = takerPrice(action, side, 40, 45);
      expect(r.takerOrder).toMatchObject({
        accountId: 'alice',
        action,
        side,
        type: 'RFQ',
        price: ownPrice,
        quantity: 10,
        filledQuantity: 10,
        remainingQuantity: 0,
        fillCost: ownPrice * 10,
        status: 'FILLED',
        timeInForce: 'FOK',
        rfqId: 'rfq_1',
      });
      const makerBuys = yesPrice === 40;
      expect(r.makerOrder).toMatchObject({
        accountId: 'bob',
        action: makerBuys ? 'BUY' : 'SELL',
        side: 'YES',
        type: 'RFQ',
        price: yesPrice,
        fillCost: yesPrice * 10,
        status: 'FILLED',
        rfqId: 'rfq_1',
      });
      expect(e().getAccount('alice')).toEqual({
        accountId: 'alice',
        balance: START - alicePays,
        reserved: 0,
        available: START - alicePays,
      });
      expect(e().getAccount('bob')).toMatchObject({ balance: START - bobPays, reserved: 0 });
      const aliceYes = yesPrice === 45;
      expect(e().position('alice', 'm1')).toMatchObject({
        yes: aliceYes ? 10 : 0,
        no: aliceYes ? 0 : 10,
      });
      expect(e().position('bob', 'm1')).toMatchObject({
        yes: aliceYes ? 0 : 10,
        no: aliceYes ? 10 : 0,
      });
      expect(JSON.stringify([e().bookOrders('m1'), e().depth('m1', 99)])).toBe(book);
      expect(Rig.only(r.events, 'book.level')).toEqual([]);
      // A trade as any other: last price and volume move; the orders stay readable.
      expect(e().marketSummary('m1')).toMatchObject({ lastPrice: yesPrice, volume: 10 });
      expect(e().getOrder(r.takerOrder.id)).toEqual(r.takerOrder);
      expect(e().getOrder(r.makerOrder.id)).toEqual(r.makerOrder);
    },
  );

  it('emits the events of a book fill, maker side first', () => {
    rig.ok(rig.hold({ holdId: 'q1', accountId: 'bob', marketId: 'm1', amountCents: 600 }));
    const r = rig.ok(rig.cross(accept('BUY', 'YES', 10, { releaseHoldId: 'q1' })));
    expect(r.events.map((ev) => ev.type)).toEqual([
      'hold.released',
      'order.accepted',
      'order.accepted',
      'trade',
      'order.updated',
      'position.changed',
      'balance.changed',
      'order.updated',
      'position.changed',
      'balance.changed',
    ]);
    expect(Rig.only(r.events, 'hold.released')[0]).toMatchObject({
      holdId: 'q1',
      reason: 'CROSSED',
      amountCents: 600,
    });
    expect(Rig.only(r.events, 'balance.changed').map((b) => [b.accountId, b.delta])).toEqual([
      ['bob', -550],
      ['alice', -450],
    ]);
    expect(e().heldQuotes()).toEqual([]);
  });

  it('nets holdings: closing trades pay out and redeem pairs, as a book fill', () => {
    rig.ok(rig.cross(accept('BUY', 'YES', 10))); // alice YES 10 @45, bob NO 10 @55
    // Now alice sells her YES to bob at the bid: both close, nobody opens anything.
    const r = rig.ok(rig.cross(accept('SELL', 'YES', 10, { rfqId: 'rfq_2' })));
    expect(r.trade.price).toBe(40);
    expect(e().position('alice', 'm1')).toMatchObject({ yes: 0, no: 0, realizedPnl: -50 });
    expect(e().position('bob', 'm1')).toMatchObject({ yes: 0, no: 0, realizedPnl: 50 });
    // alice: -450 + 400; bob: -550 + 600 (his NO closes at 100 - 40).
    expect(e().balance('alice')).toBe(START - 50);
    expect(e().balance('bob')).toBe(START + 50);
  });

  it('lets a holder with no cash sell what it holds, under the order ids given', () => {
    rig.ok(rig.cross(accept('SELL', 'YES', 10))); // bob buys YES 10 at 40
    rig.ok(e().withdraw('bob', e().available('bob')!));
    expect(e().available('bob')).toBe(0);
    const r = rig.ok(
      rig.cross({
        ...accept('BUY', 'YES', 10, { rfqId: 'rfq_2' }),
        taker: { accountId: 'carol', action: 'BUY', side: 'YES', price: 45, tag: 'key_c' },
        takerOrderId: 'ord_taker',
        makerOrderId: 'ord_maker',
        tradeId: 'fil_chosen',
      }),
    );
    expect(r.trade.id).toBe('fil_chosen');
    expect([r.takerOrder.id, r.makerOrder.id, r.takerOrder.tag]).toEqual([
      'ord_taker',
      'ord_maker',
      'key_c',
    ]);
    expect(e().position('bob', 'm1')).toMatchObject({ yes: 0, no: 0, realizedPnl: 50 });
    expect(e().getAccount('bob')).toMatchObject({ balance: 450, reserved: 0 });
  });

  it('recomputes the reserve of a party with resting orders in the market', () => {
    rig.ok(rig.limit('bob', 'm1', 'SELL', 'YES', 60, 10)); // reserves 10 x 40
    expect(e().getAccount('bob')!.reserved).toBe(400);
    rig.ok(rig.cross(accept('SELL', 'YES', 10))); // bob buys YES 10: his ask now closes YES
    expect(e().getAccount('bob')).toMatchObject({ balance: START - 400, reserved: 0 });
  });
});

describe('quote holds', () => {
  const hold = (holdId: string, amountCents: number, more: object = {}) =>
    rig.hold({ holdId, accountId: 'bob', marketId: 'm1', amountCents, ...more });

  it('reserve collateral that orders and withdrawals cannot use, until released', () => {
    rig.addAccount('eve', 1_000);
    const placed = rig.ok(
      rig.hold({ holdId: 'q1', accountId: 'eve', marketId: 'm1', amountCents: 700 }),
    );
    expect(placed.hold).toEqual({
      holdId: 'q1',
      accountId: 'eve',
      marketId: 'm1',
      amountCents: 700,
      createdAt: rig.clock.now(),
    });
    expect(e().getAccount('eve')).toEqual({
      accountId: 'eve',
      balance: 1_000,
      reserved: 700,
      available: 300,
    });
    expect(rig.limit('eve', 'm1', 'BUY', 'YES', 50, 7)).toMatchObject({
      ok: false,
      code: 'INSUFFICIENT_FUNDS',
      funds: { required: 350, available: 300 },
    });
    expect(e().withdraw('eve', 301)).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    expect(
      rig.hold({ holdId: 'q2', accountId: 'eve', marketId: 'm2', amountCents: 301 }),
    ).toMatchObject({
      code: 'INSUFFICIENT_FUNDS',
      funds: { required: 301, available: 300 },
    });
    rig.ok(rig.limit('eve', 'm1', 'BUY', 'YES', 50, 6)); // 300: exactly what is left
    const released = rig.ok(rig.record(e().releaseHold('q1')));
    expect(released.events).toEqual([
      {
        type: 'hold.released',
        holdId: 'q1',
        accountId: 'eve',
        amountCents: 700,
        reason: 'RELEASED',
        timestamp: rig.clock.now(),
      },
    ]);
    expect(e().getAccount('eve')).toMatchObject({ reserved: 300, available: 700 });
    expect(e().releaseHold('q1')).toMatchObject({ ok: false, code: 'UNKNOWN_HOLD' });
  });

  it('replace a hold in one command, the old amount counting as available', () => {
    rig.addAccount('eve', 1_000);
    const at = (amountCents: number, more: object = {}) =>
      rig.hold({
        holdId: `q${amountCents}`,
        accountId: 'eve',
        marketId: 'm1',
        amountCents,
        ...more,
      });
    rig.ok(at(800));
    expect(at(900)).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    const r = rig.ok(at(900, { replacesHoldId: 'q800' }));
    expect(r.events.map((ev) => ev.type)).toEqual(['hold.released', 'hold.placed']);
    expect(Rig.only(r.events, 'hold.released')[0].reason).toBe('REPLACED');
    expect(
      e()
        .heldQuotes('eve')
        .map((h) => h.holdId),
    ).toEqual(['q900']);
    expect(e().getAccount('eve')).toMatchObject({ reserved: 900, available: 100 });
    expect(e().held('eve')).toBe(900);
    // The replaced hold must be the account's own.
    expect(at(50, { replacesHoldId: 'q800' })).toMatchObject({ code: 'UNKNOWN_HOLD' });
    rig.ok(hold('qb', 10));
    expect(at(60, { replacesHoldId: 'qb' })).toMatchObject({ code: 'UNKNOWN_HOLD' });
  });

  it('refuse bad requests with their codes and change nothing', () => {
    rig.ok(hold('q1', 100));
    const before = fingerprint();
    rig.ok(e().setMarketStatus('m2', 'HALTED'));
    rig.ok(e().setMarketStatus('m2', 'OPEN'));
    const cases: [object, string][] = [
      [{ amountCents: 0 }, 'INVALID_AMOUNT'],
      [{ amountCents: 1.5 }, 'INVALID_AMOUNT'],
      [{ holdId: '' }, 'INVALID_STATE'],
      [{ holdId: 'q1' }, 'DUPLICATE_HOLD'],
      [{ accountId: 'nobody' }, 'UNKNOWN_ACCOUNT'],
      [{ marketId: 'nowhere' }, 'UNKNOWN_MARKET'],
      [{ amountCents: START }, 'INSUFFICIENT_FUNDS'],
    ];
    for (const [more, code] of cases) {
      expect([more, hold('q9', 50, more)]).toEqual([more, expect.objectContaining({ code })]);
    }
    rig.ok(e().setMarketStatus('m1', 'HALTED'));
    expect(hold('q9', 50)).toMatchObject({ code: 'MARKET_NOT_OPEN' });
    rig.ok(e().setMarketStatus('m1', 'OPEN'));
    expect(e().releaseHold('q1', 'alice')).toMatchObject({ code: 'UNKNOWN_HOLD' });
    expect(fingerprint()).toBe(before);
  });

  it('go with an account reset, and a restore brings them back', () => {
    rig.ok(hold('q1', 100));
    rig.ok(hold('q2', 200));
    rig.ok(rig.hold({ holdId: 'q3', accountId: 'carol', marketId: 'm1', amountCents: 5 }));
    const r = rig.ok(e().resetAccount('bob', 50_000));
    expect(Rig.only(r.events, 'hold.released').map((h) => [h.holdId, h.reason])).toEqual([
      ['q1', 'ACCOUNT_RESET'],
      ['q2', 'ACCOUNT_RESET'],
    ]);
    expect(e().getAccount('bob')).toMatchObject({ reserved: 0, available: 50_000 });
    expect(
      e()
        .heldQuotes()
        .map((h) => h.holdId),
    ).toEqual(['q3']);
    // A restore (as at boot) puts a persisted hold back into the reservation.
    rig.ok(
      e().restoreHold({
        holdId: 'q4',
        accountId: 'bob',
        marketId: 'm1',
        amountCents: 70,
        createdAt: 1,
      }),
    );
    rig.mirror.holds.set('q4', { accountId: 'bob', amountCents: 70 }); // the store held it
    expect(
      e().restoreHold({
        holdId: 'q4',
        accountId: 'bob',
        marketId: 'm1',
        amountCents: 70,
        createdAt: 1,
      }),
    ).toMatchObject({ code: 'DUPLICATE_HOLD' });
    expect(e().completeRestore()).toMatchObject({ ok: true, underfundedAccounts: [] });
    expect(e().getAccount('bob')).toMatchObject({ reserved: 70, available: 49_930 });
  });
});

describe('crossQuote refusals change nothing', () => {
  it('a taker short of funds: INSUFFICIENT_FUNDS, party TAKER', () => {
    rig.addAccount('eve', 449);
    rig.ok(rig.hold({ holdId: 'q1', accountId: 'bob', marketId: 'm1', amountCents: 550 }));
    const before = fingerprint();
    const r = rig.cross({
      ...accept('BUY', 'YES', 10, { releaseHoldId: 'q1' }),
      taker: { accountId: 'eve', action: 'BUY', side: 'YES', price: 45 },
    });
    expect(r).toMatchObject({
      ok: false,
      code: 'INSUFFICIENT_FUNDS',
      party: 'TAKER',
      funds: { required: 450, available: 449 },
    });
    expect(fingerprint()).toBe(before);
    rig.ok(e().deposit('eve', 1));
    rig.ok(
      rig.cross({
        ...accept('BUY', 'YES', 10, { releaseHoldId: 'q1' }),
        taker: { accountId: 'eve', action: 'BUY', side: 'YES', price: 45 },
      }),
    );
    expect(e().getAccount('eve')).toMatchObject({ balance: 0, reserved: 0 });
  });

  it('a maker short of funds: INSUFFICIENT_FUNDS, party MAKER; its hold counts as available', () => {
    rig.addAccount('rita', 600);
    rig.ok(rig.hold({ holdId: 'q1', accountId: 'rita', marketId: 'm1', amountCents: 549 }));
    rig.ok(rig.limit('rita', 'm2', 'BUY', 'YES', 51, 1)); // 51 more reserved: available 0
    expect(e().available('rita')).toBe(0);
    const maker = { accountId: 'rita' };
    const before = fingerprint();
    expect(rig.cross(accept('BUY', 'YES', 10, { maker, releaseHoldId: 'q1' }))).toMatchObject({
      ok: false,
      code: 'INSUFFICIENT_FUNDS',
      party: 'MAKER',
      funds: { required: 550, available: 549 },
    });
    // Without releasing its hold, it has nothing at all.
    expect(rig.cross(accept('SELL', 'YES', 1, { maker }))).toMatchObject({
      party: 'MAKER',
      funds: { required: 40, available: 0 },
    });
    expect(fingerprint()).toBe(before);
    rig.ok(rig.cross(accept('BUY', 'YES', 9, { maker, releaseHoldId: 'q1' }))); // 495 <= 549
    expect(e().getAccount('rita')).toEqual({
      accountId: 'rita',
      balance: 600 - 495,
      reserved: 51,
      available: 54,
    });
  });

  it('bad shape, unknown ids, a market not open, a self-trade, a foreign hold', () => {
    rig.ok(rig.hold({ holdId: 'qb', accountId: 'bob', marketId: 'm1', amountCents: 100 }));
    rig.ok(rig.hold({ holdId: 'qb2', accountId: 'bob', marketId: 'm2', amountCents: 100 }));
    rig.ok(rig.hold({ holdId: 'qc', accountId: 'carol', marketId: 'm1', amountCents: 100 }));
    const done = rig.ok(rig.limit('carol', 'm1', 'BUY', 'YES', 30, 1));
    const base = accept('BUY', 'YES', 10);
    const cases: [Partial<CrossQuoteRequest>, string][] = [
      [{ quantity: 0 }, 'INVALID_ORDER'],
      [{ quantity: 2.5 }, 'INVALID_ORDER'],
      [{ taker: { ...base.taker, price: 0 } }, 'INVALID_ORDER'],
      [{ taker: { ...base.taker, price: 100 } }, 'INVALID_ORDER'],
      [{ taker: { ...base.taker, action: 'HOLD' as Action } }, 'INVALID_ORDER'],
      [{ taker: { ...base.taker, side: 'MAYBE' as Side } }, 'INVALID_ORDER'],
      [{ rfqId: '' }, 'INVALID_ORDER'],
      [{ tradeId: '' }, 'INVALID_ORDER'],
      [{ marketId: 'nowhere' }, 'UNKNOWN_MARKET'],
      [{ taker: { ...base.taker, accountId: 'nobody' } }, 'UNKNOWN_ACCOUNT'],
      [{ maker: { accountId: 'nobody' } }, 'UNKNOWN_ACCOUNT'],
      [{ maker: { accountId: 'alice' } }, 'SELF_TRADE'],
      [{ releaseHoldId: 'nohold' }, 'UNKNOWN_HOLD'],
      [{ releaseHoldId: 'qc' }, 'UNKNOWN_HOLD'], // carol's, not the maker's
      [{ releaseHoldId: 'qb2' }, 'UNKNOWN_HOLD'], // bob's, on another market
      [{ takerOrderId: done.order.id }, 'DUPLICATE_ORDER'],
      [{ makerOrderId: done.order.id }, 'DUPLICATE_ORDER'],
      [{ takerOrderId: 'ord_x', makerOrderId: 'ord_x' }, 'DUPLICATE_ORDER'],
    ];
    const before = fingerprint();
    for (const [more, code] of cases) {
      const r = rig.cross({ ...base, ...more });
      expect([more, r]).toEqual([more, expect.objectContaining({ ok: false, code })]);
    }
    for (const status of ['HALTED', 'CLOSED'] as const) {
      rig.ok(e().setMarketStatus('m1', status));
      expect(rig.cross(base)).toMatchObject({ ok: false, code: 'MARKET_NOT_OPEN' });
    }
    rig.ok(e().resolveMarket('m1', 'YES'));
    expect(rig.cross(base)).toMatchObject({ ok: false, code: 'MARKET_NOT_OPEN' });
    expect(JSON.stringify(e().heldQuotes())).toBe(JSON.stringify(JSON.parse(before)[1]));
    expect(e().getAccount('alice')).toMatchObject({ balance: START, reserved: 0 });
  });
});
