import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { http, type Running } from '../support/harness.js';
import { createKey, sessionFor } from '../support/keys.js';
import {
  as,
  cancel,
  limit,
  ORDER_SCOPES,
  place,
  startOrdersApp,
  trader,
  TRADABLE,
  type Trader,
} from '../support/orders.js';
import { ClientBook, WsClient, type WsMessage } from '../support/ws.js';
import { failWrites } from '../support/fail-writes.js';

const WS_SCOPES = [...ORDER_SCOPES, 'websocket'];
const m = TRADABLE[2];
const PRIVATE = ['orders', 'fills', 'positions', 'wallet'];
const PUBLIC = [`orderbook:${m.id}`, `trades:${m.id}`, 'ticker'];

interface Party {
  name: string;
  t: Trader;
  ws: WsClient;
}

/** Events (not acks, not snapshots) that arrived from index `from`. */
function eventsSince(c: WsClient, from: number): WsMessage[] {
  return c.messages.slice(from).filter((x) => x.type === 'event' && x.data?.kind !== 'snapshot');
}

/**
 * Isolation of the realtime feed: a user's private channels carry only that user's events, a test
 * key's connection only the paper engine's, a live credential's only the live engine's; and every
 * fill a client receives is already committed (readable through GET /orders/{id} at receipt).
 */
describe('realtime: isolation between users and environments; events after commit', () => {
  let svc: Running;
  let aTest: Party;
  let bTest: Party;
  let aLive: Party;
  let bLive: Party;
  let aSession: WsClient;
  const all = (): WsClient[] => [aTest.ws, bTest.ws, aLive.ws, bLive.ws, aSession];
  /** GET /orders/{id} fired at the moment each fill arrived, with what it was checking. */
  const receiptChecks: Promise<void>[] = [];
  let fillsChecked = 0;
  let fillsReceived = 0;

  async function party(name: string, t: Trader): Promise<Party> {
    const ws = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    expect((await ws.subscribe([...PRIVATE, ...PUBLIC])).type).toBe('subscribed');
    // Events after commit: on receipt of a fill, read its order through REST at once.
    ws.onMessage((msg) => {
      if (msg.type !== 'event' || msg.channel !== 'fills') return;
      const fill = msg.data as {
        id: string;
        order_id: string;
        quantity: number;
        liquidity: string;
      };
      fillsReceived++;
      receiptChecks.push(
        as(t, `${svc.api}/orders/${fill.order_id}`).then((res) => {
          expect(res.status).toBe(200);
          const stored = (res.body.fills as { id: string; quantity: number; liquidity: string }[])
            .filter((f) => f.id === fill.id)
            .map((f) => ({ id: f.id, quantity: f.quantity, liquidity: f.liquidity }));
          expect(stored).toEqual([
            { id: fill.id, quantity: fill.quantity, liquidity: fill.liquidity },
          ]);
          fillsChecked++;
        }),
      );
    });
    return { name, t, ws };
  }

  async function liveTrader(email: string): Promise<Trader> {
    const token = await sessionFor(svc.api, email);
    const k = await createKey(svc.api, token, {
      environment: 'live',
      scopes: [...WS_SCOPES, 'wallet:write'],
      acknowledge_write_scopes: true,
    });
    const dep = await http(`${svc.api}/wallet/deposits`, {
      method: 'POST',
      headers: { 'x-api-key': k.key, 'idempotency-key': `dep-${k.id}` },
      json: { amount_cents: 1_000_000 },
    });
    expect(dep.status).toBe(201);
    const me = await http(`${svc.api}/auth/me`, { headers: { 'x-api-key': k.key } });
    return { email, token, key: k.key, keyId: k.id, userId: me.body.user.id as string };
  }

  beforeAll(async () => {
    svc = await startOrdersApp();
    aTest = await party('A test', await trader(svc, undefined, { scopes: WS_SCOPES }));
    bTest = await party(
      'B test',
      await trader(svc, 'responder@sandbox.test', { scopes: WS_SCOPES }),
    );
    aLive = await party('A live', await liveTrader('trader@sandbox.test'));
    bLive = await party('B live', await liveTrader('responder@sandbox.test'));
    // A first-party session (live engine) of user A.
    aSession = await WsClient.authed(svc.baseUrl, { token: aTest.t.token });
    expect((await aSession.subscribe([...PRIVATE, ...PUBLIC])).type).toBe('subscribed');
    await Promise.all(all().map((c) => c.sync()));
  });
  afterAll(async () => {
    await Promise.all(all().map((c) => c.close()));
    await svc.close();
  });

  /** Runs `act`, then waits until every connection has received everything sent before. */
  async function phase(act: () => Promise<void>): Promise<Map<WsClient, WsMessage[]>> {
    const marks = new Map(all().map((c) => [c, c.mark()]));
    await act();
    await Promise.all(all().map((c) => c.sync()));
    return new Map(all().map((c) => [c, eventsSince(c, marks.get(c)!)]));
  }

  const channelsOf = (events: WsMessage[]): string[] => [
    ...new Set(events.map((e) => e.channel as string)),
  ];

  it('user A alone (paper): only A test sees private events; live connections see nothing', async () => {
    const ids: string[] = [];
    const got = await phase(async () => {
      const rest = await place(svc, aTest.t, limit(m, 'BUY', 'YES', m.reference - 10, 5));
      ids.push(rest.id);
      const take = await place(svc, aTest.t, limit(m, 'BUY', 'YES', m.reference + 1, 3)); // house
      ids.push(take.id);
      expect(take.fills).toHaveLength(1);
      expect((await cancel(svc, aTest.t, rest.id)).status).toBe(200);
    });
    const a = got.get(aTest.ws)!;
    expect(channelsOf(a).sort()).toEqual([...PRIVATE, ...PUBLIC].sort());
    for (const e of a.filter((x) => x.channel === 'orders' || x.channel === 'fills'))
      expect(ids).toContain(e.data.order_id);
    // A's fill against the house: A is the taker; the house gets no private events anywhere.
    expect(a.filter((x) => x.channel === 'fills').map((x) => x.data.liquidity)).toEqual(['TAKER']);
    // B (same environment) sees the public book move, but none of A's private events.
    expect(channelsOf(got.get(bTest.ws)!).sort()).toEqual([...PUBLIC].sort());
    // The live engine's connections, A's own live key and A's session included, see nothing.
    for (const c of [aLive.ws, bLive.ws, aSession]) expect(got.get(c)).toEqual([]);
  });

  it('user B alone (paper): A test gets only public events', async () => {
    const got = await phase(async () => {
      const o = await place(svc, bTest.t, limit(m, 'SELL', 'YES', m.reference + 12, 4));
      await place(svc, bTest.t, limit(m, 'SELL', 'YES', m.reference - 1, 2)); // takes the house bid
      expect((await cancel(svc, bTest.t, o.id)).status).toBe(200);
    });
    expect(channelsOf(got.get(aTest.ws)!).sort()).toEqual([...PUBLIC].sort());
    expect(channelsOf(got.get(bTest.ws)!).sort()).toEqual([...PRIVATE, ...PUBLIC].sort());
    for (const c of [aLive.ws, bLive.ws, aSession]) expect(got.get(c)).toEqual([]);
  });

  it('A and B trade on paper: maker and taker fills go to the right users, once each', async () => {
    let maker = '';
    let taker = '';
    let tradeId = '';
    const got = await phase(async () => {
      maker = (await place(svc, aTest.t, limit(m, 'BUY', 'YES', m.reference, 7))).id;
      const t = await place(svc, bTest.t, limit(m, 'BUY', 'NO', 100 - m.reference, 7));
      taker = t.id;
      expect(t.status).toBe('FILLED');
      tradeId = t.fills[0].id;
    });
    const fillsOf = (c: WsClient) => got.get(c)!.filter((x) => x.channel === 'fills');
    expect(fillsOf(aTest.ws).map((x) => x.data)).toEqual([
      {
        id: tradeId,
        order_id: maker,
        market_id: m.id,
        side: 'YES',
        price: m.reference,
        yes_price: m.reference,
        quantity: 7,
        liquidity: 'MAKER',
        created_at: new Date(svc.clock.now()).toISOString(),
      },
    ]);
    expect(fillsOf(bTest.ws).map((x) => x.data)).toEqual([
      {
        id: tradeId,
        order_id: taker,
        market_id: m.id,
        side: 'NO',
        price: 100 - m.reference,
        yes_price: m.reference,
        quantity: 7,
        liquidity: 'TAKER',
        created_at: new Date(svc.clock.now()).toISOString(),
      },
    ]);
    const ordersOf = (c: WsClient) =>
      got
        .get(c)!
        .filter((x) => x.channel === 'orders')
        .map((x) => x.data.order_id);
    expect(new Set(ordersOf(aTest.ws))).toEqual(new Set([maker]));
    expect(new Set(ordersOf(bTest.ws))).toEqual(new Set([taker]));
    // Both see the one public trade.
    for (const c of [aTest.ws, bTest.ws]) {
      expect(
        got
          .get(c)!
          .filter((x) => x.channel === `trades:${m.id}`)
          .map((x) => x.data.id),
      ).toEqual([tradeId]);
    }
    for (const c of [aLive.ws, bLive.ws, aSession]) expect(got.get(c)).toEqual([]);
  });

  it('A and B trade live: test connections see nothing; A live key and A session see A live', async () => {
    let maker = '';
    let taker = '';
    const got = await phase(async () => {
      maker = (await place(svc, aLive.t, limit(m, 'BUY', 'YES', 40, 5))).id;
      const t = await place(svc, bLive.t, limit(m, 'SELL', 'YES', 40, 5));
      expect(t.status).toBe('FILLED');
      expect(t.environment).toBe('live');
      taker = t.id;
    });
    for (const c of [aTest.ws, bTest.ws]) expect(got.get(c)).toEqual([]);
    const fills = (c: WsClient) =>
      got
        .get(c)!
        .filter((x) => x.channel === 'fills')
        .map((x) => [x.data.order_id, x.data.liquidity]);
    expect(fills(aLive.ws)).toEqual([[maker, 'MAKER']]);
    expect(fills(aSession)).toEqual([[maker, 'MAKER']]);
    expect(fills(bLive.ws)).toEqual([[taker, 'TAKER']]);
    // The live book, trades and ticker reached every live connection; private events only A's.
    for (const c of [aLive.ws, bLive.ws, aSession])
      expect(channelsOf(got.get(c)!)).toEqual(expect.arrayContaining(PUBLIC));
    for (const e of got.get(aSession)!.filter((x) => x.channel === 'orders'))
      expect(e.data.order_id).toBe(maker);
    for (const e of got.get(bLive.ws)!.filter((x) => x.channel === 'orders'))
      expect(e.data.order_id).toBe(taker);
  });

  it('a trade whose commit fails is never published (nothing a crash could take back)', async () => {
    const resting = await place(svc, aTest.t, limit(m, 'BUY', 'YES', m.reference, 3));
    const before = (await as(aTest.t, `${svc.api}/markets/${m.id}`)).body;
    const restore = failWrites(svc.dataDir, 'paper', 'trades', 'INSERT');
    try {
      const got = await phase(async () => {
        const res = await as(bTest.t, `${svc.api}/orders`, {
          method: 'POST',
          json: limit(m, 'SELL', 'YES', m.reference, 3),
        });
        expect(res.status).toBe(500);
      });
      for (const c of all()) {
        // Nothing of the failed trade: no trade, fill, order, position or wallet message. The
        // rebuild re-sends tickers of the committed state, and the house's re-quote on the rebuilt
        // engine arrives as book deltas (the next test checks the book adds up).
        const msgs = got.get(c)!;
        expect(
          msgs.filter((x) => x.channel !== 'ticker' && !x.channel.startsWith('orderbook:')),
        ).toEqual([]);
        for (const x of msgs.filter((x) => x.channel.startsWith('orderbook:')))
          expect(x.data.kind).toBe('delta');
        for (const x of msgs.filter((x) => x.data.market_id === m.id))
          expect([x.data.last_price, x.data.volume]).toEqual([before.last_price, before.volume]);
      }
    } finally {
      restore();
    }
    // The engine was rebuilt from the record: A's order is still open and unfilled.
    const after = await as(aTest.t, `${svc.api}/orders/${resting.id}`);
    expect(after.body).toMatchObject({ status: 'OPEN', filled_quantity: 0, fills: [] });
    // Once commits work again, the same trade is published to both sides.
    const got = await phase(async () => {
      const t = await place(svc, bTest.t, limit(m, 'SELL', 'YES', m.reference, 3));
      expect(t.status).toBe('FILLED');
    });
    expect(got.get(aTest.ws)!.filter((x) => x.channel === 'fills')).toHaveLength(1);
    expect(got.get(bTest.ws)!.filter((x) => x.channel === 'fills')).toHaveLength(1);
  });

  /**
   * When a commit fails the engine is rebuilt from the database and the house re-quotes; no event
   * describes that change, so the hub sends every orderbook subscriber a fresh snapshot.
   */
  it('after an engine rebuild the subscribed book still equals the REST book', async () => {
    const watcher = await WsClient.authed(svc.baseUrl, { api_key: bTest.t.key });
    const cb = new ClientBook();
    watcher.onMessage((x) => {
      if (x.channel !== 'ticker') cb.apply(x);
    });
    expect((await watcher.subscribe([`orderbook:${m.id}`, 'ticker'])).type).toBe('subscribed');
    // Take some house liquidity, so a re-quote would change the book.
    await place(svc, bTest.t, limit(m, 'SELL', 'YES', m.reference - 1, 2));
    await place(svc, aTest.t, limit(m, 'BUY', 'YES', m.reference + 1, 2));
    const resting = await place(svc, aTest.t, limit(m, 'BUY', 'YES', m.reference, 1));
    await watcher.sync();
    const afterFail = watcher.mark();
    const restore = failWrites(svc.dataDir, 'paper', 'trades', 'INSERT');
    try {
      const res = await as(bTest.t, `${svc.api}/orders`, {
        method: 'POST',
        json: limit(m, 'SELL', 'YES', m.reference, 1),
      });
      expect(res.status).toBe(500);
    } finally {
      restore();
    }
    // The rebuild also sends every market's ticker, and the house's re-quote on the rebuilt
    // engine moves it on: m's latest equals the rebuilt book's top.
    await watcher.waitFor(
      (x) => x.channel === 'ticker' && x.data.market_id === m.id,
      3000,
      afterFail,
    );
    await watcher.sync();
    const ticker = watcher.messages
      .slice(afterFail)
      .filter((x) => x.channel === 'ticker' && x.data.market_id === m.id)
      .pop()!;
    const top = await as(aTest.t, `${svc.api}/markets/${m.id}/orderbook?depth=1`);
    expect([ticker.data.best_bid, ticker.data.best_ask]).toEqual([
      top.body.bids[0]?.price ?? null,
      top.body.asks[0]?.price ?? null,
    ]);
    expect((await cancel(svc, aTest.t, resting.id)).status).toBe(200);
    await watcher.sync();
    const rest = await as(aTest.t, `${svc.api}/markets/${m.id}/orderbook?depth=99`);
    await watcher.close();
    expect(cb.levels()).toEqual({ bids: rest.body.bids, asks: rest.body.asks });
  });

  it('every fill received was readable through GET /orders/{id} at receipt', async () => {
    await Promise.all(receiptChecks);
    // At least: A test 3 (house, maker, maker), B test 3 (house, taker, taker), A live 1, B live 1.
    expect(fillsReceived).toBeGreaterThanOrEqual(8);
    expect(fillsChecked).toBe(fillsReceived);
  });
});
