import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { createRequire } from 'node:module';
import type * as IORedis from 'ioredis';
import type { Redis } from 'ioredis';
import { ConfigService } from '../../config/config.service.js';

/** How long the boot waits for a first connection before serving without Redis (fail-open). */
const FIRST_CONNECT_MS = 3_000;
/** Most time between reconnection attempts while Redis is away. */
const MAX_RECONNECT_DELAY_MS = 1_000;
/** How long a readiness probe waits for Redis's PING answer (a frozen Redis never answers). */
export const REDIS_PROBE_MS = 500;

/**
 * The one Redis client of the process when REDIS_URL is set (null otherwise): shared limit
 * windows and the signature replay cache live there. Commands fail at once while the server is
 * away (no offline queue), so every caller falls back or fails open instead of queueing behind
 * a dead socket; the client keeps reconnecting and callers use it again as soon as it is back.
 */
@Injectable()
export class RedisConnection implements OnModuleInit, OnApplicationShutdown {
  private readonly log = new Logger('Redis');
  readonly client: Redis | null;
  private down = false;

  constructor(config: ConfigService) {
    const url = config.values.redisUrl;
    this.client = url === null ? null : connect(url, config.values.redisKeyPrefix);
    this.client?.on('error', (err: Error) => {
      // ioredis emits an error per failed attempt: one warning per outage, one line on return.
      if (this.down) return;
      this.down = true;
      this.log.warn(`Redis unavailable (${err.message}); limits and the replay cache fail open`);
    });
    this.client?.on('ready', () => {
      if (!this.down) return;
      this.down = false;
      this.log.log('Redis is back; shared limits and the replay cache use it again');
    });
  }

  /** Configured and connected now. */
  get ready(): boolean {
    return this.client?.status === 'ready';
  }

  /**
   * Connected and answering a PING within `timeoutMs`: a frozen Redis (connections open, no
   * answers) keeps the status 'ready', so the status alone would report it healthy.
   */
  async answers(timeoutMs = REDIS_PROBE_MS): Promise<boolean> {
    const client = this.client;
    if (client === null || client.status !== 'ready') return false;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        client.ping().then(
          (pong) => pong === 'PONG',
          () => false,
        ),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  async onModuleInit(): Promise<void> {
    const client = this.client;
    if (client === null || client.status === 'ready') return;
    let timer: NodeJS.Timeout | undefined;
    const ready = await Promise.race([
      new Promise<boolean>((resolve) => client.once('ready', () => resolve(true))),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), FIRST_CONNECT_MS);
      }),
    ]);
    clearTimeout(timer);
    if (!ready) {
      this.log.warn(
        `Redis did not answer within ${FIRST_CONNECT_MS} ms of boot; serving without it (fail-open) while it reconnects`,
      );
    }
  }

  onApplicationShutdown(): void {
    this.client?.disconnect();
  }
}

function connect(url: string, keyPrefix: string): Redis {
  // Loaded only when REDIS_URL is set: loading ioredis cost a boot without Redis about a tenth
  // of a second of CPU.
  const { Redis: Client } = createRequire(import.meta.url)('ioredis') as typeof IORedis;
  return new Client(url, {
    // Every key of this deployment (REDIS_KEY_PREFIX): deployments sharing a Redis never collide.
    keyPrefix,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(50 * attempt, MAX_RECONNECT_DELAY_MS),
    // Redis names the connection in CLIENT LIST, which helps an operator tell instances apart.
    connectionName: 'svc-sandbox-exchange',
  });
}
