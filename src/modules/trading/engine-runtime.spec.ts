import { describe, expect, it } from '@jest/globals';
import type { Logger } from '@nestjs/common';
import type { EngineEvent } from '../../engine/index.js';
import { ManualClock } from '../../common/clock/clock.js';
import { EngineRuntime, type FeedSettings } from './engine-runtime.js';
import { InProcessEventBus, type CommittedEvents } from './event-bus.js';
import type { TradingRepository } from './trading.repository.js';
import type { EffectRecord } from './stores/effect.store.js';
import { IDEMPOTENCY_TTL_MS, type StoredEffect } from './applied-keys.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { restingBuy } from '../../../test/support/engine-commands.js';

/** A repository double: records each transaction's events; can be told to fail. */
class FakeRepo {
  commits: EngineEvent[][] = [];
  fail = false;
  failOnce = false;
  failRestore = false;
  /** Fails the transaction after its writes ran (they are rolled back: dropped here). */
  failAtCommit = false;
  restores = 0;
  spools: { payload: string; at: number; commit: number }[] = [];
  /** Idempotency-Key effects as stored (one per owner and key: the upsert replaces). */
  stored: (EffectRecord & StoredEffect)[] = [];
  private inTx = false;
  transaction<T>(fn: () => T): T {
    if (this.fail) throw new Error('disk full');
    if (this.failOnce) {
      this.failOnce = false;
      throw new Error('disk full');
    }
    const [commits, spools, stored] = [this.commits.length, this.spools.length, this.stored];
    this.inTx = true;
    try {
      const r = fn();
      if (this.failAtCommit) throw new Error('disk full at commit');
      return r;
    } catch (err) {
      this.commits.length = commits;
      this.spools.length = spools;
      this.stored = stored;
      throw err;
    } finally {
      this.inTx = false;
    }
  }
  apply(events: readonly EngineEvent[]): void {
    this.commits.push([...events]);
  }
  /** Reference prices as stored (saveReferences). */
  references = new Map<string, number>();
  /** The market store: stores reference prices (saveReferences). */
  markets = {
    saveReferences: (refs: ReadonlyMap<string, number>): void => {
      for (const [id, price] of refs) this.references.set(id, price);
    },
  };
  /** The webhook spool store: records what is spooled, and that it is inside the transaction. */
  webhookSpool = {
    spool: (payload: string, at: number): void => {
      if (!this.inTx) throw new Error('spool outside the batch transaction');
      this.spools.push({ payload, at, commit: this.commits.length - 1 });
    },
  };
  /** The effect store: records inside the transaction (rolled back with it), read at restore. */
  effects = {
    record: (e: EffectRecord, at: number): void => {
      if (!this.inTx) throw new Error('effect recorded outside the transaction');
      const others = this.stored.filter((s) => s.ownerId !== e.ownerId || s.key !== e.key);
      this.stored = [...others, { ...e, orderIds: [...e.orderIds], at }];
    },
    recordedSince: (since: string): StoredEffect[] =>
      this.stored.filter((s) => s.at >= Date.parse(since)),
    effectOf: (ownerId: string, key: string, since: string) => {
      const s = this.stored.find(
        (x) => x.ownerId === ownerId && x.key === key && x.at >= Date.parse(since),
      );
      return s === undefined ? null : { orderIds: s.orderIds, referenceIds: s.referenceIds };
    },
  };
  /** mkt_a's close time (epoch ms); far away unless a test sets it. */
  closeAt = 4_000_000_000_000;
  loadForRestore() {
    this.restores++;
    if (this.failRestore) throw new Error('database gone');
    return {
      markets: [
        {
          id: 'mkt_a',
          status: 'OPEN',
          outcome: null,
          reference_price: this.references.get('mkt_a') ?? 50,
          last_price: null,
          volume: 0,
          close_time: new Date(this.closeAt).toISOString(),
        },
      ],
      accounts: [{ user_id: 'u1', balance_cents: 1_000_000 }],
      positions: [],
      openOrders: [],
      holds: [],
    };
  }
}

const log = {
  log: () => undefined,
  warn: () => undefined,
  error: () => undefined,
} as unknown as Logger;
let seq = 0;
const ids = { next: (p: string) => `${p}${++seq}` };

function runtime(
  feed: FeedSettings | null = null,
  repo = new FakeRepo(),
  clock = new ManualClock(0),
) {
  const bus = new InProcessEventBus();
  const published: CommittedEvents[] = [];
  bus.stream.subscribe((b) => published.push(b));
  const rt = new EngineRuntime(
    'test',
    repo as unknown as TradingRepository,
    clock,
    ids,
    bus,
    log,
    feed,
    500,
  );
  rt.openHouse(); // as the registry does once the runtime is set up
  return { rt, repo, published };
}

const order = restingBuy;

describe('EngineRuntime market close', () => {
  it('a close that comes due between two batched commands joins their commit, never splits it', async () => {
    const repo = new FakeRepo();
    repo.closeAt = 1_000;
    const clock = new ManualClock(0);
    const { rt } = runtime(null, repo, clock);
    const a = rt.runBatched(order('a'));
    clock.advance(1_000); // mkt_a closes between the two legs
    const b = rt.runBatched(order('b'));
    await Promise.all([a, b]);
    // One transaction: the first leg, the close, the second leg refused (nothing to write).
    expect(repo.commits).toHaveLength(1);
    expect(repo.commits[0].map((e) => e.type)).toEqual(
      expect.arrayContaining(['order.accepted', 'market.status']),
    );
    expect((await b).ok).toBe(false);
    expect(rt.reads.marketSummary('mkt_a')?.status).toBe('CLOSED');
  });

  it('with nothing waiting, the first command after the close commits the close first', () => {
    const repo = new FakeRepo();
    repo.closeAt = 1_000;
    const clock = new ManualClock(0);
    const { rt } = runtime(null, repo, clock);
    clock.advance(1_000);
    const r = rt.run(order('late'));
    expect(r.ok).toBe(false);
    expect(repo.commits).toEqual([
      [{ type: 'market.status', marketId: 'mkt_a', status: 'CLOSED' }],
    ]);
  });
});

describe('EngineRuntime group commit', () => {
  it('commits the commands of one turn in one transaction, and settles only after it', async () => {
    const { rt, repo, published } = runtime();
    let settled = 0;
    const a = rt.runBatched(order('a')).then(() => settled++);
    const b = rt.runBatched(order('b')).then(() => settled++);
    // Both ran at once (the engine sees them), nothing is committed or answered yet.
    expect(rt.reads.openOrders('u1').length).toBe(2);
    expect(repo.commits.length).toBe(0);
    expect(published.length).toBe(0);
    await Promise.resolve();
    expect(settled).toBe(0);
    await Promise.all([a, b]);
    expect(repo.commits.length).toBe(1);
    expect(repo.commits[0].filter((e) => e.type === 'order.accepted').length).toBe(2);
    expect(published.length).toBe(1);
  });

  it('the open-order index sees a batched order at once (client_order_id stays unique)', async () => {
    const { rt } = runtime();
    const first = rt.runBatched(order('dup'));
    expect(rt.openOrderWithClientId('key_1', 'u1', 'dup')).toBeDefined();
    await first;
  });

  it('a synchronous commit writes the waiting batch first, keeping the engine order', async () => {
    const { rt, repo } = runtime();
    const p = rt.runBatched(order('x'));
    rt.run((e) => e.deposit('u1', 5));
    expect(repo.commits.length).toBe(2);
    expect(repo.commits[0][0].type).toBe('order.accepted');
    expect(repo.commits[1].some((e) => e.type === 'balance.changed')).toBe(true);
    await p;
  });

  it('a failed commit refuses every command of the batch and rebuilds the engine from the database', async () => {
    const { rt, repo, published } = runtime();
    repo.fail = true;
    const restoresBefore = repo.restores;
    const results = await Promise.allSettled([
      rt.runBatched(order('p')),
      rt.runBatched(order('q')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(repo.restores).toBe(restoresBefore + 1);
    expect(rt.reads.openOrders('u1').length).toBe(0); // memory never runs ahead of the database
    expect(rt.openOrderWithClientId('key_1', 'u1', 'p')).toBeUndefined();
    // Nothing of the refused batch is published; consumers are told the engine was rebuilt.
    expect(published).toEqual([
      { environment: 'test', world: 'test', events: [], committedAt: 0, rebuilt: true },
    ]);
  });

  it('after a failed flush, a synchronous command runs on the rebuilt engine and writes nothing from the discarded one', async () => {
    const { rt, repo } = runtime();
    const x = rt.run(order('x'));
    if (!x.ok) throw new Error('setup');
    const before = repo.commits.length;
    repo.failOnce = true;
    const pending = rt.runBatched(order('y'));
    // Same turn: the cancel settles the batch first; that commit fails and the engine is rebuilt
    // from the database (which, in this double, holds no orders), so x is unknown there.
    const cancel = rt.run((e) => e.cancelOrder(x.order.id, 'u1'));
    expect(cancel.ok).toBe(false);
    await expect(pending).rejects.toThrow('disk full');
    expect(repo.commits.length).toBe(before); // neither y nor a cancel of x was written
    expect(rt.reads.getOrder(x.order.id)).toBeUndefined();
  });

  it('commit() refuses events produced while a batch is still waiting', async () => {
    const { rt } = runtime();
    const p = rt.runBatched(order('w'));
    expect(() =>
      rt.commit([{ type: 'market.status', marketId: 'mkt_a', status: 'HALTED' }]),
    ).toThrow(/settle/);
    await p;
  });

  it('if even the rebuild fails, the runtime refuses every command until restart', async () => {
    const { rt, repo } = runtime();
    repo.fail = true;
    repo.failRestore = true;
    await expect(rt.runBatched(order('z'))).rejects.toThrow('disk full');
    expect(rt.healthy).toBe(false);
    expect(() => rt.runBatched(order('z2'))).toThrow(/unavailable/);
    expect(() => rt.run((e) => e.deposit('u1', 1))).toThrow(/unavailable/);
  });

  it('ensureAccount for an existing account leaves the waiting batch alone (group commit holds)', async () => {
    const { rt, repo } = runtime();
    const p = rt.runBatched(order('g1'));
    rt.ensureAccount('u1'); // every order request calls this first
    const q = rt.runBatched(order('g2'));
    expect(repo.commits.length).toBe(0);
    await Promise.all([p, q]);
    expect(repo.commits.length).toBe(1);
  });

  it('ensureAccount for a new account settles the waiting batch first, then opens it', async () => {
    const { rt, repo } = runtime();
    const p = rt.runBatched(order('n1'));
    rt.ensureAccount('u2');
    expect(repo.commits.length).toBe(2);
    expect(rt.reads.getAccount('u2')?.balance).toBe(500);
    await p;
  });
});

describe('EngineRuntime: the webhook spool', () => {
  it("writes the spooler's record in the batch's own transaction, with the batch", async () => {
    const { rt, repo } = runtime();
    const seen: number[] = [];
    rt.spooler = (env, events) => {
      seen.push(events.length);
      return env === 'test' ? `spooled ${events.length}` : null;
    };
    await Promise.all([rt.runBatched(order('s1')), rt.runBatched(order('s2'))]);
    expect(repo.commits).toHaveLength(1);
    expect(seen).toEqual([repo.commits[0].length]);
    expect(repo.spools).toEqual([
      { payload: `spooled ${repo.commits[0].length}`, at: 0, commit: 0 },
    ]);
  });

  it('a batch the spooler has nothing for writes no record', async () => {
    const { rt, repo } = runtime();
    rt.spooler = () => null;
    await rt.runBatched(order('n1'));
    expect(repo.commits).toHaveLength(1);
    expect(repo.spools).toHaveLength(0);
  });

  it('a batch whose commit fails keeps no record: its events roll back with its orders', async () => {
    const { rt, repo, published } = runtime();
    rt.spooler = () => 'spooled';
    repo.failAtCommit = true;
    await expect(rt.runBatched(order('f1'))).rejects.toThrow('disk full at commit');
    expect(repo.spools).toHaveLength(0);
    expect(published.map((b) => b.rebuilt)).toEqual([true]);
  });
});

describe('EngineRuntime: committed reads', () => {
  it('committedEngine commits the waiting batch first (and publishes it)', async () => {
    const { rt, repo, published } = runtime();
    const p = rt.runBatched(order('c1'));
    expect(repo.commits.length).toBe(0);
    const engine = rt.committedEngine();
    expect(repo.commits.length).toBe(1);
    expect(published.length).toBe(1);
    expect(engine.depth('mkt_a', 5)!.bids).toEqual([{ price: 10, quantity: 1 }]);
    await p;
  });

  it('a waiting batch whose commit fails is not in the engine committedEngine returns', async () => {
    const { rt, repo } = runtime();
    const p = rt.runBatched(order('c2'));
    expect(rt.reads.depth('mkt_a', 5)!.bids).toHaveLength(1); // applied, not yet durable
    repo.failOnce = true;
    expect(rt.committedEngine().depth('mkt_a', 5)!.bids).toEqual([]);
    await expect(p).rejects.toThrow('disk full');
  });
});

describe('EngineRuntime: the paper price feed', () => {
  const feed = (seed: number): FeedSettings => ({
    seed,
    intervalMs: 0,
    levels: 5,
    size: 100,
    refill: 25,
  });
  /** The house book after each of n ticks: best bid and ask of the one market. */
  const path = (rt: EngineRuntime, n: number): [number, number][] => {
    const out: [number, number][] = [];
    for (let i = 0; i < n; i++) {
      rt.tick();
      const d = rt.reads.depth('mkt_a', 1)!;
      out.push([d.bids[0]?.price ?? 0, d.asks[0]?.price ?? 100]);
    }
    return out;
  };

  it('moves the house quotes by itself, reproducibly: same seed, same path; another seed, another', () => {
    const a = path(runtime(feed(7)).rt, 60);
    const b = path(runtime(feed(7)).rt, 60);
    const c = path(runtime(feed(8)).rt, 60);
    expect(a).toEqual(b);
    expect(c).not.toEqual(a);
    // It moves: more than one best bid along the way, and the house never crosses itself.
    expect(new Set(a.map(([bid]) => bid)).size).toBeGreaterThan(1);
    for (const [bid, ask] of a) expect(bid).toBeLessThan(ask);
  });

  it('a restart quotes where the market was: the reference (a sandbox move included) is stored', () => {
    const first = runtime(feed(7));
    first.rt.setReference('mkt_a', 80);
    expect(first.repo.references.get('mkt_a')).toBe(80);
    for (let i = 0; i < 5; i++) first.rt.tick();
    const stored = first.repo.references.get('mkt_a')!;
    expect(stored).toBe(first.rt.reference('mkt_a'));
    // Restarted on the same data: the opening quote straddles the stored reference.
    const again = runtime(feed(7), first.repo);
    expect(again.rt.reference('mkt_a')).toBe(stored);
    const d = again.rt.reads.depth('mkt_a', 1)!;
    expect(d.bids[0].price).toBeLessThan(stored + 1);
    expect(d.asks[0].price).toBeGreaterThan(stored - 1);
    expect(again.published.length).toBeGreaterThan(0);
  });

  it('every tick is committed and published; a reference set by hand is where the walk goes on from', () => {
    const { rt, repo, published } = runtime(feed(7));
    const before = repo.commits.length;
    rt.tick();
    expect(repo.commits.length).toBe(before + 1);
    expect(published.at(-1)!.events.some((e) => e.type === 'book.level')).toBe(true);
    expect(rt.setReference('mkt_a', 80)).toBe(true);
    const d = rt.reads.depth('mkt_a', 1)!;
    expect([d.bids[0].price, d.asks[0].price]).toEqual([79, 81]);
    const next = path(rt, 3);
    for (const [bid] of next) expect(Math.abs(bid - 79)).toBeLessThanOrEqual(6);
    expect(rt.setReference('mkt_nope', 50)).toBe(false);
  });

  it('a feed tick whose commit fails is caught (the engine is rebuilt; the process goes on)', async () => {
    const { rt, repo } = runtime({ ...feed(7), intervalMs: 5 });
    const restores = repo.restores;
    repo.failOnce = true;
    rt.startFeed();
    await new Promise((r) => setTimeout(r, 40));
    rt.stop();
    expect(repo.restores).toBeGreaterThan(restores);
    expect(rt.healthy).toBe(true);
  });

  it('the live runtime (no feed) never ticks the book', () => {
    const { rt, repo } = runtime(null);
    const before = repo.commits.length;
    rt.tick();
    expect(repo.commits.length).toBe(before);
    expect(rt.reads.depth('mkt_a', 5)).toEqual({ marketId: 'mkt_a', bids: [], asks: [] });
  });
});

describe('EngineRuntime: created markets', () => {
  const feed: FeedSettings = { seed: 1, intervalMs: 0, levels: 5, size: 100, refill: 25 };

  it("stores the row in the transaction of the market's events, the house quoting it at once", () => {
    const { rt, repo } = runtime(feed);
    const stored: string[] = [];
    const before = repo.commits.length;
    const r = rt.addMarket({ id: 'mkt_new', closeAt: 4_000_000_000_000, referencePrice: 30 }, () =>
      stored.push('mkt_new'),
    );
    expect(r.ok).toBe(true);
    expect(stored).toEqual(['mkt_new']);
    expect(repo.commits.length).toBe(before + 1); // one transaction: status and house quotes
    const d = rt.reads.depth('mkt_new', 1)!;
    expect([d.bids[0].price, d.asks[0].price]).toEqual([29, 31]);
  });

  it('a row that cannot be stored leaves no market in the engine (rebuilt from the database)', () => {
    const { rt } = runtime(feed);
    expect(() =>
      rt.addMarket({ id: 'mkt_doomed', closeAt: 4_000_000_000_000, referencePrice: 50 }, () => {
        throw new Error('UNIQUE constraint failed: markets.slug');
      }),
    ).toThrow('UNIQUE constraint failed');
    expect(rt.reads.marketSummary('mkt_doomed')).toBeUndefined();
    expect(rt.reads.marketSummary('mkt_a')).toBeDefined();
    expect(rt.healthy).toBe(true);
  });

  it('HALTED withdraws the house and refuses orders; OPEN quotes again', () => {
    const { rt } = runtime(feed);
    rt.addMarket({ id: 'mkt_h', closeAt: 4_000_000_000_000, referencePrice: 60 }, () => {});
    expect(rt.setTradingStatus('mkt_h', 'HALTED', 60).ok).toBe(true);
    expect(rt.reads.depth('mkt_h', 1)).toMatchObject({ bids: [], asks: [] });
    const refused = rt.run(restingBuy(undefined, 'mkt_h'));
    expect(refused).toMatchObject({ ok: false, code: 'MARKET_NOT_OPEN' });
    expect(rt.setTradingStatus('mkt_h', 'OPEN', 60).ok).toBe(true);
    expect(rt.reads.depth('mkt_h', 1)!.asks[0].price).toBe(61);
  });
});

describe('EngineRuntime: the fence of applied Idempotency-Keys', () => {
  /** Two requests under one key: each its own claim of it (what a peer's settle allows). */
  const first = { ownerId: 'test:u1', key: 'k-1', claimId: 'claim-1', claimedAt: 0 };
  const second = { ...first, claimId: 'claim-2' };

  /** The refusal a command under `scope` meets, or null when it runs. */
  async function refusal(p: () => Promise<unknown>): Promise<DomainError | null> {
    try {
      await p();
      return null;
    } catch (err) {
      if (err instanceof DomainError) return err;
      throw err;
    }
  }

  function expectApplied(err: DomainError | null, orderIds: string[], referenceIds: string[] = []) {
    expect(err?.code).toBe('IDEMPOTENT_REQUEST_APPLIED');
    expect(err?.details).toEqual({
      idempotency_key: 'k-1',
      order_ids: orderIds,
      reference_ids: referenceIds,
    });
  }

  it('refuses a second request under a key whose first placed an order: nothing changes, nothing is written', async () => {
    const { rt, repo, published } = runtime();
    const placed = await rt.runBatched(order('a'), first);
    if (!placed.ok) throw new Error('setup');
    const [commits, events] = [repo.commits.length, published.length];
    const err = await refusal(() => rt.runBatched(order('b'), second));
    expectApplied(err, [placed.order.id]);
    expect(rt.reads.openOrders('u1').map((o) => o.id)).toEqual([placed.order.id]);
    expect(rt.openOrderWithClientId('key_1', 'u1', 'b')).toBeUndefined();
    expect(repo.commits.length).toBe(commits);
    expect(published.length).toBe(events);
    expect(repo.stored).toEqual([
      { ownerId: 'test:u1', key: 'k-1', orderIds: [placed.order.id], referenceIds: [], at: 0 },
    ]);
    // Another owner's key of the same name, and a command under no key, are not fenced.
    expect((await rt.runBatched(order('c'), { ...second, ownerId: 'test:u2' })).ok).toBe(true);
    expect((await rt.runBatched(order('d'))).ok).toBe(true);
  });

  it('the second arriving while the first waits in the same batch: the first commits, the second is refused', async () => {
    const { rt, repo } = runtime();
    const a = rt.runBatched(order('a'), first);
    const b = refusal(() => rt.runBatched(order('b'), second));
    const placed = await a;
    if (!placed.ok) throw new Error('setup');
    expectApplied(await b, [placed.order.id]);
    expect(repo.commits.length).toBe(1);
    expect(rt.reads.openOrders('u1').length).toBe(1);
  });

  it("one request's commands (a batch's legs, one claim) all run and make one effect", async () => {
    const { rt, repo } = runtime();
    const legs = await Promise.all([
      rt.runBatched(order('a'), first),
      rt.runBatched(order('b'), { ...first }),
    ]);
    const ids = legs.map((l) => (l.ok ? l.order.id : ''));
    expect(repo.stored.map((s) => s.orderIds)).toEqual([ids]);
    expectApplied(await refusal(() => rt.runBatched(order('c'), second)), ids);
  });

  it('a synchronous command (a deposit) is fenced too, its answer naming the ledger reference', async () => {
    const { rt, repo } = runtime();
    expect(rt.run((e) => e.deposit('u1', 5, 'dep-1'), first).ok).toBe(true);
    const commits = repo.commits.length;
    let err: unknown = null;
    try {
      rt.run((e) => e.deposit('u1', 5, 'dep-2'), second);
    } catch (e) {
      err = e;
    }
    expectApplied(err as DomainError, [], ['dep-1']);
    expect(repo.commits.length).toBe(commits);
    expect(rt.account('u1')?.balance).toBe(1_000_005);
  });

  it('a key past its window may be used again (its effect is replaced)', async () => {
    const clock = new ManualClock(0);
    const { rt, repo } = runtime(null, new FakeRepo(), clock);
    await rt.runBatched(order('a'), first);
    clock.advance(IDEMPOTENCY_TTL_MS - 1);
    expect(await refusal(() => rt.runBatched(order('b'), second))).not.toBeNull();
    clock.advance(1);
    const again = await rt.runBatched(order('b'), { ...second, claimedAt: clock.now() });
    if (!again.ok) throw new Error('refused');
    expect(repo.stored.map((s) => [s.orderIds, s.at])).toEqual([
      [[again.order.id], IDEMPOTENCY_TTL_MS],
    ]);
  });

  it('a new writer term (the engine rebuilt from the database) still refuses', async () => {
    const { rt, repo } = runtime();
    const placed = await rt.runBatched(order('a'), first);
    if (!placed.ok) throw new Error('setup');
    const restores = repo.restores;
    rt.reload();
    expect(repo.restores).toBe(restores + 1);
    expectApplied(await refusal(() => rt.runBatched(order('b'), second)), [placed.order.id]);
    // A key stored past its window is not loaded.
    const clock = new ManualClock(IDEMPOTENCY_TTL_MS);
    const later = runtime(null, repo, clock).rt;
    expect((await later.runBatched(order('c'), { ...second, claimedAt: clock.now() })).ok).toBe(
      true,
    );
  });

  it('a failed commit does not leave the key recorded: the retry runs', async () => {
    const { rt, repo } = runtime();
    repo.failOnce = true;
    await expect(rt.runBatched(order('a'), first)).rejects.toThrow('disk full');
    repo.failOnce = true;
    expect(() => rt.run((e) => e.deposit('u1', 5, 'dep-1'), first)).toThrow('disk full');
    expect(repo.stored).toEqual([]);
    const retry = await rt.runBatched(order('b'), second);
    expect(retry.ok).toBe(true);
    expect(repo.stored.map((s) => s.key)).toEqual(['k-1']);
  });

  it('a sandbox reset forgetting the key lets it run its request again', async () => {
    const { rt } = runtime();
    await rt.runBatched(order('a'), first);
    rt.forgetAppliedKey('test:u1', 'k-1');
    expect((await rt.runBatched(order('b'), second)).ok).toBe(true);
  });
});
