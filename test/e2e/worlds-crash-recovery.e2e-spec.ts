import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import BetterSqlite3 from 'better-sqlite3';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { expectContractError, startApp, type Running } from '../support/harness.js';
import { as, limit, NOON, ORDER_SCOPES, TRADABLE, trader, type Trader } from '../support/orders.js';
import { openWorld, type WorldHandle } from '../support/worlds-groups.js';

const SCOPES = [...ORDER_SCOPES, 'crypto:read'];
const ENV = { SANDBOX_FEED_INTERVAL_MS: '0', RATE_LIMITS_ENABLED: 'false' };

/**
 * Crash recovery of half worlds (issue 22: "a crash while a world is being created or deleted
 * leaves no half world: at boot it is finished or removed"). Each half state is planted in the
 * DATA_DIR of a stopped service, which then boots once; the outcome is read through the API (the
 * world list, each key's 401 code) and on disk.
 * The half states here are SQLite files (vanished, cut short, `.part` copies): the file boots
 * on SQLite in the PostgreSQL pass too (`sqliteFiles`).
 */
describe('sandbox worlds: boot recovery of half worlds', () => {
  let svc: Running;
  let a: Trader;
  const worlds: Record<string, WorldHandle> = {};
  const worldsDir = () => join(svc.dataDir, 'worlds');
  const fileOf = (id: string) => join(worldsDir(), `${id}.sqlite`);
  const exportsOf = (id: string) => join(svc.dataDir, 'exports', 'worlds', id);

  beforeAll(async () => {
    svc = await startApp({ now: NOON, env: ENV, sqliteFiles: true });
    a = await trader(svc, 'a@worlds-crash.test', { scopes: SCOPES });
    for (const name of ['healthy', 'vanished', 'truncated', 'deleting', 'creating', 'rowless']) {
      worlds[name] = await openWorld(svc, a, { name, seed: 3 });
    }
    // The healthy world holds state that must survive the restart.
    const o = await as(worlds.healthy, `${svc.api}/orders`, {
      method: 'POST',
      json: limit(TRADABLE[0], 'BUY', 'YES', 2, 4),
    });
    expect(o.status).toBe(201);
    const set = await as(worlds.healthy, `${svc.api}/sandbox/crypto/BTC-USD/price`, {
      method: 'POST',
      json: { price: '111111.11' },
    });
    expect(set.status).toBe(200);
    await svc.close({ keepData: true });

    // Plant the half states a crash can leave.
    const db = new BetterSqlite3(join(svc.dataDir, 'platform.sqlite'));
    const status = db.prepare('UPDATE worlds SET status = ? WHERE id = ?');
    // A READY world whose file vanished.
    rmSync(fileOf(worlds.vanished.id));
    // A READY world whose file was cut short (a copy that did not finish).
    const bytes = readFileSync(fileOf(worlds.truncated.id));
    writeFileSync(fileOf(worlds.truncated.id), bytes.subarray(0, Math.floor(bytes.length / 2)));
    // A delete interrupted before anything was done: DELETING, file and active key.
    status.run('DELETING', worlds.deleting.id);
    // A create interrupted after its key was made, before the copy: CREATING, key, no file.
    status.run('CREATING', worlds.creating.id);
    rmSync(fileOf(worlds.creating.id));
    // A world whose row is gone but whose file and key remain.
    db.prepare('DELETE FROM worlds WHERE id = ?').run(worlds.rowless.id);
    db.close();
    // Files of no world: a whole one, with its log, and a partial copy of a create.
    copyFileSync(fileOf(worlds.healthy.id), fileOf('wld_orphan1'));
    writeFileSync(`${fileOf('wld_orphan1')}-wal`, '');
    writeFileSync(`${fileOf('wld_halfcopy')}.part`, bytes.subarray(0, 4096));
    writeFileSync(`${fileOf(worlds.healthy.id)}.part`, bytes.subarray(0, 4096));

    // Export files of worlds with no row (one with a key left, one with only a file), and of the
    // healthy world, which keeps its own.
    for (const id of [worlds.rowless.id, 'wld_orphan1', worlds.healthy.id]) {
      mkdirSync(exportsOf(id), { recursive: true });
      writeFileSync(join(exportsOf(id), 'exp_planted.csv'), 'id\n');
    }

    svc = await startApp({ now: NOON, env: ENV, dataDir: svc.dataDir, sqliteFiles: true });
  });
  afterAll(async () => {
    await svc.close();
  });

  it('keeps the whole READY world with its orders and crypto index', async () => {
    const list = await as(a, `${svc.api}/sandbox/worlds`);
    expect(list.status).toBe(200);
    expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([worlds.healthy.id]);
    const orders = await as(worlds.healthy, `${svc.api}/orders`);
    expect(orders.body.data.map((o: { quantity: number }) => o.quantity)).toEqual([4]);
    const prices = await as(worlds.healthy, `${svc.api}/crypto/prices`);
    expect(prices.body.data[0].price).toBe('111111.11');
  });

  it('removes every half world: its key revoked (401 API_KEY_REVOKED), no row left', async () => {
    for (const name of ['vanished', 'truncated', 'deleting', 'creating', 'rowless']) {
      const w = worlds[name];
      expectContractError(await as(w, `${svc.api}/wallet`), 401, 'API_KEY_REVOKED');
      expectContractError(await as(a, `${svc.api}/sandbox/worlds/${w.id}`), 404, 'NOT_FOUND');
    }
    const db = new BetterSqlite3(join(svc.dataDir, 'platform.sqlite'), { readonly: true });
    try {
      expect(db.prepare('SELECT id, status FROM worlds').all()).toEqual([
        { id: worlds.healthy.id, status: 'READY' },
      ]);
      const active = db
        .prepare('SELECT world_id FROM api_keys WHERE world_id IS NOT NULL AND revoked_at IS NULL')
        .all();
      expect(active).toEqual([{ world_id: worlds.healthy.id }]);
    } finally {
      db.close();
    }
  });

  it('leaves on disk only the files of the worlds that remain', () => {
    const files = readdirSync(worldsDir()).filter((f) => f.startsWith('wld_'));
    expect(files.filter((f) => !f.startsWith(worlds.healthy.id))).toEqual([]);
    expect(existsSync(fileOf(worlds.healthy.id))).toBe(true);
    expect(existsSync(`${fileOf(worlds.healthy.id)}.part`)).toBe(false);
  });

  it("removes the export files of worlds with no row, and keeps the remaining world's", () => {
    expect(readdirSync(join(svc.dataDir, 'exports', 'worlds'))).toEqual([worlds.healthy.id]);
    expect(readdirSync(exportsOf(worlds.healthy.id))).toEqual(['exp_planted.csv']);
  });
});
