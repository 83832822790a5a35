import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Endpoint } from '../../common/api/endpoint.decorator.js';
import { DomainError } from '../../common/errors/domain-error.js';
import { ANSWERS_FOR_ITS_INSTANCE } from '../cluster/world-bound.js';
import { ENGINE_DB, PLATFORM_DB } from '../../database/databases.js';
import { RedisConnection } from '../redis/redis-connection.js';
import { EngineRegistry } from '../trading/engine-registry.js';

const STATUS_SCHEMA = {
  type: 'object',
  required: ['status'],
  properties: {
    status: { type: 'string', enum: ['ok', 'ready'] },
    checks: { type: 'object', additionalProperties: { type: 'string' } },
  },
};

@ApiTags('Meta')
@Controller('health')
export class HealthController {
  /** Cluster mode: each instance answers its probes itself, never through a world's writer. */
  static readonly [ANSWERS_FOR_ITS_INSTANCE] = true;

  constructor(
    @InjectDataSource(PLATFORM_DB) private readonly platform: DataSource,
    @InjectDataSource(ENGINE_DB.live) private readonly live: DataSource,
    @InjectDataSource(ENGINE_DB.test) private readonly paper: DataSource,
    private readonly engines: EngineRegistry,
    private readonly redis: RedisConnection,
  ) {}

  @Get()
  @Endpoint({ summary: 'Liveness', auth: 'public', schema: STATUS_SCHEMA })
  liveness(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @Endpoint({
    summary: 'Readiness: every database answers',
    auth: 'public',
    schema: STATUS_SCHEMA,
    errors: [503],
  })
  async readiness(): Promise<{ status: 'ready'; checks: Record<string, string> }> {
    const checks: Record<string, string> = {};
    let ok = true;
    for (const [name, ds] of [
      ['platform', this.platform],
      ['live', this.live],
      ['paper', this.paper],
    ] as const) {
      try {
        // A read of a real table (TypeORM's migrations record), so the database file itself
        // answers: SELECT 1 never touched it.
        await ds.query('SELECT COUNT(*) AS n FROM migrations');
        checks[name] = 'ok';
      } catch {
        checks[name] = 'unavailable';
        ok = false;
      }
    }
    for (const env of ['live', 'test'] as const) {
      // An engine that could not be rebuilt from its database refuses commands until restart.
      const healthy = this.engines.get(env).healthy;
      checks[`${env === 'live' ? 'live' : 'paper'}_engine`] = healthy ? 'ok' : 'unavailable';
      ok &&= healthy;
    }
    // Redis (REDIS_URL) holds shared limit windows and the replay cache, which fail open: its
    // absence is reported, and the instance stays ready. A PING bounded in time, so a frozen
    // Redis is reported too, and never holds the probe.
    if (this.redis.client !== null) {
      checks.redis = (await this.redis.answers()) ? 'ok' : 'unavailable';
    }
    if (!ok) {
      throw new DomainError('SERVICE_UNAVAILABLE', 'A database or engine is unavailable', {
        checks,
      });
    }
    return { status: 'ready', checks };
  }
}
