import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { RedisServer } from '../../../test/support/redis-server.js';
import { loadConfig } from '../../config/app-config.js';
import { ConfigService } from '../../config/config.service.js';
import { REDIS_PROBE_MS, RedisConnection } from '../redis/redis-connection.js';
import type { EngineRegistry } from '../trading/engine-registry.js';
import { HealthController } from './health.controller.js';

/** GET /health/ready's Redis check on a real redis-server: up, then frozen (SIGSTOP). */
let server: RedisServer;
let conn: RedisConnection;

beforeAll(async () => {
  server = await RedisServer.start();
  conn = new RedisConnection(
    new ConfigService(loadConfig({ REDIS_URL: server.url }), {
      jwtSecret: 'x'.repeat(32),
      encryptionKey: '0'.repeat(64),
    }),
  );
  await conn.onModuleInit();
}, 30_000);

afterAll(async () => {
  conn.onApplicationShutdown();
  await server.stop();
});

function controller(): HealthController {
  const db = { query: () => Promise.resolve([{ n: 1 }]) } as unknown as DataSource;
  const engines = { get: () => ({ healthy: true }) } as unknown as EngineRegistry;
  return new HealthController(db, db, db, engines, conn);
}

describe('readiness and Redis', () => {
  it('reports redis ok while it answers', async () => {
    expect(await controller().readiness()).toEqual({
      status: 'ready',
      checks: {
        platform: 'ok',
        live: 'ok',
        paper: 'ok',
        live_engine: 'ok',
        paper_engine: 'ok',
        redis: 'ok',
      },
    });
  });

  it('reports a frozen Redis unavailable within the probe bound, and stays ready (fail-open)', async () => {
    server.freeze();
    try {
      expect(conn.ready).toBe(true); // connections open: the status alone says ready
      const started = Date.now();
      const answer = await controller().readiness();
      expect(Date.now() - started).toBeLessThan(REDIS_PROBE_MS + 1_000);
      expect(answer.status).toBe('ready');
      expect(answer.checks.redis).toBe('unavailable');
    } finally {
      server.thaw();
    }
    expect((await controller().readiness()).checks.redis).toBe('ok');
  });
});
