/**
 * bench:limits — what the whole limit check costs per request: the per-IP ceiling plus the
 * per-key tier ceiling, a per-route limit and both quotas (metering on), against the in-process
 * store, for many keys and IPs. Prints ns per request and writes bench/results/limits.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteMeta } from '../src/common/api/route-meta.js';
import { ManualClock } from '../src/common/clock/clock.js';
import type { Credential } from '../src/common/http/request-context.js';
import { loadConfig } from '../src/config/app-config.js';
import { ConfigService } from '../src/config/config.service.js';
import { MemoryLimitStore } from '../src/modules/limits/limit-store.js';
import { LimitsService } from '../src/modules/limits/limits.service.js';

const reply = { header: () => reply } as unknown as FastifyReply;
const meta: RouteMeta = {
  auth: 'key',
  scopes: ['orders:write'],
  lifecycle: { state: 'STABLE' },
  environment: 'any',
  routeLimitPerMinute: 60,
};

async function main(): Promise<void> {
  const clock = new ManualClock('2026-11-22T12:00:00.000Z');
  const config = new ConfigService(loadConfig({ DATA_API_USAGE_METERING_ENABLED: 'true' }), {
    jwtSecret: 'x'.repeat(32),
    encryptionKey: '0'.repeat(64),
  });
  const limits = new LimitsService(new MemoryLimitStore(), clock, config);
  const keys = 5_000;
  const creds: Credential[] = Array.from({ length: keys }, (_, i) => ({
    type: 'API_KEY',
    userId: `usr_${i}`,
    keyId: `key_${i}`,
    environment: 'test',
    world: 'test',
    scopes: ['orders:write'],
    tier: 'ENTERPRISE',
  }));
  const reqs = Array.from({ length: keys }, (_, i) => ({
    ip: `10.${(i >> 8) & 255}.${i & 255}.1`,
    url: '/api/v1/orders',
  })) as unknown as FastifyRequest[];

  const run = async (n: number): Promise<number> => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const k = i % keys;
      if (i % (keys * 50) === 0) clock.advance(60_000); // stay under every ceiling: measure the pass path
      await limits.checkIp(reqs[k], meta);
      await limits.checkCredential(creds[k], meta, 'POST /api/v1/orders', reply);
    }
    return Number(process.hrtime.bigint() - t0);
  };
  await run(200_000); // warm-up
  const n = 1_000_000;
  const ns = await run(n);
  const perRequestNs = ns / n;
  const figures = {
    benchmark: 'limits',
    requests: n,
    keys,
    checks_per_request: 'per-IP + per-key + per-route + daily quota + monthly quota',
    ns_per_request: Math.round(perRequestNs),
    us_per_request: Number((perRequestNs / 1000).toFixed(3)),
    requests_per_second: Math.round(1e9 / perRequestNs),
    node: process.version,
    at: new Date().toISOString(),
  };
  console.log(JSON.stringify(figures, null, 2));
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/limits.json', JSON.stringify(figures, null, 2) + '\n');
}

void main();
