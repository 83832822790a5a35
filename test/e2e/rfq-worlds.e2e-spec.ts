import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { WorldId } from '../../src/common/environment.js';
import { WorldDatabases } from '../../src/modules/worlds/world-databases.service.js';
import { expectContractError, type Running } from '../support/harness.js';
import { as, NOON, TRADABLE, type Trader } from '../support/orders.js';
import { Receiver } from '../support/receiver.js';
import { responder, rfqClient, type Json } from '../support/rfq.js';
import { worldDatabaseExists } from '../support/test-database.js';
import {
  createEndpoint,
  hookUser,
  HOOK_SCOPES,
  startWebhookApp,
  until,
} from '../support/webhooks.js';
import { deleteWorld, openWorld, type WorldHandle } from '../support/worlds-groups.js';
import { WsClient } from '../support/ws.js';

/** A requester that may also reset its worlds and listen on the rfq channel. */
const SCOPES = [...HOOK_SCOPES, 'wallet:write', 'websocket'];
/** RFQ_HOUSE_SPREAD_CENTS' default. */
const SPREAD = 4;

/**
 * RFQ inside ephemeral worlds, exactly as in the shared paper world but with the world's records
 * only: the house quotes a world's RFQ from the world's own reference, an accept trades in the
 * world's engine, expiry follows the world's clock, events carry world_id and reach that world's
 * endpoints and sockets only, a world key's reset and the world's deletion remove its RFQs, and an
 * OPEN RFQ survives an unload and a restart. Nothing of a world is visible from the shared paper
 * world or another world.
 */
describe('rfq in ephemeral worlds', () => {
  let svc: Running;
  let receiver: Receiver;
  let rfq: ReturnType<typeof rfqClient>;
  /** The user (paper key), and its worlds A and B. */
  let u: Trader;
  let a: WorldHandle;
  let b: WorldHandle;
  /** The seeded approved responder, in the shared paper world. */
  let resp: Trader;
  const sockets: Record<string, WsClient> = {};
  const m = TRADABLE[0];

  const keyed = (k: { key: string }) => k as Trader;
  const arrived = (path: string): Json[] =>
    receiver.requests.filter((r) => r.path === path).map((r) => r.json);
  const ofRfq = (path: string, rfqId: string): Json[] =>
    arrived(path).filter((e) => JSON.stringify(e.data).includes(rfqId));
  /** The house quote of an RFQ, once it has arrived (the house quotes on the next turn). */
  const houseQuote = async (k: { key: string }, rfqId: string): Promise<Json> =>
    (
      await until(
        async () => (await rfq.quotes(keyed(k), rfqId)).body.data as Json[],
        (d) => d.length === 1,
        `the house quote on ${rfqId}`,
      )
    )[0];
  const advanceWorld = async (w: WorldHandle, seconds: number): Promise<void> => {
    const r = await as(w, `${svc.api}/sandbox/clock`, {
      method: 'POST',
      json: { advance_seconds: seconds },
    });
    expect(r.status).toBe(200);
  };
  const setPrice = async (k: { key: string }, price: number): Promise<void> => {
    const r = await as(k, `${svc.api}/sandbox/markets/${m.id}/price`, {
      method: 'POST',
      json: { price },
    });
    expect(r.status).toBe(200);
  };

  beforeAll(async () => {
    svc = await startWebhookApp();
    receiver = await Receiver.start();
    rfq = rfqClient(svc);
    u = await hookUser(svc, { scopes: SCOPES });
    resp = await responder(svc);
    a = await openWorld(svc, u, { seed: 11 });
    b = await openWorld(svc, u, { seed: 11 });
    for (const [name, k] of Object.entries({ paper: u, a, b })) {
      await createEndpoint(svc, k, receiver.url(`/${name}`));
      sockets[name] = await WsClient.authed(svc.baseUrl, { api_key: k.key });
      expect((await sockets[name].subscribe(['rfq'])).type).toBe('subscribed');
    }
  });
  afterAll(async () => {
    for (const s of Object.values(sockets)) await s.close();
    await receiver.close();
    await svc.close();
  });

  it("asks, gets the house's quote from the world's reference, accepts and trades in the world only; events carry world_id and reach that world only", async () => {
    // World A's reference moves; the paper world's and B's stay where they were.
    await setPrice(a, 70);
    const r = await rfq.create(keyed(a), m.id, 5);
    expect(r).toMatchObject({ market_id: m.id, quantity: 5, status: 'OPEN', environment: 'test' });
    const q = await houseQuote(a, r.id);
    expect(q).toMatchObject({ bid: 70 - SPREAD, ask: 70 + SPREAD, quantity: 5, status: 'OPEN' });

    const done = await rfq.accept(keyed(a), q.id, 'BUY', 'YES');
    expect(done.rfq).toMatchObject({ id: r.id, status: 'FILLED', accepted_quote_id: q.id });
    expect(done.order).toMatchObject({ type: 'RFQ', rfq_id: r.id, status: 'FILLED' });
    expect(done.trade).toMatchObject({ price: 70 + SPREAD, quantity: 5, source: 'RFQ' });
    // The fill and the position are the world's: not the paper world's, nor B's.
    const positions = async (k: { key: string }) =>
      ((await as(k, `${svc.api}/positions/cursor`)).body.data as Json[]).filter(
        (p) => p.market_id === m.id,
      );
    expect(await positions(a)).toEqual([
      expect.objectContaining({ market_id: m.id, side: 'YES', quantity: 5 }),
    ]);
    expect(await positions(u)).toEqual([]);
    expect(await positions(b)).toEqual([]);
    expect((await as(a, `${svc.api}/orders/${done.order.id as string}`)).status).toBe(200);
    for (const k of [u, b]) {
      expectContractError(
        await as(k, `${svc.api}/orders/${done.order.id as string}`),
        404,
        'NOT_FOUND',
      );
    }

    // Webhooks: A's endpoint hears the quote and the accept, named; the others nothing of it.
    const hooks = await until(
      () => ofRfq('/a', r.id),
      (v) => v.some((e) => e.type === 'rfq.quote_accepted'),
      "world A's rfq.quote_accepted",
    );
    expect(hooks.map((e) => e.type).sort()).toEqual(['rfq.quote_accepted', 'rfq.quote_received']);
    for (const e of hooks) expect(e).toMatchObject({ world_id: a.id, environment: 'test' });
    // Realtime: A's socket hears quote.received and quote.accepted with world_id.
    const heard = await sockets.a.waitFor(
      (msg) =>
        msg.channel === 'rfq' && msg.data.event === 'quote.accepted' && msg.data.rfq?.id === r.id,
    );
    expect(heard.world_id).toBe(a.id);
    const onA = sockets.a.events('rfq').filter((e) => JSON.stringify(e.data).includes(r.id));
    expect(onA.map((e) => e.data.event)).toEqual(['quote.received', 'quote.accepted']);
    for (const e of onA) expect(e.world_id).toBe(a.id);
    // The in-app notification is the world's too.
    const notes = async (k: { key: string }) =>
      ((await as(k, `${svc.api}/notifications/cursor`)).body.data as Json[]).filter((n) =>
        JSON.stringify(n.data).includes(r.id),
      );
    expect((await notes(a)).map((n) => n.type)).toEqual(['RFQ_QUOTE_RECEIVED']);
    expect(await notes(u)).toEqual([]);
    for (const name of ['paper', 'b']) {
      await sockets[name].sync();
      expect(ofRfq(`/${name}`, r.id)).toEqual([]);
      expect(sockets[name].events('rfq').filter((e) => JSON.stringify(e).includes(r.id))).toEqual(
        [],
      );
    }
  });

  it("another world and the paper world cannot see, quote, accept or cancel a world's RFQ (404)", async () => {
    const r = await rfq.create(keyed(a), m.id, 2);
    const q = await houseQuote(a, r.id);
    for (const k of [u, keyed(b)]) {
      expectContractError(await rfq.get(k, r.id), 404, 'NOT_FOUND');
      expectContractError(await rfq.quotes(k, r.id), 404, 'NOT_FOUND');
      expectContractError(await rfq.cancel(k, r.id), 404, 'NOT_FOUND');
      expectContractError(
        await rfq.acceptRaw(k, q.id, { action: 'BUY', side: 'YES' }),
        404,
        'NOT_FOUND',
      );
      const mine = (await rfq.call(k, 'GET', '?limit=200')).body.data as Json[];
      expect(mine.map((x) => x.id)).not.toContain(r.id);
    }
    // A paper responder neither lists nor quotes it.
    expectContractError(await rfq.quoteRaw(resp, r.id, { bid: 40 }), 404, 'NOT_FOUND');
    const open = (await rfq.open(resp, '?limit=200')).body.data as Json[];
    expect(open.map((x) => x.id)).not.toContain(r.id);
    // Untouched in A.
    expect((await rfq.get(keyed(a), r.id)).body.status).toBe('OPEN');
    expect((await rfq.quotes(keyed(a), r.id)).body.data).toEqual([
      expect.objectContaining({ id: q.id, status: 'OPEN' }),
    ]);
    expect((await rfq.cancel(keyed(a), r.id)).status).toBe(200);
  });

  it("expires on the world's clock only: advancing A ends A's RFQs and quotes, not the paper world's or B's", async () => {
    const inA = await rfq.create(keyed(a), m.id, 1, 60);
    const inB = await rfq.create(keyed(b), m.id, 1, 60);
    const inPaper = await rfq.create(u, m.id, 1, 60);
    const qA = await houseQuote(a, inA.id);
    const qB = await houseQuote(b, inB.id);
    // Past the house quote's 30 s: A's expires and the house quotes again; B's stays.
    await advanceWorld(a, 31);
    const requoted = await houseQuote(a, inA.id);
    expect(requoted.id).not.toBe(qA.id);
    expect((await rfq.quotes(keyed(b), inB.id)).body.data).toEqual([
      expect.objectContaining({ id: qB.id, status: 'OPEN' }),
    ]);
    // Past the RFQ's 60 s.
    await advanceWorld(a, 30);
    expect((await rfq.get(keyed(a), inA.id)).body.status).toBe('EXPIRED');
    expect((await rfq.quotes(keyed(a), inA.id)).body.data).toEqual([]);
    expectContractError(
      await rfq.acceptRaw(keyed(a), requoted.id, { action: 'BUY', side: 'YES' }),
      409,
      'RFQ_NOT_OPEN',
    );
    expect((await rfq.get(keyed(b), inB.id)).body.status).toBe('OPEN');
    expect((await rfq.get(u, inPaper.id)).body.status).toBe('OPEN');
    // rfq.expired reaches A's endpoint and socket, named.
    const expired = await until(
      () => ofRfq('/a', inA.id).filter((e) => e.type === 'rfq.expired'),
      (v) => v.length === 1,
      "world A's rfq.expired",
    );
    expect(expired[0]).toMatchObject({ world_id: a.id, data: { rfq: { status: 'EXPIRED' } } });
    const heard = await sockets.a.waitFor(
      (msg) =>
        msg.channel === 'rfq' && msg.data.event === 'rfq.expired' && msg.data.rfq?.id === inA.id,
    );
    expect(heard).toMatchObject({ world_id: a.id, data: { rfq: { id: inA.id } } });
    expect(ofRfq('/paper', inPaper.id).filter((e) => e.type === 'rfq.expired')).toEqual([]);
    for (const [k, id] of [
      [keyed(b), inB.id],
      [u, inPaper.id],
    ] as [Trader, string][]) {
      expect((await rfq.cancel(k, id)).status).toBe(200);
    }
  });

  it("a world key's sandbox reset cancels that world's RFQs only", async () => {
    const inA = await rfq.create(keyed(a), m.id, 3);
    const inB = await rfq.create(keyed(b), m.id, 3);
    const inPaper = await rfq.create(u, m.id, 3);
    await houseQuote(a, inA.id);
    const reset = await as(a, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(reset.status).toBe(200);
    expect(reset.body.cleared.rfqs).toBe(1);
    expect((await rfq.get(keyed(a), inA.id)).body.status).toBe('CANCELLED');
    expect((await rfq.quotes(keyed(a), inA.id)).body.data).toEqual([]);
    expect((await rfq.get(keyed(b), inB.id)).body.status).toBe('OPEN');
    expect((await rfq.get(u, inPaper.id)).body.status).toBe('OPEN');
    expect((await rfq.cancel(u, inPaper.id)).status).toBe(200);
    expect((await rfq.cancel(keyed(b), inB.id)).status).toBe(200);
  });

  it('an OPEN RFQ survives an unload and a restart, and goes with its deleted world', async () => {
    const r = await rfq.create(keyed(a), m.id, 4);
    const q = await houseQuote(a, r.id);
    const databases = () => svc.app.get(WorldDatabases);
    const id = a.id as WorldId;
    databases().unload(id);
    expect(databases().isLoaded(id)).toBe(false);
    // Loaded again by the next request: the RFQ and its quote (with its hold) are there.
    expect((await rfq.get(keyed(a), r.id)).body.status).toBe('OPEN');
    expect((await rfq.quotes(keyed(a), r.id)).body.data).toEqual([
      expect.objectContaining({ id: q.id, status: 'OPEN' }),
    ]);
    expect(databases().isLoaded(id)).toBe(true);
    const traded = await rfq.accept(keyed(a), q.id, 'SELL', 'YES');
    expect(traded.rfq.status).toBe('FILLED');

    // A restart on the same data: B's OPEN RFQ is there, and trades.
    const inB = await rfq.create(keyed(b), m.id, 2);
    const qB = await houseQuote(b, inB.id);
    for (const s of Object.values(sockets)) await s.close();
    const dataDir = svc.dataDir;
    await svc.close({ keepData: true });
    svc = await startWebhookApp({ dataDir, now: NOON });
    rfq = rfqClient(svc);
    expect((await rfq.get(keyed(b), inB.id)).body.status).toBe('OPEN');
    const afterRestart = await houseQuote(b, inB.id);
    expect(afterRestart.id).toBe(qB.id);
    expect((await rfq.accept(keyed(b), qB.id, 'BUY', 'NO')).rfq.status).toBe('FILLED');

    // Deleting A removes its file, so its RFQs; its key is refused.
    const open = await rfq.create(keyed(a), m.id, 1);
    await deleteWorld(svc, u, a);
    expect(worldDatabaseExists(svc.dataDir, a.id)).toBe(false);
    expect((await rfq.get(keyed(a), open.id)).status).toBe(401);
    expectContractError(await rfq.get(u, open.id), 404, 'NOT_FOUND');
  });
});
