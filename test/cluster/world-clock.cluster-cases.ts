import { beforeAll, describe, expect, it } from '@jest/globals';
import { http } from '../support/harness.js';
import type { ServiceProcess } from '../support/process.js';
import type { RedisServer } from '../support/redis-server.js';
import { enterpriseTrader, waitWriter, type Cluster } from './cluster-fixture.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
/** How long an instance may serve a world clock it missed a move of (WorldClocks: the TTL). */
const REREAD_BOUND_MS = 5_000;

/**
 * An ephemeral world's clock with instances on one PostgreSQL and one Redis: the world's
 * writer moves it (POST /sandbox/clock with the world key, forwarded from wherever it arrives),
 * and every instance's time rules of that world read the moved clock, the ones served locally
 * too (the limit windows of GET /auth/me, answered by the instance the request reaches).
 *
 * The cases of a cluster spec that boots the instances and the Redis they share (redis-outage:
 * three instances, SANDBOX_FEED_INTERVAL_MS=0, Redis running again when these begin), instead of
 * a cluster of their own: they make their own world, trader and key, and read nothing the spec's
 * other cases left behind.
 */
export function describeWorldClock(shared: () => { cluster: Cluster; redis: RedisServer }): void {
  describe("cluster: an ephemeral world's clock on every instance", () => {
    let redis: RedisServer;
    let cluster: Cluster;
    let writer: ServiceProcess;
    let other: ServiceProcess;
    let world: { id: string; key: string };

    beforeAll(async () => {
      ({ cluster, redis } = shared());
      const first = cluster.instances[0];
      const t = await enterpriseTrader(first);
      const made = await http(`${first.api}/sandbox/worlds`, {
        method: 'POST',
        headers: { 'x-api-key': t.key },
        json: {},
      });
      expect(made.status).toBe(201);
      world = { id: made.body.id as string, key: made.body.key as string };
      // A world-bound read loads the world (its first election), then its writer is known.
      for (const svc of cluster.instances) expect((await wallet(svc)).status).toBe(200);
      writer = await waitWriter(cluster.services.admin, cluster.instances, world.id);
      other = cluster.instances.find((i) => i !== writer)!;
    }, 120_000);

    const wallet = (svc: ServiceProcess) =>
      http(`${svc.api}/wallet`, {
        headers: { 'x-api-key': world.key },
        signal: AbortSignal.timeout(10_000),
      });

    /** The end of the key's per-minute window as the instance serves it (unix seconds): world time. */
    const windowEnd = async (svc: ServiceProcess): Promise<number> => {
      const res = await http(`${svc.api}/auth/me`, {
        headers: { 'x-api-key': world.key },
        signal: AbortSignal.timeout(10_000),
      });
      expect(res.status).toBe(200);
      return Number(res.headers.get('x-ratelimit-reset'));
    };

    const move = async (svc: ServiceProcess, seconds: number): Promise<number> => {
      const res = await http(`${svc.api}/sandbox/clock`, {
        method: 'POST',
        headers: { 'x-api-key': world.key },
        json: { advance_seconds: seconds },
        signal: AbortSignal.timeout(10_000),
      });
      expect(res.status).toBe(200);
      return Date.parse(res.body.now as string);
    };

    it('a move through the instance that is not the writer holds on it at once, and on the writer', async () => {
      // Both instances have used the world's clock (its limit window) before the move.
      for (const svc of [writer, other]) {
        expect(await windowEnd(svc)).toBeLessThan(Date.now() / 1000 + 120);
      }
      const now = await move(other, 3600);
      expect(now).toBeGreaterThan(Date.now() + 3540_000);
      // No wait: the instance that forwarded the move answered it with the writer's clock.
      expect(await windowEnd(other)).toBeGreaterThan(now / 1000 - 60);
      expect(await windowEnd(writer)).toBeGreaterThan(now / 1000 - 60);
    });

    it('a move through the writer reaches the other instance by its signal', async () => {
      const now = await move(writer, 3600);
      const deadline = Date.now() + 2_000;
      let end = await windowEnd(other);
      while (end < now / 1000 - 60 && Date.now() < deadline) {
        await sleep(50);
        end = await windowEnd(other);
      }
      expect(end).toBeGreaterThan(now / 1000 - 60);
    });

    it('a move whose signal is lost (Redis down) reaches the other instance from the database within 5 s', async () => {
      expect(await windowEnd(other)).toBeGreaterThan(Date.now() / 1000 + 7000);
      await redis.stop();
      try {
        // The writer serves its own world's requests while Redis is down; the signal goes nowhere.
        const now = await move(writer, 86_400);
        const since = Date.now();
        let end = await windowEnd(other);
        while (end < now / 1000 - 60 && Date.now() - since < REREAD_BOUND_MS + 3_000) {
          await sleep(200);
          end = await windowEnd(other);
        }
        expect(end).toBeGreaterThan(now / 1000 - 60);
      } finally {
        await redis.start();
      }
    });
  });
}
