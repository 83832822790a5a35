import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { IdGenerator } from '../../src/common/ids/id-generator.js';
import { EngineRegistry } from '../../src/modules/trading/engine-registry.js';
import { failWrites } from '../support/fail-writes.js';
import { expectContractError, type Running } from '../support/harness.js';
import { openDatabaseOf } from '../support/test-database.js';
import {
  createMarket,
  created,
  creator,
  marketBody,
  patchMarket,
  resolveMarket,
} from '../support/markets-create.js';
import {
  as,
  expectValidation,
  getOrder,
  limit,
  paperQuery,
  place,
  placeRaw,
  startOrdersApp,
  TRADABLE,
  wallet,
  type Trader,
} from '../support/orders.js';

const orderbook = (svc: Running, t: Trader, id: string) =>
  as(t, `${svc.api}/markets/${id}/orderbook`);

/** PATCH and resolve of created markets, a failed create leaving nothing, and a restart. */
describe('markets: editing, resolving and keeping created markets', () => {
  let svc: Running;
  let owner: { paper: Trader; live: Trader };
  let stranger: { paper: Trader; live: Trader };

  beforeAll(async () => {
    svc = await startOrdersApp();
    owner = await creator(svc);
    stranger = await creator(svc, 'stranger@example.test');
  });
  afterAll(() => svc.close());

  it('PATCH edits title, description and close_time; a past close_time changes nothing (422)', async () => {
    const m = await created(svc, owner.paper, marketBody('edit-me'));
    const res = await patchMarket(svc, owner.paper, m.id, {
      title: 'Renamed',
      description: 'Line one\nline two',
      close_time: '2027-02-01T10:00:00+01:00',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: m.id,
      title: 'Renamed',
      description: 'Line one\nline two',
      close_time: '2027-02-01T09:00:00.000Z',
      status: 'OPEN',
    });
    const past = await patchMarket(svc, owner.paper, m.id, {
      title: 'Not applied',
      close_time: '2026-11-22T11:00:00Z',
    });
    expect(expectContractError(past, 422, 'MARKET_RULE_VIOLATED').details.field).toBe('close_time');
    expectValidation(await patchMarket(svc, owner.paper, m.id, { status: 'CLOSED' }), 'status');
    expectValidation(await patchMarket(svc, owner.paper, m.id, { title: '' }), 'title');
    expect((await as(owner.paper, `${svc.api}/markets/${m.id}`)).body.title).toBe('Renamed');
  });

  it('only the creator may PATCH or resolve: another user, a seeded market (403), an unknown id (404)', async () => {
    const m = await created(svc, owner.paper, marketBody('mine-only'));
    for (const res of [
      await patchMarket(svc, stranger.paper, m.id, { title: 'Theirs' }),
      await resolveMarket(svc, stranger.paper, m.id, 'YES'),
      await patchMarket(svc, owner.paper, TRADABLE[0].id, { status: 'HALTED' }),
      await resolveMarket(svc, owner.paper, TRADABLE[0].id, 'NO'),
    ]) {
      expectContractError(res, 403, 'NOT_MARKET_CREATOR');
    }
    const unknown = await patchMarket(svc, owner.paper, 'mkt_nosuchmarket', { title: 'x' });
    expect(expectContractError(unknown, 404, 'NOT_FOUND').details).toEqual({
      market_id: 'mkt_nosuchmarket',
    });
    // The other world's market is not found, not forbidden.
    expectContractError(await patchMarket(svc, owner.live, m.id, { title: 'x' }), 404, 'NOT_FOUND');
    expect((await as(owner.paper, `${svc.api}/markets/${m.id}`)).body.title).toBe(
      'Market mine-only',
    );
  });

  it('HALTED takes no new orders and withdraws the house; OPEN brings both back', async () => {
    const m = await created(svc, owner.paper, marketBody('halt-me', { reference_price: 60 }));
    const resting = await place(svc, owner.paper, limit(m, 'BUY', 'YES', 40, 2));
    const halted = await patchMarket(svc, owner.paper, m.id, { status: 'HALTED' });
    expect(halted.body).toMatchObject({ status: 'HALTED', best_ask: null });
    const refused = await placeRaw(svc, owner.paper, limit(m, 'BUY', 'YES', 61, 1));
    expectContractError(refused, 422, 'MARKET_NOT_OPEN');
    const book = (await orderbook(svc, owner.paper, m.id)).body;
    expect(book.asks).toEqual([]);
    expect(book.bids).toEqual([{ price: 40, quantity: 2 }]); // the resting order stays
    expect((await getOrder(svc, owner.paper, resting.id)).status).toBe('OPEN');

    const reopened = await patchMarket(svc, owner.paper, m.id, { status: 'OPEN' });
    expect(reopened.body).toMatchObject({ status: 'OPEN', best_bid: 59, best_ask: 61 });
    const filled = await place(svc, owner.paper, limit(m, 'BUY', 'YES', 61, 1));
    expect(filled.status).toBe('FILLED');
  });

  it('a market PATCHed to close sooner closes then, on the service clock', async () => {
    const m = await created(svc, owner.paper, marketBody('close-sooner'));
    await patchMarket(svc, owner.paper, m.id, { close_time: '2026-11-22T13:00:00Z' });
    (svc.clock as ManualClock).advance(2 * 3600_000);
    const res = await as(owner.paper, `${svc.api}/markets/${m.id}`);
    expect(res.body.status).toBe('CLOSED');
    const closed = await patchMarket(svc, owner.paper, m.id, { status: 'OPEN' });
    expectContractError(closed, 422, 'MARKET_NOT_OPEN');
  });

  it('resolve pays each winning contract 100 cents through the sandbox path; a second resolve is 409', async () => {
    const m = await created(svc, owner.paper, marketBody('pay-out', { reference_price: 40 }));
    const before = (await wallet(svc, stranger.paper)).balance;
    const bought = await place(svc, stranger.paper, limit(m, 'BUY', 'YES', 41, 10));
    expect(bought).toMatchObject({ status: 'FILLED', average_fill_price: 41 });
    await place(svc, stranger.paper, limit(m, 'BUY', 'YES', 20, 3)); // rests, then cancelled
    const res = await resolveMarket(svc, owner.paper, m.id, 'YES');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      market_id: m.id,
      status: 'RESOLVED',
      outcome: 'YES',
      cancelled_orders: 1,
      payout_cents: 1000,
      your_payout_cents: 0,
    });
    expect((await wallet(svc, stranger.paper)).balance).toBe(before - 410 + 1000);
    expect((await as(stranger.paper, `${svc.api}/markets/${m.id}`)).body).toMatchObject({
      status: 'RESOLVED',
      outcome: 'YES',
    });
    const again = await resolveMarket(svc, owner.paper, m.id, 'NO');
    expectContractError(again, 409, 'MARKET_ALREADY_RESOLVED');
    expectContractError(
      await patchMarket(svc, owner.paper, m.id, { title: 'x' }),
      422,
      'MARKET_NOT_OPEN',
    );
    expectValidation(await resolveMarket(svc, owner.paper, m.id, 'MAYBE'), 'outcome');
  });

  it('resolve works in the live world too', async () => {
    const m = await created(svc, owner.live, marketBody('live-resolve'));
    const res = await resolveMarket(svc, owner.live, m.id, 'NO');
    expect(res.body).toMatchObject({ status: 'RESOLVED', outcome: 'NO', payout_cents: 0 });
    expect((await as(owner.live, `${svc.api}/markets/${m.id}`)).body.status).toBe('RESOLVED');
  });

  it('a create whose commit fails leaves no market in the engine or the database, in either world', async () => {
    const ids = svc.app.get(IdGenerator);
    const next = ids.next.bind(ids);
    let last = '';
    ids.next = (prefix: string) => {
      const id = next(prefix);
      if (prefix === 'mkt') last = id;
      return id;
    };
    const engines = svc.app.get(EngineRegistry);
    for (const [world, t, file] of [
      // The engine's status write fails after the market row went in (same transaction).
      ['test', owner.paper, 'paper'],
      ['live', owner.live, 'live'],
    ] as const) {
      const restore = failWrites(svc.dataDir, file, 'markets', 'UPDATE', {
        when: "(SELECT COUNT(*) FROM markets WHERE slug = 'doomed') > 0",
        message: 'forced failure',
      });
      const res = await createMarket(svc, t, marketBody('doomed'));
      restore();
      expectContractError(res, 500, 'INTERNAL');
      expect(engines.get(world).marketSummary(last)).toBeUndefined();
      expectContractError(await as(t, `${svc.api}/markets/${last}`), 404, 'NOT_FOUND');
      const rows = openDatabaseOf(svc.dataDir, file, { readonly: true });
      expect(rows.prepare(`SELECT id FROM markets WHERE slug = 'doomed'`).all()).toEqual([]);
      rows.close();
      // The engine still works, and the slug is free.
      const ok = await createMarket(svc, t, marketBody('doomed'));
      expect(ok.status).toBe(201);
    }
    ids.next = next;
  });
});

describe('markets: a created market survives a restart', () => {
  it('keeps its row, its creator, the resting orders and the house quotes', async () => {
    let svc = await startOrdersApp();
    const { paper } = await creator(svc);
    const m = await created(svc, paper, marketBody('survivor', { reference_price: 70 }));
    const resting = await place(svc, paper, limit(m, 'BUY', 'YES', 50, 3));
    await svc.close({ keepData: true });

    svc = await startOrdersApp({ dataDir: svc.dataDir });
    try {
      const t: Trader = { ...paper };
      const res = await as(t, `${svc.api}/markets/${m.id}`);
      expect(res.body).toMatchObject({
        slug: 'survivor',
        status: 'OPEN',
        best_bid: 69,
        best_ask: 71,
      });
      const book = (await orderbook(svc, t, m.id)).body;
      expect(book.bids).toContainEqual({ price: 50, quantity: 3 });
      expect(book.asks).toHaveLength(5);
      expect((await getOrder(svc, t, resting.id)).status).toBe('OPEN');
      expect(paperQuery(svc, 'SELECT creator_id FROM markets WHERE id = ?', m.id)).toEqual([
        { creator_id: paper.userId },
      ]);
      // Still its creator's to change.
      expect((await patchMarket(svc, t, m.id, { title: 'After restart' })).status).toBe(200);
      expect((await createMarket(svc, t, marketBody('survivor'))).status).toBe(409);
    } finally {
      await svc.close();
    }
  });
});
