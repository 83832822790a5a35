import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { Rig, standardRig } from './testing.js';

let rig: Rig;
beforeEach(() => {
  rig = standardRig();
});
afterEach(() => {
  expect(rig.violations()).toEqual([]);
});

const totals = () => rig.engine.realizedPnlTotals();

describe('realizedPnlTotals', () => {
  it('lists only accounts holding a position state, with nothing realized yet', () => {
    expect(totals()).toEqual([]);
    // A resting order opens a position state without a trade.
    rig.limit('carol', 'm1', 'BUY', 'YES', 40, 5);
    expect(totals()).toEqual([{ accountId: 'carol', realizedPnl: 0, positions: 1 }]);
  });

  it('sums realized P&L over every market of the account, closed ones included', () => {
    // m1: alice buys 10 YES at 50 from bob, then sells them to carol at 57: +70 realized.
    rig.limit('bob', 'm1', 'SELL', 'YES', 50, 10);
    rig.limit('alice', 'm1', 'BUY', 'YES', 50, 10);
    rig.limit('carol', 'm1', 'BUY', 'YES', 57, 10);
    rig.limit('alice', 'm1', 'SELL', 'YES', 57, 10);
    // m2: alice buys 4 YES at 30 from dave, sells them to dave at 25: -20 realized.
    rig.limit('dave', 'm2', 'SELL', 'YES', 30, 4);
    rig.limit('alice', 'm2', 'BUY', 'YES', 30, 4);
    rig.limit('dave', 'm2', 'BUY', 'YES', 25, 4);
    rig.limit('alice', 'm2', 'SELL', 'YES', 25, 4);
    const byId = new Map(totals().map((t) => [t.accountId, t]));
    expect(byId.get('alice')).toEqual({ accountId: 'alice', realizedPnl: 50, positions: 2 });
    // The sum per account is the sum of its positions' realizedPnl, whatever the sign.
    for (const t of totals()) {
      const sum = rig.engine.positions(t.accountId).reduce((s, p) => s + p.realizedPnl, 0);
      expect(t.realizedPnl).toBe(sum);
      expect(t.positions).toBe(rig.engine.positions(t.accountId).length);
    }
    expect([...byId.keys()].sort()).toEqual(['alice', 'bob', 'carol', 'dave']);
  });

  it('forgets an account reset to no positions', () => {
    rig.limit('bob', 'm1', 'SELL', 'YES', 50, 10);
    rig.limit('alice', 'm1', 'BUY', 'YES', 50, 10);
    rig.ok(rig.engine.resetAccount('alice', 1_000_000));
    expect(totals().map((t) => t.accountId)).toEqual(['bob']);
  });
});
