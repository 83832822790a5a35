import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../../src/common/clock/clock.js';
import { expectContractError, http, type Running } from '../support/harness.js';
import {
  as,
  keyFor,
  NOON,
  ORDER_SCOPES,
  startOrdersApp,
  trader,
  type Trader,
} from '../support/orders.js';
import { WsClient } from '../support/ws.js';

/**
 * Crypto reference indices (issue 19): prices, the seeded walk on the service clock, candles,
 * paging, validation, the sandbox price control and the realtime channel crypto:<symbol>.
 */
const SCOPES = [...ORDER_SCOPES, 'crypto:read', 'websocket'];
const SEEDED = { 'BTC-USD': '95000.00', 'ETH-USD': '3200.00', 'SOL-USD': '180.00' };
const at = (iso: string): number => Date.parse(iso);

function moveTo(svc: Running, iso: string): void {
  const clock = svc.clock as ManualClock;
  clock.advance(at(iso) - clock.now());
}

const prices = async (svc: Running, t: Pick<Trader, 'key'> | null) => {
  const res =
    t === null ? await http(`${svc.api}/crypto/prices`) : await as(t, `${svc.api}/crypto/prices`);
  expect(res.status).toBe(200);
  return res.body.data as { symbol: string; price: string; as_of: string }[];
};

const setPrice = (svc: Running, t: Pick<Trader, 'key'>, symbol: string, price: unknown) =>
  as(t, `${svc.api}/sandbox/crypto/${symbol}/price`, { method: 'POST', json: { price } });

describe('crypto indices: the walk on the service clock', () => {
  let svc: Running;
  let t: Trader;
  beforeAll(async () => {
    svc = await startOrdersApp({ env: { CRYPTO_TICK_INTERVAL_MS: '60000' } });
    t = await trader(svc, 'walk@crypto.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('lists BTC-USD, ETH-USD and SOL-USD at their seeded prices, as of the start, in both worlds', async () => {
    for (const who of [t, null]) {
      expect(await prices(svc, who)).toEqual(
        Object.entries(SEEDED).map(([symbol, price]) => ({ symbol, price, as_of: NOON })),
      );
    }
    // Nothing ticked yet: no candle.
    const h = await as(t, `${svc.api}/crypto/prices/BTC-USD/history`);
    expect(h.status).toBe(200);
    expect(h.body).toEqual({ data: [], next_cursor: null });
  });

  it('steps once per tick boundary passed and writes a candle per step', async () => {
    (svc.clock as ManualClock).advance(60_000);
    const one = await prices(svc, t);
    expect(one.map((p) => p.as_of)).toEqual(Array(3).fill('2026-11-22T12:01:00.000Z'));
    expect(one.map((p) => p.price)).not.toEqual(Object.values(SEEDED));
    for (const p of one) expect(p.price).toMatch(/^\d+\.\d{2}$/);
    (svc.clock as ManualClock).advance(3 * 60_000 + 30_000);
    const four = await prices(svc, t);
    expect(four[0].as_of).toBe('2026-11-22T12:04:00.000Z');
    const h = await as(t, `${svc.api}/crypto/prices/BTC-USD/history?interval=1m`);
    expect(h.body.data.map((c: { time: string }) => c.time)).toEqual([
      '2026-11-22T12:01:00.000Z',
      '2026-11-22T12:02:00.000Z',
      '2026-11-22T12:03:00.000Z',
      '2026-11-22T12:04:00.000Z',
    ]);
    // One price per 1m bucket: open = high = low = close, the last one the price now.
    for (const c of h.body.data) expect(new Set([c.open, c.high, c.low, c.close]).size).toBe(1);
    expect(h.body.data[3].close).toBe(four[0].price);
    // The 1h candle aggregates the four steps.
    const hour = await as(t, `${svc.api}/crypto/prices/BTC-USD/history?interval=1h`);
    const closes = h.body.data.map((c: { close: string }) => Number(c.close));
    expect(hour.body.data).toEqual([
      {
        time: '2026-11-22T12:00:00.000Z',
        open: h.body.data[0].open,
        high: Math.max(...closes).toFixed(2),
        low: Math.min(...closes).toFixed(2),
        close: h.body.data[3].close,
      },
    ]);
  });
});

describe('crypto indices: the paper walk is reproducible from SANDBOX_FEED_SEED', () => {
  const started: Running[] = [];
  afterAll(async () => {
    for (const s of started) await s.close();
  });

  async function walkWith(seed: string): Promise<{ paper: string[]; live: string[] }> {
    const svc = await startOrdersApp({
      env: { SANDBOX_FEED_SEED: seed, CRYPTO_TICK_INTERVAL_MS: '1000' },
    });
    started.push(svc);
    const t = await trader(svc, `seed-${seed}@crypto.test`, { scopes: SCOPES });
    for (const step of [30_000, 45_000, 1_000]) {
      (svc.clock as ManualClock).advance(step);
      await prices(svc, t);
    }
    return {
      paper: (await prices(svc, t)).map((p) => `${p.symbol} ${p.price} ${p.as_of}`),
      live: (await prices(svc, null)).map((p) => `${p.symbol} ${p.price} ${p.as_of}`),
    };
  }

  it('gives identical prices for the same seed and clock steps, other prices for another seed', async () => {
    const a = await walkWith('42');
    const b = await walkWith('42');
    const c = await walkWith('43');
    expect(b.paper).toEqual(a.paper);
    expect(c.paper).not.toEqual(a.paper);
    // The live walk has its own fixed seed: the same whatever SANDBOX_FEED_SEED is.
    expect(c.live).toEqual(a.live);
    expect(a.live).not.toEqual(a.paper);
  });
});

describe('crypto indices: candles, paging, validation, the sandbox control and realtime', () => {
  let svc: Running;
  let t: Trader;
  let live: Trader;
  beforeAll(async () => {
    // No automatic steps: every price comes from the sandbox control, so candles are exact.
    svc = await startOrdersApp({ env: { CRYPTO_TICK_INTERVAL_MS: '0' } });
    t = await trader(svc, 'candles@crypto.test', { scopes: SCOPES });
    live = await keyFor(svc, t.email, t.token, { environment: 'live', scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('sets the paper index (test key 200); the live index does not move', async () => {
    moveTo(svc, '2026-11-22T12:00:10.000Z');
    const res = await setPrice(svc, t, 'SOL-USD', '100');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      symbol: 'SOL-USD',
      price: '100.00',
      as_of: '2026-11-22T12:00:10.000Z',
    });
    expect((await prices(svc, t))[2]).toEqual(res.body);
    expect((await prices(svc, live))[2]).toEqual({
      symbol: 'SOL-USD',
      price: '180.00',
      as_of: NOON,
    });
    expect((await prices(svc, null))[2].price).toBe('180.00');
  });

  it('refuses live keys and sessions (403 LIVE_KEY_SANDBOX_ENDPOINT), bad prices (400 naming price), unknown symbols (404)', async () => {
    expectContractError(
      await setPrice(svc, live, 'BTC-USD', '1.00'),
      403,
      'LIVE_KEY_SANDBOX_ENDPOINT',
    );
    expectContractError(
      await http(`${svc.api}/sandbox/crypto/BTC-USD/price`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}` },
        json: { price: '1.00' },
      }),
      403,
      'LIVE_KEY_SANDBOX_ENDPOINT',
    );
    for (const bad of [
      'abc',
      '-1.00',
      '0',
      '0.00',
      '1.234',
      '1e3',
      12,
      null,
      '',
      '99999999999.00',
    ]) {
      const err = expectContractError(
        await setPrice(svc, t, 'BTC-USD', bad),
        400,
        'VALIDATION_FAILED',
      );
      expect(JSON.stringify(err.details)).toContain('price');
    }
    expectContractError(
      await as(t, `${svc.api}/sandbox/crypto/BTC-USD/price`, { method: 'POST', json: {} }),
      400,
      'VALIDATION_FAILED',
    );
    const unknown = expectContractError(
      await setPrice(svc, t, 'DOGE-USD', '1.00'),
      404,
      'NOT_FOUND',
    );
    expect(unknown.details).toEqual({ symbol: 'DOGE-USD' });
    // Nothing moved.
    expect((await prices(svc, t))[0].price).toBe('95000.00');
  });

  it('aggregates open/high/low/close per 1m, 1h and 1d bucket', async () => {
    // 12:00:10 SOL 100 (above), then 130, 90 in the same minute; 110 the next minute; 200 at 13:00;
    // 50 the next day.
    moveTo(svc, '2026-11-22T12:00:40.000Z');
    expect((await setPrice(svc, t, 'SOL-USD', '130.00')).status).toBe(200);
    moveTo(svc, '2026-11-22T12:00:50.000Z');
    expect((await setPrice(svc, t, 'SOL-USD', '90.5')).status).toBe(200);
    moveTo(svc, '2026-11-22T12:01:05.000Z');
    expect((await setPrice(svc, t, 'SOL-USD', '110.00')).status).toBe(200);
    moveTo(svc, '2026-11-22T13:00:00.000Z');
    expect((await setPrice(svc, t, 'SOL-USD', '200.00')).status).toBe(200);
    moveTo(svc, '2026-11-23T00:30:00.000Z');
    expect((await setPrice(svc, t, 'SOL-USD', '50.00')).status).toBe(200);
    const candle = (time: string, open: string, high: string, low: string, close: string) => ({
      time,
      open,
      high,
      low,
      close,
    });
    const read = async (q: string) => {
      const res = await as(t, `${svc.api}/crypto/prices/SOL-USD/history?${q}`);
      expect(res.status).toBe(200);
      return res.body;
    };
    expect((await read('interval=1m')).data).toEqual([
      candle('2026-11-22T12:00:00.000Z', '100.00', '130.00', '90.50', '90.50'),
      candle('2026-11-22T12:01:00.000Z', '110.00', '110.00', '110.00', '110.00'),
      candle('2026-11-22T13:00:00.000Z', '200.00', '200.00', '200.00', '200.00'),
      candle('2026-11-23T00:30:00.000Z', '50.00', '50.00', '50.00', '50.00'),
    ]);
    // The default interval is 1m.
    expect((await read('')).data).toHaveLength(4);
    expect((await read('interval=1h')).data).toEqual([
      candle('2026-11-22T12:00:00.000Z', '100.00', '130.00', '90.50', '110.00'),
      candle('2026-11-22T13:00:00.000Z', '200.00', '200.00', '200.00', '200.00'),
      candle('2026-11-23T00:00:00.000Z', '50.00', '50.00', '50.00', '50.00'),
    ]);
    expect((await read('interval=1d')).data).toEqual([
      candle('2026-11-22T00:00:00.000Z', '100.00', '200.00', '90.50', '200.00'),
      candle('2026-11-23T00:00:00.000Z', '50.00', '50.00', '50.00', '50.00'),
    ]);
    // from inclusive, to exclusive; a date alone is UTC midnight.
    expect(
      (await read('from=2026-11-22T12:01:00Z&to=2026-11-22T13:00:00Z')).data.map(
        (c: { time: string }) => c.time,
      ),
    ).toEqual(['2026-11-22T12:01:00.000Z']);
    expect((await read('interval=1d&from=2026-11-23')).data).toHaveLength(1);
    // Other symbols have no candle: the sets touched SOL only.
    expect((await as(t, `${svc.api}/crypto/prices/BTC-USD/history`)).body.data).toEqual([]);
    // The live world has none either.
    expect((await http(`${svc.api}/crypto/prices/SOL-USD/history`)).body.data).toEqual([]);
  });

  it('pages with the shared keyset cursor, oldest first', async () => {
    const first = await as(t, `${svc.api}/crypto/prices/SOL-USD/history?interval=1m&limit=2`);
    expect(first.body.data.map((c: { time: string }) => c.time)).toEqual([
      '2026-11-22T12:00:00.000Z',
      '2026-11-22T12:01:00.000Z',
    ]);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await as(
      t,
      `${svc.api}/crypto/prices/SOL-USD/history?interval=1m&limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`,
    );
    expect(second.body.data.map((c: { time: string }) => c.time)).toEqual([
      '2026-11-22T13:00:00.000Z',
      '2026-11-23T00:30:00.000Z',
    ]);
    expect(second.body.next_cursor).toBeNull();
    // A cursor of another interval's list is refused, not misread.
    expectContractError(
      await as(
        t,
        `${svc.api}/crypto/prices/SOL-USD/history?interval=1h&cursor=${encodeURIComponent(first.body.next_cursor)}`,
      ),
      400,
      'VALIDATION_FAILED',
    );
  });

  it('answers 400 naming interval, from or to, and 404 naming an unknown symbol', async () => {
    const field = async (q: string, name: string) => {
      const err = expectContractError(
        await as(t, `${svc.api}/crypto/prices/BTC-USD/history?${q}`),
        400,
        'VALIDATION_FAILED',
      );
      expect(JSON.stringify(err.details)).toContain(`"${name}"`);
    };
    await field('interval=5m', 'interval');
    await field('interval=', 'interval');
    await field('from=yesterday', 'from');
    await field('to=2026-11-22T12:00:00', 'to'); // no zone
    await field('from=2026-11-22T13:00:00Z&to=2026-11-22T12:00:00Z', 'to');
    await field('from=2026-11-22T12:00:00Z&to=2026-11-22T12:00:00Z', 'to');
    await field('from=2025-01-01T00:00:00Z&to=2026-01-03T00:00:00Z', 'to');
    // 366 days is the longest window.
    expect(
      (await as(t, `${svc.api}/crypto/prices/BTC-USD/history?from=2025-11-22&to=2026-11-23`))
        .status,
    ).toBe(200);
    for (const symbol of ['DOGE-USD', 'btc-usd']) {
      const err = expectContractError(
        await as(t, `${svc.api}/crypto/prices/${symbol}/history`),
        404,
        'NOT_FOUND',
      );
      expect(err.details).toEqual({ symbol });
    }
  });

  it('sends each paper move on crypto:<symbol> to test-key sockets only; an unknown symbol is UNKNOWN_CHANNEL', async () => {
    const paper = await WsClient.authed(svc.baseUrl, { api_key: t.key });
    const liveWs = await WsClient.authed(svc.baseUrl, { api_key: live.key });
    try {
      await paper.subscribe(['crypto:BTC-USD']);
      await liveWs.subscribe(['crypto:BTC-USD']);
      paper.send({ type: 'subscribe', channels: ['crypto:DOGE-USD'] });
      const refused = await paper.waitFor((m) => m.type === 'error');
      expect(refused).toMatchObject({ code: 'UNKNOWN_CHANNEL' });
      moveTo(svc, '2026-11-23T01:00:00.000Z');
      expect((await setPrice(svc, t, 'BTC-USD', '101234.56')).status).toBe(200);
      const msg = await paper.waitFor((m) => m.type === 'event' && m.channel === 'crypto:BTC-USD');
      expect(msg).toMatchObject({
        channel: 'crypto:BTC-USD',
        seq: 1,
        time: '2026-11-23T01:00:00.000Z',
        data: { symbol: 'BTC-USD', price: '101234.56', as_of: '2026-11-23T01:00:00.000Z' },
      });
      await liveWs.sync();
      expect(liveWs.events('crypto:BTC-USD')).toEqual([]);
      expect((await prices(svc, live))[0].price).toBe('95000.00');
    } finally {
      await paper.close();
      await liveWs.close();
    }
  });
});
