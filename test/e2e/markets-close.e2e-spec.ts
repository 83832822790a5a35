import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { expectContractError, http, type Running } from '../support/harness.js';
import {
  as,
  limit,
  place,
  SEED_MARKETS,
  startOrdersApp,
  trader,
  type Trader,
} from '../support/orders.js';
import { openDatabaseOf } from '../support/test-database.js';

/**
 * A market closes at its close_time, in both engines: the first command or read at or after it
 * (or a timer within a second) moves it to CLOSED. New orders answer 422 MARKET_NOT_OPEN, the
 * house's quotes are withdrawn, resting orders stay and can be cancelled, and a sandbox resolve
 * still settles it. Found by black-box testing: a market past its close time kept trading.
 */
describe('markets close at their close_time', () => {
  let svc: Running;
  let t: Trader;
  let first: { id: string; close_time: string; status: string };
  let later: { id: string; close_time: string };
  let third: { id: string; close_time: string };

  beforeAll(async () => {
    // A minute before the earliest seeded close time (2027-01-03T17:00:00Z).
    svc = await startOrdersApp({ now: '2027-01-03T16:59:00.000Z' });
    t = await trader(svc, 'closer@orders.test', {
      scopes: ['orders:read', 'orders:write', 'markets:read', 'wallet:read', 'wallet:write'],
    });
    // The markets of seeds/markets.json (fixed close times), not the sports events' own ones,
    // which are seeded relative to the start.
    const seeded = new Set(SEED_MARKETS.map((m) => m.id));
    const page = await http(`${svc.api}/markets?limit=200`);
    [first, later, third] = (page.body.data as { id: string }[]).filter((m) =>
      seeded.has(m.id),
    ) as [typeof first, typeof later, typeof third];
  });
  afterAll(async () => {
    await svc.close();
  });

  it('trades until the close time, then refuses orders while cancels and resolve still work', async () => {
    expect(first.close_time).toBe('2027-01-03T17:00:00.000Z');
    expect(first.status).toBe('OPEN');
    const book = async () =>
      (await as(t, `${svc.api}/markets/${first.id}/orderbook?depth=99`)).body as {
        bids: { price: number; quantity: number }[];
        asks: { price: number; quantity: number }[];
      };
    const before = await book();
    expect(before.asks.length).toBeGreaterThan(0); // the house quotes
    const resting = await place(svc, t, limit(first, 'BUY', 'YES', 2, 10));

    (svc.clock as ManualClock).advance(60_000); // 17:00:00: closed

    // A quote is the first call after the close: it already answers as an order would.
    expectContractError(
      await as(t, `${svc.api}/orders/quote`, {
        method: 'POST',
        json: limit(first, 'BUY', 'YES', 3, 1),
      }),
      422,
      'MARKET_NOT_OPEN',
    );

    expectContractError(
      await as(t, `${svc.api}/orders`, {
        method: 'POST',
        json: limit(first, 'BUY', 'YES', 3, 1),
      }),
      422,
      'MARKET_NOT_OPEN',
    );
    expect((await as(t, `${svc.api}/markets/${first.id}`)).body.status).toBe('CLOSED');
    // Live readers (no key) see it closed too.
    expect((await http(`${svc.api}/markets/${first.id}`)).body.status).toBe('CLOSED');
    // The house withdrew; the user's resting bid is all that is left.
    expect(await book()).toMatchObject({ bids: [{ price: 2, quantity: 10 }], asks: [] });
    const amend = expectContractError(
      await as(t, `${svc.api}/orders/${resting.id}`, { method: 'PATCH', json: { quantity: 5 } }),
      422,
      'MARKET_NOT_OPEN',
    );
    expect(amend.details).toEqual({ market_id: first.id, status: 'CLOSED' });
    expect(amend.message).toContain('CLOSED');
    const cancelled = await as(t, `${svc.api}/orders/${resting.id}`, { method: 'DELETE' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('CANCELLED');

    // A market closing later still trades.
    expect(Date.parse(later.close_time)).toBeGreaterThan(svc.clock.now());
    expect((await as(t, `${svc.api}/markets/${later.id}`)).body.status).toBe('OPEN');
    await place(svc, t, limit(later, 'BUY', 'YES', 2, 1));

    // A closed market still resolves.
    const resolved = await as(t, `${svc.api}/sandbox/markets/${first.id}/resolve`, {
      method: 'POST',
      json: { outcome: 'NO' },
    });
    expect(resolved.status).toBe(200);
    expect((await as(t, `${svc.api}/markets/${first.id}`)).body.status).toBe('RESOLVED');
  });

  it('closes with no command arriving: the timer moves a due market within a second', async () => {
    (svc.clock as ManualClock).advance(Date.parse(later.close_time) - svc.clock.now());
    const deadline = Date.now() + 3000;
    let status = '';
    while (Date.now() < deadline) {
      // Read straight from the database, so only the timer can have closed it.
      const db = openDatabaseOf(svc.dataDir, 'paper', { readonly: true });
      status = (
        db.prepare('SELECT status FROM markets WHERE id = ?').get(later.id) as { status: string }
      ).status;
      db.close();
      if (status === 'CLOSED') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe('CLOSED');
  });

  it('a sandbox price move right after the close is refused and fills nothing', async () => {
    const resting = await place(svc, t, limit(third, 'BUY', 'YES', 2, 10));
    (svc.clock as ManualClock).advance(Date.parse(third.close_time) - svc.clock.now());
    // The first call after the close: the house must not re-quote (and take the bid) first.
    expectContractError(
      await as(t, `${svc.api}/sandbox/markets/${third.id}/price`, {
        method: 'POST',
        json: { price: 1 },
      }),
      422,
      'MARKET_NOT_OPEN',
    );
    const order = (await as(t, `${svc.api}/orders/${resting.id}`)).body;
    expect(order).toMatchObject({ status: 'OPEN', filled_quantity: 0 });
    expect((await as(t, `${svc.api}/markets/${third.id}/trades`)).body.data).toEqual([]);
  });
});
