import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { expectContractError, startApp, type Running } from '../support/harness.js';
import { as, limit, ORDER_SCOPES, NOON, TRADABLE, trader, type Trader } from '../support/orders.js';
import { openDatabaseOf, plantHalfWorld, worldDatabaseExists } from '../support/test-database.js';
import { EphemeralWorldsService } from '../../src/modules/worlds/ephemeral-worlds.service.js';

const SCOPES = [...ORDER_SCOPES, 'wallet:write'];
const ENV = {
  SANDBOX_FEED_INTERVAL_MS: '0',
  RATE_LIMITS_ENABLED: 'false',
  WORLD_IDLE_UNLOAD_SECONDS: '1',
  WORLD_SWEEP_MS: '50',
  MAX_WORLDS_PER_USER: '60',
};

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Idle unload with state intact, expiry on the service clock, and boot recovery of half worlds. */
describe('sandbox worlds: unload, expiry and crash recovery', () => {
  let svc: Running;
  let a: Trader;
  const m = TRADABLE[0];
  const worlds = () => svc.app.get(EphemeralWorldsService);

  beforeAll(async () => {
    svc = await startApp({ now: NOON, env: ENV });
    a = await trader(svc, 'a@worlds-lifecycle.test', { scopes: SCOPES });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('unloads an idle world and loads it again with its state intact', async () => {
    const w = await as(a, `${svc.api}/sandbox/worlds`, { method: 'POST', json: {} });
    const k = { key: w.body.key as string };
    const o = await as(k, `${svc.api}/orders`, {
      method: 'POST',
      json: limit(m, 'BUY', 'YES', 2, 3),
    });
    expect(o.status).toBe(201);
    expect(worlds().isLoaded(w.body.id)).toBe(true);
    await until(() => !worlds().isLoaded(w.body.id));
    const again = await as(k, `${svc.api}/orders/${o.body.id as string}`);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: o.body.id, status: 'OPEN', quantity: 3 });
    expect(worlds().isLoaded(w.body.id)).toBe(true);
  });

  it('runs 50 worlds trading in parallel with no record crossing', async () => {
    const made = await Promise.all(
      Array.from({ length: 50 }, () =>
        as(a, `${svc.api}/sandbox/worlds`, { method: 'POST', json: { seed: 5 } }),
      ),
    );
    expect(made.every((r) => r.status === 201)).toBe(true);
    // World i places i + 1 contracts (a resting bid), all worlds at once.
    const placed = await Promise.all(
      made.map((w, i) =>
        as({ key: w.body.key as string }, `${svc.api}/orders`, {
          method: 'POST',
          json: limit(m, 'BUY', 'YES', 2, i + 1),
        }),
      ),
    );
    expect(placed.every((r) => r.status === 201)).toBe(true);
    const lists = await Promise.all(
      made.map((w) => as({ key: w.body.key as string }, `${svc.api}/orders`)),
    );
    lists.forEach((l, i) => {
      expect(l.body.data.map((o: { id: string; quantity: number }) => [o.id, o.quantity])).toEqual([
        [placed[i].body.id, i + 1],
      ]);
    });
    await Promise.all(
      made.map((w) =>
        as(a, `${svc.api}/sandbox/worlds/${w.body.id as string}`, { method: 'DELETE' }),
      ),
    );
  });

  it('deletes a world at expiry on the service clock: key revoked, file removed', async () => {
    const w = await as(a, `${svc.api}/sandbox/worlds`, {
      method: 'POST',
      json: { ttl_seconds: 60 },
    });
    const id = w.body.id as string;
    expect(worldDatabaseExists(svc.dataDir, id)).toBe(true);
    (svc.clock as unknown as { advance(ms: number): void }).advance(61_000);
    await worlds().sweep();
    expect(worldDatabaseExists(svc.dataDir, id)).toBe(false);
    expectContractError(await as({ key: w.body.key }, `${svc.api}/wallet`), 401, 'API_KEY_REVOKED');
  });

  it('at boot, removes worlds a crash left CREATING or DELETING (rows, keys, files)', async () => {
    const w = await as(a, `${svc.api}/sandbox/worlds`, { method: 'POST', json: {} });
    const id = w.body.id as string;
    await svc.close({ keepData: true });
    // Plant the half states: the created world marked DELETING, and a CREATING row with a file.
    const db = openDatabaseOf(svc.dataDir, 'platform');
    db.prepare(`UPDATE worlds SET status = 'DELETING' WHERE id = ?`).run(id);
    db.prepare(
      `INSERT INTO worlds (id, user_id, name, seed, starting_balance_cents, status, key_id, clock_offset_ms, expires_at, created_at)
       VALUES ('wld_halfmade', ?, NULL, 1, 0, 'CREATING', NULL, 0, '2030-01-01T00:00:00.000Z', '2026-11-22T12:00:00.000Z')`,
    ).run(a.userId);
    db.close();
    plantHalfWorld(svc.dataDir, 'wld_halfmade');
    svc = await startApp({ now: NOON, env: ENV, dataDir: svc.dataDir });
    const check = openDatabaseOf(svc.dataDir, 'platform', { readonly: true });
    expect(check.prepare(`SELECT id FROM worlds WHERE status <> 'READY'`).all()).toEqual([]);
    check.close();
    expect(worldDatabaseExists(svc.dataDir, 'wld_halfmade')).toBe(false);
    expect(worldDatabaseExists(svc.dataDir, id)).toBe(false);
    expectContractError(await as({ key: w.body.key }, `${svc.api}/wallet`), 401, 'API_KEY_REVOKED');
  });
});
