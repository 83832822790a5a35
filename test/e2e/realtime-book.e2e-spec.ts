import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { http, type Running } from '../support/harness.js';
import {
  as,
  book,
  ORDER_SCOPES,
  prng,
  startOrdersApp,
  trader,
  TRADABLE,
  type OrderBody,
  type Trader,
} from '../support/orders.js';
import { ClientBook, WsClient, type BookLevel } from '../support/ws.js';

const WS_SCOPES = [...ORDER_SCOPES, 'websocket', 'wallet:write'];
const m = TRADABLE[1];
const BOOK = `orderbook:${m.id}`;
/** Override with REALTIME_BOOK_SEED to try other streams. */
const SEED = Number(process.env.REALTIME_BOOK_SEED ?? 20261122);
const OPS = 200;
const REST_DEPTH = 50;

/**
 * Snapshot + deltas reproduce the REST book: a seeded random stream of ~200 operations by two
 * users (resting limits at random prices on both sides, crossing limits, market orders, cancels,
 * amends) runs through REST while a client applies the orderbook channel; at checkpoints the
 * client's book equals GET /markets/{id}/orderbook?depth=99, a fresh subscription's snapshot, and
 * the whole book as the quote operation walks it.
 */
describe('realtime: orderbook snapshot + deltas = the REST book', () => {
  let svc: Running;
  let users: Trader[];

  beforeAll(async () => {
    svc = await startOrdersApp();
    users = [
      await trader(svc, undefined, { scopes: WS_SCOPES }),
      await trader(svc, 'responder@sandbox.test', { scopes: WS_SCOPES }),
    ];
  });
  afterAll(async () => {
    await svc.close();
  });

  /**
   * GET /markets/{id}/orderbook at its largest depth (the route caps depth at 50 levels a side;
   * the checkpoints assert the client's book is shallower, so this is the whole book).
   */
  async function restBook(): Promise<{ bids: BookLevel[]; asks: BookLevel[] }> {
    const res = await http(`${svc.api}/markets/${m.id}/orderbook?depth=${REST_DEPTH}`, {
      headers: { 'x-api-key': users[0].key },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      market_id: m.id,
      environment: 'test',
      bids: expect.any(Array),
      asks: expect.any(Array),
    });
    return { bids: res.body.bids as BookLevel[], asks: res.body.asks as BookLevel[] };
  }

  async function freshSnapshot(): Promise<{ bids: BookLevel[]; asks: BookLevel[] }> {
    const c = await WsClient.authed(svc.baseUrl, { api_key: users[1].key });
    expect((await c.subscribe([BOOK])).type).toBe('subscribed');
    const snap = await c.waitFor((x) => x.type === 'event' && x.channel === BOOK);
    await c.close();
    expect(snap.seq).toBe(1);
    expect(snap.data.kind).toBe('snapshot');
    return { bids: snap.data.bids, asks: snap.data.asks };
  }

  it('a seeded random stream of orders, cancels and amends by two users', async () => {
    const rnd = prng(SEED);
    const int = (lo: number, hi: number): number => lo + Math.floor(rnd() * (hi - lo + 1));
    const open: { user: number; id: string }[] = [];
    const counts: Record<string, number> = {};
    const r = m.reference;
    const price = (): number => Math.max(1, Math.min(99, r + int(-12, 12)));

    /** One random operation through REST. */
    async function step(): Promise<void> {
      const u = int(0, 1);
      const t = users[u];
      const roll = rnd();
      let kind: string;
      if (roll >= 0.96) {
        // The sandbox moves the reference: the house re-quotes its whole ladder in one batch,
        // taking resting orders the new ladder crosses.
        const res = await as(t, `${svc.api}/sandbox/markets/${m.id}/price`, {
          method: 'POST',
          json: { price: r + int(-4, 4) },
        });
        expect(res.status).toBe(200);
        kind = 'price-move';
      } else if (roll < 0.6 || open.length === 0) {
        // A limit in one of the four forms; a price across the book trades first.
        const yesPrice = price();
        const form = int(0, 3);
        const [action, side] = (
          [
            ['BUY', 'YES'],
            ['SELL', 'NO'],
            ['SELL', 'YES'],
            ['BUY', 'NO'],
          ] as const
        )[form];
        const body: OrderBody = {
          market_id: m.id,
          action,
          side,
          type: 'LIMIT',
          price: side === 'YES' ? yesPrice : 100 - yesPrice,
          quantity: int(1, 40),
        };
        if (rnd() < 0.1) body.time_in_force = 'IOC';
        const res = await as(t, `${svc.api}/orders`, { method: 'POST', json: body });
        expect(res.status).toBe(201);
        if (res.body.status === 'OPEN' || res.body.status === 'PARTIALLY_FILLED')
          open.push({ user: u, id: res.body.id as string });
        kind = res.body.fills.length > 0 ? 'limit-crossing' : 'limit-resting';
      } else if (roll < 0.68) {
        const body: OrderBody = {
          market_id: m.id,
          action: rnd() < 0.5 ? 'BUY' : 'SELL',
          side: rnd() < 0.5 ? 'YES' : 'NO',
          type: 'MARKET',
          quantity: int(1, 60),
          time_in_force: 'IOC',
        };
        const res = await as(t, `${svc.api}/orders`, { method: 'POST', json: body });
        expect([201, 422]).toContain(res.status);
        kind = 'market';
      } else if (roll < 0.85) {
        const i = int(0, open.length - 1);
        const o = open.splice(i, 1)[0];
        const res = await as(users[o.user], `${svc.api}/orders/${o.id}`, { method: 'DELETE' });
        expect([200, 409]).toContain(res.status); // 409: filled meanwhile
        kind = 'cancel';
      } else {
        const o = open[int(0, open.length - 1)];
        const json = rnd() < 0.5 ? { quantity: int(1, 40) } : { price: int(1, 99) };
        const res = await as(users[o.user], `${svc.api}/orders/${o.id}`, {
          method: 'PATCH',
          json,
        });
        // 409: no longer open; 422: e.g. a new price that would need more funds; 400: a new
        // quantity not above what already filled.
        expect([200, 400, 409, 422]).toContain(res.status);
        if (res.status === 400) expect(res.body.error.code).toBe('VALIDATION_FAILED');
        if (res.status === 200 && !['OPEN', 'PARTIALLY_FILLED'].includes(res.body.status)) {
          open.splice(open.indexOf(o), 1);
        }
        kind = 'amend';
      }
      counts[kind] = (counts[kind] ?? 0) + 1;
    }

    const c = await WsClient.authed(svc.baseUrl, { api_key: users[0].key });
    const client = new ClientBook();
    c.onMessage((msg) => {
      if (msg.type === 'event' && msg.channel === BOOK) client.apply(msg);
    });
    // A few operations first, so the snapshot is not just the house's quotes.
    for (let i = 0; i < 10; i++) await step();
    // Subscribe while a burst of operations is in flight: snapshot and deltas must still join.
    const burst = Promise.all([step(), step(), step(), step()]);
    const sub = c.subscribe([BOOK]);
    await burst;
    expect((await sub).type).toBe('subscribed');

    let restChecked = 0;
    for (let i = 14; i < OPS; i++) {
      if (i === 120) {
        // One user resets their paper account: all their orders go at once.
        const res = await as(users[1], `${svc.api}/sandbox/reset`, { method: 'POST' });
        expect(res.status).toBe(200);
        open.splice(0, open.length, ...open.filter((o) => o.user !== 1));
        counts.reset = 1;
      }
      await step();
      if ((i + 1) % 50 === 0 || i === OPS - 1) {
        await c.sync();
        const mine = client.levels();
        expect(mine.bids.length).toBeLessThan(REST_DEPTH);
        expect(mine.asks.length).toBeLessThan(REST_DEPTH);
        expect(mine).toEqual(await freshSnapshot());
        expect(mine).toEqual(await book(svc, users[0], m.id));
        expect(mine).toEqual(await restBook());
        restChecked++;
      }
    }
    expect(client.snapshots).toBe(1);
    expect(client.deltas).toBeGreaterThan(150);
    // The stream did what it claims: every kind of operation happened.
    for (const k of ['limit-resting', 'limit-crossing', 'market', 'cancel', 'amend', 'price-move'])
      expect(counts[k] ?? 0).toBeGreaterThan(0);
    expect(counts.reset).toBe(1);
    expect(restChecked).toBe(4); // after ops 49, 99, 149 and 199
    console.log(
      `realtime-book: ${client.deltas} deltas, ops ${JSON.stringify(counts)}, REST orderbook checkpoints: ${restChecked}`,
    );
    await c.close();
  });
});
