import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { lockKey, WORK_NAMESPACE } from '../../src/modules/cluster/lock-key.js';
import { ConfigService } from '../../src/config/config.service.js';
import { EphemeralWorldsService } from '../../src/modules/worlds/ephemeral-worlds.service.js';
import { startApp, type Running } from '../support/harness.js';
import { as, NOON, ORDER_SCOPES, trader, type Trader } from '../support/orders.js';
import {
  openDatabaseOf,
  testDatabaseIsPostgres,
  worldDatabaseExists,
} from '../support/test-database.js';
import { openWorld, type WorldHandle } from '../support/worlds-groups.js';

const ENV = { SANDBOX_FEED_INTERVAL_MS: '0', RATE_LIMITS_ENABLED: 'false' };
/** The PostgreSQL pass boots in cluster mode (DATABASE_URL and REDIS_URL): peers can exist. */
const CLUSTERED = testDatabaseIsPostgres();

/**
 * Issue 24: boot recovery removes a world left CREATING or DELETING only when its create or
 * delete runs on no live instance. A live peer is played by a PostgreSQL session holding the
 * world's work lock, as the instance making or deleting it does for the whole operation; the
 * instance booting after the lease's holder stopped runs recovery meanwhile.
 */
describe('sandbox worlds: boot recovery and the worlds a live instance is making', () => {
  let svc: Running;
  let a: Trader;
  let creating: WorldHandle;
  let deleting: WorldHandle;
  /** A delete whose instance dies while this one runs. */
  let dying: WorldHandle;
  let peer: pg.Client | null = null;
  let dyingPeer: pg.Client | null = null;

  const platform = <R>(fn: (db: ReturnType<typeof openDatabaseOf>) => R): R => {
    const db = openDatabaseOf(svc.dataDir, 'platform');
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };
  const setStatus = (id: string, status: string) =>
    platform((db) => db.prepare('UPDATE worlds SET status = ? WHERE id = ?').run(status, id));
  const statusOf = (id: string): string | undefined =>
    platform(
      (db) =>
        db.prepare('SELECT status FROM worlds WHERE id = ?').get(id) as
          { status: string } | undefined,
    )?.status;
  const keyWorks = async (w: WorldHandle) => (await as(w, `${svc.api}/wallet`)).status;

  beforeAll(async () => {
    svc = await startApp({ now: NOON, env: ENV });
    a = await trader(svc, 'a@worlds-peers.test', { scopes: ORDER_SCOPES });
    creating = await openWorld(svc, a, { name: 'creating', seed: 5 });
    deleting = await openWorld(svc, a, { name: 'deleting', seed: 6 });
    dying = await openWorld(svc, a, { name: 'dying', seed: 7 });
    const databaseUrl = svc.app.get(ConfigService).values.databaseUrl;
    await svc.close({ keepData: true });

    // The states a live peer's create and delete are in, each with its work lock held.
    setStatus(creating.id, 'CREATING');
    setStatus(deleting.id, 'DELETING');
    setStatus(dying.id, 'DELETING');
    if (CLUSTERED) {
      const holding = async (...worlds: WorldHandle[]) => {
        const client = new pg.Client({ connectionString: databaseUrl! });
        await client.connect();
        for (const w of worlds) {
          const [ns, key] = lockKey(WORK_NAMESPACE, w.id);
          const r = await client.query<{ locked: boolean }>(
            'SELECT pg_try_advisory_lock($1, $2) AS locked',
            [ns, key],
          );
          expect(r.rows[0].locked).toBe(true);
        }
        return client;
      };
      peer = await holding(creating, deleting);
      dyingPeer = await holding(dying);
    }
    // This instance takes the recovery lease (its holder stopped) and recovers at boot.
    svc = await startApp({ now: NOON, env: ENV, dataDir: svc.dataDir });
  });
  afterAll(async () => {
    await peer?.end();
    await dyingPeer?.end();
    await svc.close();
  });

  if (CLUSTERED) {
    it('cluster mode: leaves the CREATING and DELETING worlds whose work lock a live peer holds', async () => {
      expect(statusOf(creating.id)).toBe('CREATING');
      expect(statusOf(deleting.id)).toBe('DELETING');
      expect(statusOf(dying.id)).toBe('DELETING');
      expect(worldDatabaseExists(svc.dataDir, creating.id)).toBe(true);
      expect(worldDatabaseExists(svc.dataDir, deleting.id)).toBe(true);
      // Not revoked: the peer's create answers this key.
      expect(await keyWorks(creating)).not.toBe(401);
    });

    it("cluster mode: the sweep removes a world whose peer died after this instance's boot", async () => {
      await dyingPeer!.end();
      dyingPeer = null;
      await svc.app.get(EphemeralWorldsService).sweep(true);
      expect(statusOf(dying.id)).toBeUndefined();
      expect(worldDatabaseExists(svc.dataDir, dying.id)).toBe(false);
      expect(await keyWorks(dying)).toBe(401);
      // The live peer's worlds are still left to it.
      expect(statusOf(creating.id)).toBe('CREATING');
      expect(statusOf(deleting.id)).toBe('DELETING');
    });

    it('cluster mode: the peer finishes its create; once it dies, the next recovery removes its delete', async () => {
      // The peer's create ends: READY, then its lock released; the peer then dies (its session
      // ends) in the middle of the delete.
      setStatus(creating.id, 'READY');
      await peer!.end();
      peer = null;
      await svc.close({ keepData: true });
      svc = await startApp({ now: NOON, env: ENV, dataDir: svc.dataDir });

      expect(statusOf(deleting.id)).toBeUndefined();
      expect(worldDatabaseExists(svc.dataDir, deleting.id)).toBe(false);
      expect(await keyWorks(deleting)).toBe(401);
      const list = await as(a, `${svc.api}/sandbox/worlds`);
      expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([creating.id]);
      expect(await keyWorks(creating)).toBe(200);
    });
  } else {
    it('one instance: removes every CREATING and DELETING world at boot (no peer can be making it)', async () => {
      expect(statusOf(creating.id)).toBeUndefined();
      expect(statusOf(deleting.id)).toBeUndefined();
      expect(statusOf(dying.id)).toBeUndefined();
      expect(worldDatabaseExists(svc.dataDir, creating.id)).toBe(false);
      expect(await keyWorks(creating)).toBe(401);
      expect(await keyWorks(deleting)).toBe(401);
    });
  }
});
