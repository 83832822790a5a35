import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, type Running } from '../support/harness.js';
import {
  as,
  expectValidation,
  limit,
  ORDER_SCOPES,
  startOrdersApp,
  TRADABLE,
  trader,
  type Trader,
} from '../support/orders.js';
import { worldStorage } from '../support/test-database.js';
import { platformQuery } from '../support/webhooks.js';
import { idsOf } from '../support/worlds-groups.js';
import { EngineRegistry } from '../../src/modules/trading/engine-registry.js';

const SCOPES = [...ORDER_SCOPES, 'wallet:write', 'websocket'];

/** Ephemeral worlds: lifecycle, bad input, isolation, reproducibility and their own clocks. */
describe('sandbox worlds', () => {
  let svc: Running;
  let a: Trader;
  let b: Trader;
  const m = TRADABLE[0];

  const create = (t: Pick<Trader, 'key'>, body: Record<string, unknown> = {}) =>
    as(t, `${svc.api}/sandbox/worlds`, { method: 'POST', json: body });
  const worldKey = async (t: Trader, body: Record<string, unknown> = {}) => {
    const r = await create(t, body);
    expect(r.status).toBe(201);
    return { id: r.body.id as string, key: r.body.key as string };
  };

  /**
   * What a refused request must leave as it was: the user's listed worlds, their registry rows
   * and keys, and the files under DATA_DIR/worlds.
   */
  const footprint = async (t: Trader) => {
    const ids = (sql: string) => platformQuery<{ id: string }>(svc, sql, t.userId).map((r) => r.id);
    return {
      listed: idsOf((await as(t, `${svc.api}/sandbox/worlds?limit=100`)).body),
      rows: ids('SELECT id FROM worlds WHERE user_id = ? ORDER BY id'),
      keys: ids('SELECT id FROM api_keys WHERE user_id = ? ORDER BY id'),
      files: worldStorage(svc.dataDir),
    };
  };

  beforeAll(async () => {
    svc = await startOrdersApp({
      env: { SANDBOX_FEED_INTERVAL_MS: '1000', SANDBOX_CLOCK_CONTROL: 'true' },
    });
    a = await trader(svc, 'a@worlds.test', { scopes: SCOPES });
    b = await trader(svc, 'b@worlds.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('creates, lists, gets and deletes a world; its key stops at once', async () => {
    const r = await create(a, { name: 'ci', seed: 7, ttl_seconds: 600 });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'ci', seed: 7, status: 'READY' });
    expect(r.body.id).toMatch(/^wld_/);
    expect(r.body.key).toMatch(/^svc_test_/);
    expect(Date.parse(r.body.expires_at) - Date.parse(r.body.created_at)).toBe(600_000);
    const got = await as(a, `${svc.api}/sandbox/worlds/${r.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body.key).toBeUndefined();
    const list = await as(a, `${svc.api}/sandbox/worlds`);
    expect(list.body.data.map((w: { id: string }) => w.id)).toContain(r.body.id);
    // Another user's world is not found.
    expectContractError(await as(b, `${svc.api}/sandbox/worlds/${r.body.id}`), 404, 'NOT_FOUND');
    const key = { key: r.body.key as string };
    expect((await as(key, `${svc.api}/wallet`)).status).toBe(200);
    const del = await as(a, `${svc.api}/sandbox/worlds/${r.body.id}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expectContractError(await as(key, `${svc.api}/wallet`), 401, 'API_KEY_REVOKED');
    expectContractError(await as(a, `${svc.api}/sandbox/worlds/${r.body.id}`), 404, 'NOT_FOUND');
  });

  it("a deleted world's key is refused everywhere and writes nothing: no order, world, endpoint or file", async () => {
    const w = await worldKey(a);
    const k = { key: w.key };
    expect(
      (await as(k, `${svc.api}/orders`, { method: 'POST', json: limit(m, 'BUY', 'YES', 2, 1) }))
        .status,
    ).toBe(201);
    expect((await as(a, `${svc.api}/sandbox/worlds/${w.id}`, { method: 'DELETE' })).status).toBe(
      204,
    );
    const before = await footprint(a);
    const paperOrders = idsOf((await as(a, `${svc.api}/orders?limit=100`)).body);
    const writes: [string, string, unknown][] = [
      ['POST', '/orders', limit(m, 'BUY', 'YES', 99, 1)],
      ['POST', '/sandbox/worlds', {}],
      ['POST', '/sandbox/wallet/fund', { amount_cents: 100 }],
      ['POST', '/sandbox/clock', { advance_seconds: 60 }],
      ['POST', '/sandbox/reset', undefined],
      ['POST', '/webhooks', { url: 'https://example.com/hook', events: ['order.created'] }],
      ['POST', '/watchlists', { name: 'after delete' }],
    ];
    for (const [method, path, json] of writes) {
      expectContractError(
        await as(k, `${svc.api}${path}`, { method, json }),
        401,
        'API_KEY_REVOKED',
      );
    }
    expect(await footprint(a)).toEqual(before);
    expect(before.files.some((f) => f.startsWith(w.id))).toBe(false);
    expect(idsOf((await as(a, `${svc.api}/orders?limit=100`)).body)).toEqual(paperOrders);
    expect(
      platformQuery(svc, 'SELECT id FROM webhook_endpoints WHERE user_id = ?', a.userId),
    ).toEqual([]);
    // Nothing loaded the deleted world's engine again.
    expect(svc.app.get(EngineRegistry).isWorldLoaded(w.id as `wld_${string}`)).toBe(false);
  });

  it('refuses bad input with its code and creates nothing: no world, row, key or file', async () => {
    await worldKey(a); // so the footprint has a world and a file to keep
    const before = await footprint(a);
    expect(before.listed.length).toBeGreaterThan(0);
    expect(before.files.length).toBeGreaterThan(0);
    expectValidation(await create(a, { ttl_seconds: 59 }), 'ttl_seconds');
    expectValidation(await create(a, { ttl_seconds: 86_401 }), 'ttl_seconds');
    expectValidation(await create(a, { ttl_seconds: 600.5 }), 'ttl_seconds');
    expectValidation(await create(a, { seed: 1.5 }), 'seed');
    expectValidation(await create(a, { seed: '7' }), 'seed');
    expectValidation(await create(a, { seed: 2 ** 31 }), 'seed');
    expect((await create(a, { colour: 'red' })).status).toBe(400);
    expect(await footprint(a)).toEqual(before);
  });

  it('answers 422 WORLD_LIMIT_REACHED for a 21st live world', async () => {
    const c = await trader(svc, 'c@worlds.test', { scopes: SCOPES });
    const made = await Promise.all(Array.from({ length: 20 }, () => create(c)));
    expect(made.map((r) => r.status)).toEqual(Array(20).fill(201));
    const before = await footprint(c);
    expect(before.listed).toHaveLength(20);
    const err = expectContractError(await create(c), 422, 'WORLD_LIMIT_REACHED');
    expect(err.details).toMatchObject({ limit: 20, live: 20 });
    // Parallel attempts at the cap are all refused the same way, and none leaves a trace.
    const again = await Promise.all(Array.from({ length: 3 }, () => create(c)));
    for (const r of again) expectContractError(r, 422, 'WORLD_LIMIT_REACHED');
    expect(await footprint(c)).toEqual(before);
    const del = await as(c, `${svc.api}/sandbox/worlds/${made[0].body.id}`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect((await create(c)).status).toBe(201);
  });

  it('keeps every record inside its world: orders, trades, positions, wallet', async () => {
    const w1 = await worldKey(a, { seed: 1 });
    const w2 = await worldKey(a, { seed: 1 });
    const k1 = { key: w1.key };
    const k2 = { key: w2.key };
    const placed = await as(k1, `${svc.api}/orders`, {
      method: 'POST',
      json: limit(m, 'BUY', 'YES', 99, 3),
    });
    expect(placed.status).toBe(201);
    expect(placed.body.environment).toBe('test');
    const orderId = placed.body.id as string;
    // Not in the paper world, nor in the other world.
    expectContractError(await as(a, `${svc.api}/orders/${orderId}`), 404, 'NOT_FOUND');
    expectContractError(await as(k2, `${svc.api}/orders/${orderId}`), 404, 'NOT_FOUND');
    expect((await as(k2, `${svc.api}/positions/cursor`)).body.data).toEqual([]);
    expect((await as(k1, `${svc.api}/positions/cursor`)).body.data.length).toBe(1);
    const paperWallet = (await as(a, `${svc.api}/wallet`)).body;
    const w2Wallet = (await as(k2, `${svc.api}/wallet`)).body;
    const w1Wallet = (await as(k1, `${svc.api}/wallet`)).body;
    expect(w1Wallet.balance_cents).toBeLessThan(w2Wallet.balance_cents);
    expect(paperWallet.balance_cents).toBe(w2Wallet.balance_cents);
    // The world's trades are not the paper world's, nor the other world's.
    const w1Trades = (await as(k1, `${svc.api}/markets/${m.id}/trades`)).body.data;
    expect(w1Trades.length).toBeGreaterThan(0);
    const ids = new Set(w1Trades.map((t: { id: string }) => t.id));
    for (const other of [a, k2]) {
      const seen = (await as(other, `${svc.api}/markets/${m.id}/trades`)).body.data;
      expect(seen.some((t: { id: string }) => ids.has(t.id))).toBe(false);
    }
  });

  it('gives the same fills and prices for the same seed and requests', async () => {
    const run = async (seed: number) => {
      const w = await worldKey(a, { seed });
      const k = { key: w.key };
      const out: unknown[] = [];
      for (let step = 0; step < 4; step++) {
        const clock = await as(k, `${svc.api}/sandbox/clock`, {
          method: 'POST',
          json: { advance_seconds: 5 },
        });
        expect(clock.status).toBe(200);
        const bookRes = await as(k, `${svc.api}/markets/${m.id}/orderbook?depth=3`);
        const o = await as(k, `${svc.api}/orders`, {
          method: 'POST',
          json: limit(m, step % 2 === 0 ? 'BUY' : 'SELL', 'YES', step % 2 === 0 ? 99 : 1, 2),
        });
        out.push({
          book: bookRes.body,
          status: o.status,
          filled: o.body.filled_quantity,
          fills: (o.body.fills ?? []).map((f: { price: number; quantity: number }) => [
            f.price,
            f.quantity,
          ]),
        });
      }
      out.push((await as(k, `${svc.api}/wallet`)).body);
      return out;
    };
    const first = await run(424242);
    const second = await run(424242);
    expect(second).toEqual(first);
    const other = await run(99);
    expect(other).not.toEqual(first);
  });

  it("advancing a world's clock moves that world only", async () => {
    const w1 = await worldKey(a);
    const w2 = await worldKey(a);
    const k1 = { key: w1.key };
    const k2 = { key: w2.key };
    const adv = await as(k1, `${svc.api}/sandbox/clock`, {
      method: 'POST',
      json: { advance_seconds: 86_400 },
    });
    expect(adv.status).toBe(200);
    const o1 = await as(k1, `${svc.api}/orders`, {
      method: 'POST',
      json: limit(m, 'BUY', 'YES', 2, 1),
    });
    const o2 = await as(k2, `${svc.api}/orders`, {
      method: 'POST',
      json: limit(m, 'BUY', 'YES', 2, 1),
    });
    const op = await as(a, `${svc.api}/orders`, {
      method: 'POST',
      json: limit(m, 'BUY', 'YES', 2, 1),
    });
    const t1 = Date.parse(o1.body.created_at);
    const t2 = Date.parse(o2.body.created_at);
    const tp = Date.parse(op.body.created_at);
    expect(t1 - t2).toBeGreaterThanOrEqual(86_400_000);
    expect(Math.abs(t2 - tp)).toBeLessThan(60_000);
  });
});
