import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  HouseMarketMaker,
  ManualClock,
  MatchingEngine,
  SequentialIdGenerator,
  type EngineEvent,
  type Result,
} from '../../engine/index.js';
import type { CommittedEvents } from './event-bus.js';
import { bookSnapshot, followerExtras, FollowerView } from './follower-view.js';

const HOUSE = 'house';
const USERS = ['u0', 'u1', 'u2', 'u3'];
const MARKETS = ['m0', 'm1', 'm2'];
const TERM = 7;

type Cmd =
  | {
      k: 'place';
      user: number;
      market: number;
      action: 'BUY' | 'SELL';
      side: 'YES' | 'NO';
      price: number;
      qty: number;
      ioc: boolean;
    }
  | { k: 'cancel'; pick: number }
  | { k: 'amend'; pick: number; qty: number }
  | { k: 'requote'; market: number; reference: number }
  | { k: 'halt'; market: number; open: boolean }
  | { k: 'deposit'; user: number; amount: number }
  | { k: 'resolve'; market: number; outcome: 'YES' | 'NO' };

const user = fc.integer({ min: 0, max: USERS.length - 1 });
const market = fc.integer({ min: 0, max: MARKETS.length - 1 });
const command: fc.Arbitrary<Cmd> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      k: fc.constant('place' as const),
      user,
      market,
      action: fc.constantFrom('BUY' as const, 'SELL' as const),
      side: fc.constantFrom('YES' as const, 'NO' as const),
      price: fc.integer({ min: 30, max: 70 }),
      qty: fc.integer({ min: 1, max: 40 }),
      ioc: fc.boolean(),
    }),
  },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('cancel' as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('amend' as const),
      pick: fc.nat(),
      qty: fc.integer({ min: 1, max: 40 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant('requote' as const),
      market,
      reference: fc.integer({ min: 35, max: 65 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ k: fc.constant('halt' as const), market, open: fc.boolean() }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('deposit' as const),
      user,
      amount: fc.integer({ min: 1, max: 5_000 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('resolve' as const),
      market,
      outcome: fc.constantFrom('YES' as const, 'NO' as const),
    }),
  },
);

/** A writer: an engine with users, markets and the house quoting, as a paper world has. */
class Writer {
  readonly clock = new ManualClock(1_800_000_000_000);
  readonly engine = new MatchingEngine({ clock: this.clock, ids: new SequentialIdGenerator() });
  readonly house = new HouseMarketMaker(this.engine, {
    accountId: HOUSE,
    levels: 3,
    size: 20,
    refill: 5,
  });
  /** Every committed batch, as the stream carries it (the writer's figures included). */
  readonly batches: CommittedEvents[] = [];

  constructor() {
    this.commit(this.engine.createAccount(HOUSE, 1_000_000_000));
    for (const id of MARKETS) this.commit(this.engine.addMarket(id));
    for (const id of USERS) this.commit(this.engine.createAccount(id, 200_000));
    for (const id of MARKETS) this.batch(this.house.requote(id, 50).events);
  }

  commit(r: Result<object>): void {
    if (r.ok) this.batch(r.events);
  }

  batch(events: readonly EngineEvent[]): void {
    if (events.length === 0) return;
    this.batches.push({
      environment: 'test',
      world: 'test',
      events,
      committedAt: this.clock.now(),
      follow: followerExtras(this.engine, events, TERM, HOUSE),
    });
  }

  run(c: Cmd): void {
    this.clock.advance(1);
    const e = this.engine;
    const open = (): string[] =>
      USERS.flatMap((u) => e.openOrders(u).map((o) => o.id)).sort((a, b) => a.localeCompare(b));
    switch (c.k) {
      case 'place':
        this.commit(
          e.placeOrder({
            accountId: USERS[c.user],
            marketId: MARKETS[c.market],
            action: c.action,
            side: c.side,
            type: 'LIMIT',
            price: c.price,
            quantity: c.qty,
            timeInForce: c.ioc ? 'IOC' : 'GTC',
          }),
        );
        break;
      case 'cancel': {
        const ids = open();
        if (ids.length > 0) this.commit(e.cancelOrder(ids[c.pick % ids.length]));
        break;
      }
      case 'amend': {
        const ids = open();
        if (ids.length > 0)
          this.commit(e.amendOrder(ids[c.pick % ids.length], { quantity: c.qty }));
        break;
      }
      case 'requote':
        this.batch(this.house.requote(MARKETS[c.market], c.reference).events);
        break;
      case 'halt': {
        const id = MARKETS[c.market];
        const events: EngineEvent[] = [];
        if (!c.open) events.push(...this.house.withdraw(id));
        const r = e.setMarketStatus(id, c.open ? 'OPEN' : 'HALTED');
        if (r.ok) events.push(...r.events);
        this.batch(events);
        break;
      }
      case 'deposit':
        this.commit(e.deposit(USERS[c.user], c.amount, 'dep'));
        break;
      case 'resolve': {
        const events = this.house.withdraw(MARKETS[c.market]);
        const r = e.resolveMarket(MARKETS[c.market], c.outcome);
        if (r.ok) events.push(...r.events);
        this.batch(events);
        break;
      }
    }
  }

  /**
   * An engine as the database restores it: markets, accounts, positions and the users' resting
   * orders, but none of the house's quotes (they are stored nowhere), resolved markets CLOSED.
   */
  restoredFromDatabase(): MatchingEngine {
    const e = new MatchingEngine({ clock: this.clock, ids: new SequentialIdGenerator() });
    for (const id of this.engine.marketIds()) {
      const s = this.engine.marketSummary(id)!;
      e.addMarket(id, {
        status: s.status === 'RESOLVED' ? 'CLOSED' : s.status,
        lastPrice: s.lastPrice,
        volume: s.volume,
      });
    }
    for (const id of this.engine.accountIds()) e.restoreAccount(id, this.engine.balance(id)!);
    for (const id of this.engine.accountIds()) {
      for (const p of this.engine.positions(id)) e.restorePosition(id, p.marketId, p);
      if (id === HOUSE) continue;
      for (const o of this.engine.openOrders(id)) e.restoreOrder({ ...o, price: o.price ?? 0 });
    }
    e.completeRestore();
    return e;
  }
}

/** What the realtime hub reads, from the writer's engine and from the follower's view. */
function differences(writer: MatchingEngine, view: FollowerView): string[] {
  const out: string[] = [];
  if (JSON.stringify(view.marketIds()) !== JSON.stringify(writer.marketIds()))
    out.push(`market ids ${view.marketIds().join()} vs ${writer.marketIds().join()}`);
  for (const id of writer.marketIds()) {
    const [w, v] = [JSON.stringify(writer.depth(id, 99)), JSON.stringify(view.depth(id, 99))];
    if (w !== v) out.push(`depth of ${id}: writer ${w}, follower ${v}`);
    const [ws, vs] = [
      JSON.stringify(writer.marketSummary(id)),
      JSON.stringify(view.marketSummary(id)),
    ];
    if (ws !== vs) out.push(`summary of ${id}: writer ${ws}, follower ${vs}`);
  }
  for (const id of USERS) {
    const [w, v] = [JSON.stringify(writer.getAccount(id)), JSON.stringify(view.getAccount(id))];
    if (w !== v) out.push(`account ${id}: writer ${w}, follower ${v}`);
  }
  return out;
}

const SEED = 240_024;

describe('FollowerView: a follower fed the writer’s batches reads as the writer', () => {
  it('after a randomized stream of orders, cancels, amends, fills, halts, resolutions and house re-quotes', () => {
    fc.assert(
      fc.property(fc.array(command, { minLength: 1, maxLength: 120 }), (cmds) => {
        const w = new Writer();
        // Built before anything was committed, then fed every batch in order.
        const view = FollowerView.fromEngine(
          new MatchingEngine({ clock: w.clock, ids: new SequentialIdGenerator() }),
        );
        for (const b of w.batches) view.apply(b);
        let fed = w.batches.length;
        for (const c of cmds) {
          w.run(c);
          for (; fed < w.batches.length; fed++) view.apply(w.batches[fed]);
          const diff = differences(w.engine, view);
          if (diff.length > 0) throw new Error(`after ${JSON.stringify(c)}:\n${diff.join('\n')}`);
        }
        expect(view.term).toBe(TERM);
      }),
      { seed: SEED, numRuns: 120 },
    );
  });

  it('after a gap: rebuilt from the database (no house quotes), the later batches, then the writer’s book make it the writer’s again', () => {
    fc.assert(
      fc.property(
        fc.array(command, { minLength: 1, maxLength: 60 }),
        fc.array(command, { minLength: 1, maxLength: 40 }),
        fc.array(command, { minLength: 0, maxLength: 40 }),
        fc.array(command, { minLength: 0, maxLength: 40 }),
        (before, lost, after, later) => {
          const w = new Writer();
          const view = FollowerView.fromEngine(
            new MatchingEngine({ clock: w.clock, ids: new SequentialIdGenerator() }),
          );
          for (const c of before) w.run(c);
          for (const b of w.batches) view.apply(b);
          // A break in the stream: these batches never reach the follower.
          for (const c of lost) w.run(c);
          // The resync: rebuilt from the database, which holds every commit so far...
          const rebuilt = FollowerView.fromEngine(w.restoredFromDatabase());
          // ...and has not seen what the writer commits meanwhile (applied in stream order).
          const asked = w.batches.length;
          for (const c of after) w.run(c);
          for (const b of w.batches.slice(asked)) rebuilt.apply(b);
          // The writer's book, in the stream after every batch so far.
          rebuilt.apply({ events: [], follow: { term: TERM, book: bookSnapshot(w.engine) } });
          expect(differences(w.engine, rebuilt)).toEqual([]);
          const fed = w.batches.length;
          for (const c of later) w.run(c);
          for (const b of w.batches.slice(fed)) rebuilt.apply(b);
          expect(differences(w.engine, rebuilt)).toEqual([]);
        },
      ),
      { seed: SEED + 1, numRuns: 80 },
    );
  });

  it('the database alone lacks the house’s quotes (why the writer’s book is asked for)', () => {
    const w = new Writer();
    const view = FollowerView.fromEngine(w.restoredFromDatabase());
    expect(w.engine.depth('m0', 99)!.bids.length).toBeGreaterThan(0);
    expect(view.depth('m0', 99)).toEqual({ marketId: 'm0', bids: [], asks: [] });
    view.apply({ events: [], follow: { term: TERM, book: bookSnapshot(w.engine) } });
    expect(differences(w.engine, view)).toEqual([]);
  });
});
