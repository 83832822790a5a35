import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { expectContractError, type Running } from '../support/harness.js';
import {
  as,
  ORDER_SCOPES,
  SEED_MARKETS,
  startOrdersApp,
  trader,
  type Trader,
} from '../support/orders.js';
import { worldDatabaseExists } from '../support/test-database.js';
import { deleteWorld, openWorld, type WorldHandle } from '../support/worlds-groups.js';
import { WsClient } from '../support/ws.js';

/**
 * Crypto inside ephemeral worlds (issue 22): a world's own indices, seeded from its seed and
 * stepped only by its clock; the sandbox price control sets the world's index only; its realtime
 * messages carry world_id and reach that world only; same seed and requests, same prices; a world
 * reset restarts them; a deleted world's go with its file.
 */
const SCOPES = [...ORDER_SCOPES, 'crypto:read', 'wallet:write', 'websocket'];
const SEEDED = ['95000.00', '3200.00', '180.00'];
const MINUTE = 60_000;
const BTC_MARKET = SEED_MARKETS.find((m) => m.slug === 'btc-above-150k-2027-06-30')!;

type Price = { symbol: string; price: string; as_of: string };

describe('crypto inside ephemeral worlds', () => {
  let svc: Running;
  let a: Trader;

  const prices = async (k: Pick<Trader, 'key'>): Promise<Price[]> => {
    const r = await as(k, `${svc.api}/crypto/prices`);
    // The answer in full when it is not 200 (a 503 on PostgreSQL once said nothing more).
    expect({ status: r.status, error: r.body?.error }).toEqual({ status: 200, error: undefined });
    return r.body.data as Price[];
  };
  const values = async (k: Pick<Trader, 'key'>): Promise<string[]> =>
    (await prices(k)).map((p) => p.price);
  const closes = async (k: Pick<Trader, 'key'>, symbol = 'BTC-USD'): Promise<string[]> => {
    const r = await as(k, `${svc.api}/crypto/prices/${symbol}/history?interval=1m&limit=200`);
    expect(r.status).toBe(200);
    return r.body.data.map((c: { close: string }) => c.close);
  };
  const setIndex = (k: Pick<Trader, 'key'>, symbol: string, price: string) =>
    as(k, `${svc.api}/sandbox/crypto/${symbol}/price`, { method: 'POST', json: { price } });
  const advance = async (k: Pick<Trader, 'key'>, seconds: number): Promise<string> => {
    const r = await as(k, `${svc.api}/sandbox/clock`, {
      method: 'POST',
      json: { advance_seconds: seconds },
    });
    expect(r.status).toBe(200);
    return r.body.now as string;
  };

  beforeAll(async () => {
    // One walk step a minute; the engine's feed stays still (startOrdersApp).
    svc = await startOrdersApp({ env: { CRYPTO_TICK_INTERVAL_MS: '60000' } });
    a = await trader(svc, 'a@worlds-crypto.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it("reads the world's own indices, which the passing of time never moves; advancing A's clock moves A's walk only", async () => {
    const wa = await openWorld(svc, a, { seed: 21 });
    const wb = await openWorld(svc, a, { seed: 21 });
    const start = await prices(wa);
    expect(start.map((p) => p.price)).toEqual(SEEDED);
    expect(await closes(wa)).toEqual([]);
    // Ten minutes of service time: the paper walk steps, the worlds' do not.
    const paperBefore = await values(a);
    (svc.clock as ManualClock).advance(10 * MINUTE);
    const paperAfter = await values(a);
    expect(paperAfter).not.toEqual(paperBefore);
    expect(await values(wa)).toEqual(SEEDED);
    expect(await values(wb)).toEqual(SEEDED);
    // A's clock forward 3 minutes and a half: three steps, stamped on A's clock, last at its now.
    const now = await advance(wa, 210);
    const moved = await prices(wa);
    expect(moved.map((p) => p.price)).not.toEqual(SEEDED);
    expect(moved.map((p) => p.as_of)).toEqual(Array(3).fill(now));
    const history = await as(wa, `${svc.api}/crypto/prices/BTC-USD/history?interval=1m`);
    expect(history.body.data.map((c: { time: string }) => Date.parse(c.time))).toEqual(
      [2, 1, 0].map((k) => Math.floor((Date.parse(now) - k * MINUTE) / MINUTE) * MINUTE),
    );
    expect(history.body.data[2].close).toBe(moved[0].price);
    // Half a minute more completes the fourth minute of A's offset: one more step.
    await advance(wa, 30);
    expect(await closes(wa)).toHaveLength(4);
    // B, the paper world and the paper history are untouched.
    expect(await values(wb)).toEqual(SEEDED);
    expect(await closes(wb)).toEqual([]);
    expect(await values(a)).toEqual(paperAfter);
  });

  it('the sandbox price control with a world key sets that world only; its realtime message carries world_id and reaches that world only', async () => {
    const wa = await openWorld(svc, a, { seed: 22 });
    const wb = await openWorld(svc, a, { seed: 22 });
    const paperBefore = await values(a);
    const sockets = await Promise.all(
      [wa, wb, a].map((k) => WsClient.authed(svc.baseUrl, { api_key: k.key })),
    );
    const [sa, sb, sp] = sockets;
    try {
      for (const s of sockets) await s.subscribe(['crypto:BTC-USD']);
      const set = await setIndex(wa, 'BTC-USD', '123456.78');
      expect(set.status).toBe(200);
      expect(set.body).toMatchObject({ symbol: 'BTC-USD', price: '123456.78' });
      const msg = await sa.waitFor((m) => m.type === 'event' && m.channel === 'crypto:BTC-USD');
      expect(msg).toMatchObject({
        world_id: wa.id,
        seq: 1,
        data: { symbol: 'BTC-USD', price: '123456.78', as_of: set.body.as_of },
      });
      expect((await prices(wa))[0].price).toBe('123456.78');
      expect(await closes(wa)).toEqual(['123456.78']);
      // The other world and the paper world neither see it nor hear it.
      expect(await values(wb)).toEqual(SEEDED);
      expect(await closes(wb)).toEqual([]);
      expect(await values(a)).toEqual(paperBefore);
      expect(await closes(a)).not.toContain('123456.78');
      // A step of A's walk (its clock advanced) is heard in A only, with world_id.
      await advance(wa, 60);
      const step = await sa.waitFor(
        (m) => m.type === 'event' && m.channel === 'crypto:BTC-USD' && m.seq === 2,
      );
      expect(step).toMatchObject({ world_id: wa.id });
      expect(step.data.price).toBe((await prices(wa))[0].price);
      await sb.sync();
      await sp.sync();
      expect(sb.events('crypto:BTC-USD')).toEqual([]);
      expect(sp.events('crypto:BTC-USD')).toEqual([]);
      // A paper set is heard by the paper socket only, without world_id.
      expect((await setIndex(a, 'BTC-USD', '99999.99')).status).toBe(200);
      const paperMsg = await sp.waitFor(
        (m) => m.type === 'event' && m.channel === 'crypto:BTC-USD',
      );
      expect(paperMsg.world_id).toBeUndefined();
      expect((await prices(wa))[0].price).not.toBe('99999.99');
      await sa.sync();
      await sb.sync();
      expect(sa.events('crypto:BTC-USD')).toHaveLength(2);
      expect(sb.events('crypto:BTC-USD')).toEqual([]);
    } finally {
      for (const s of sockets) await s.close();
    }
    // Bad input and an unknown symbol are refused in a world as outside.
    expectContractError(await setIndex(wa, 'BTC-USD', '0.00'), 400, 'VALIDATION_FAILED');
    expectContractError(await setIndex(wa, 'DOGE-USD', '1.00'), 404, 'NOT_FOUND');
  });

  /** One script: advances, reads and a set; the answers a client sees, timestamps aside. */
  const script = async (k: Pick<Trader, 'key'>): Promise<unknown[]> => {
    const out: unknown[] = [];
    for (const seconds of [60, 150, 45, 600]) {
      await advance(k, seconds);
      out.push(await values(k));
    }
    expect((await setIndex(k, 'SOL-USD', '200.00')).status).toBe(200);
    await advance(k, 120);
    out.push(await values(k));
    for (const symbol of ['BTC-USD', 'ETH-USD', 'SOL-USD']) out.push(await closes(k, symbol));
    return out;
  };

  it('a world first reached by a WebSocket subscription answers the HTTP requests right after it (on PostgreSQL + Redis: no 503 while its writer is elected)', async () => {
    const worlds = await Promise.all([1, 2, 3].map((seed) => openWorld(svc, a, { seed })));
    const sockets = await Promise.all(
      worlds.map((w) => WsClient.authed(svc.baseUrl, { api_key: w.key })),
    );
    try {
      // The subscription loads the world's engine first; the requests follow at once.
      await Promise.all(sockets.map((s) => s.subscribe(['crypto:BTC-USD'])));
      for (const w of worlds) {
        expect(await values(w)).toEqual(SEEDED);
        const wallet = await as(w, `${svc.api}/wallet`);
        expect(wallet.status).toBe(200);
      }
    } finally {
      await Promise.all(sockets.map((s) => s.close()));
    }
  });

  it('gives the same prices for the same seed and requests, other prices for another seed', async () => {
    const first = await script(await openWorld(svc, a, { seed: 4242 }));
    const second = await script(await openWorld(svc, a, { seed: 4242 }));
    expect(second).toEqual(first);
    // 16 steps of BTC-USD (offsets 60, 210, 255, 855, 975 s cross 1, 3, 4, 14, 16 minutes), a candle each.
    expect((first[5] as string[]).length).toBe(16);
    const other = await script(await openWorld(svc, a, { seed: 4243 }));
    expect(other[0]).not.toEqual(first[0]);
  });

  it('a reset with the world key restarts its indices from the seed (candles cleared), the paper ones untouched; the same script then walks the same path', async () => {
    const w = await openWorld(svc, a, { seed: 77 });
    const first = await script(w);
    const paper = await values(a);
    const reset = await as(w, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(reset.status).toBe(200);
    expect(reset.body.cleared.crypto_candles).toBeGreaterThan(0);
    expect(await values(w)).toEqual(SEEDED);
    expect(await closes(w)).toEqual([]);
    expect(await values(a)).toEqual(paper);
    expect(await script(w)).toEqual(first);
    // A paper reset leaves the shared paper indices as they are.
    const paperReset = await as(a, `${svc.api}/sandbox/reset`, { method: 'POST' });
    expect(paperReset.body.cleared.crypto_candles).toBe(0);
    expect(await values(a)).toEqual(paper);
  });

  it("resolves the world's crypto market from the world's index only, as its clock passes close_time", async () => {
    const w = await openWorld(svc, a, { seed: 9 });
    expect((await setIndex(w, 'BTC-USD', '160000.00')).status).toBe(200);
    // BTC above 150k at 2027-06-30: about 220 days after the service clock's noon.
    await advance(w, 230 * 86_400);
    const inWorld = await as(w, `${svc.api}/markets/${BTC_MARKET.id}`);
    expect(inWorld.body).toMatchObject({ status: 'RESOLVED', outcome: 'YES' });
    const inPaper = await as(a, `${svc.api}/markets/${BTC_MARKET.id}`);
    expect(inPaper.body.status).not.toBe('RESOLVED');
  });

  it("a deleted world's indices go with its file; a new world of the same seed starts seeded", async () => {
    const w: WorldHandle = await openWorld(svc, a, { seed: 31 });
    await advance(w, 300);
    expect((await setIndex(w, 'ETH-USD', '5000.00')).status).toBe(200);
    expect(worldDatabaseExists(svc.dataDir, w.id)).toBe(true);
    await deleteWorld(svc, a, w);
    expectContractError(await as(w, `${svc.api}/crypto/prices`), 401, 'API_KEY_REVOKED');
    const again = await openWorld(svc, a, { seed: 31 });
    expect(await values(again)).toEqual(SEEDED);
    expect(await closes(again, 'ETH-USD')).toEqual([]);
  });
});
