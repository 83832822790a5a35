import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { In, type DataSource, type Repository } from 'typeorm';
import { Clock } from '../../common/clock/clock.js';
import { DomainError } from '../../common/errors/domain-error.js';
import type { Credential } from '../../common/http/request-context.js';
import type { WorldName } from '../../common/environment.js';
import { PLATFORM_DB } from '../../database/databases.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { ApiKeyEntity } from '../api-keys/entities/api-key.entity.js';
import { CancelOnDisconnectEntity } from './cancel-on-disconnect.entity.js';

/** How often armed keys are checked against the service clock. */
const SWEEP_MS = 100;
/** Real-time pause before retrying a cancel whose commit failed. */
const RETRY_MS = 1000;
export const COD_DEFAULT_GRACE_SECONDS = 5;
export const COD_MAX_GRACE_SECONDS = 300;

export interface CodStatus {
  key_id: string;
  enabled: boolean;
  grace_seconds: number | null;
  connections: number;
  /** When the key's open orders will be cancelled unless a connection returns; null if not armed. */
  cancels_at: string | null;
}

/**
 * Cancel-on-disconnect per API key: when the last realtime connection authenticated with the key
 * closes and none returns within the grace, every open order placed with that key is cancelled
 * (cancel_reason CANCEL_ON_DISCONNECT), persisted and published like any cancel. Deadlines follow
 * the service Clock. Across a restart it errs on the safe side: every enabled key that can hold a
 * realtime connection (websocket scope) is armed at boot, as if its connections had just closed,
 * so orders are cancelled unless the client reconnects.
 */
@Injectable()
export class CancelOnDisconnectService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('CancelOnDisconnect');
  private readonly repo: Repository<CancelOnDisconnectEntity>;
  private readonly keys: Repository<ApiKeyEntity>;
  private readonly settings = new Map<string, CancelOnDisconnectEntity>();
  private readonly live = new Map<string, number>();
  private readonly armed = new Map<string, number>();
  /** The world of each key that disconnected: a world key's orders are in its world's engine. */
  private readonly worldOf = new Map<string, WorldName>();
  /** Keys whose last cancel failed to commit: not retried before this real time (ms). */
  private readonly retryAt = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    @InjectDataSource(PLATFORM_DB) db: DataSource,
    private readonly clock: Clock,
    private readonly engines: EngineRegistry,
  ) {
    this.repo = db.getRepository(CancelOnDisconnectEntity);
    this.keys = db.getRepository(ApiKeyEntity);
  }

  async onApplicationBootstrap(): Promise<void> {
    const now = this.clock.now();
    const rows = await this.repo.find();
    // A key without the websocket scope never held a connection, so none closed with the
    // restart: arming it would cancel its orders at every start.
    const connectable = new Set<string>();
    for (let i = 0; i < rows.length; i += 500) {
      const keys = await this.keys.find({
        where: { id: In(rows.slice(i, i + 500).map((r) => r.keyId)) },
        select: { id: true, scopes: true },
      });
      for (const k of keys) if (k.scopes.split(',').includes('websocket')) connectable.add(k.id);
    }
    for (const s of rows) {
      this.settings.set(s.keyId, s);
      if (connectable.has(s.keyId)) this.armed.set(s.keyId, now + s.graceSeconds * 1000);
    }
    this.timer = setInterval(() => this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer !== null) clearInterval(this.timer);
  }

  async enable(c: Credential, graceSeconds: number): Promise<CodStatus> {
    const keyId = this.keyOf(c);
    const row: CancelOnDisconnectEntity = {
      keyId,
      userId: c.userId,
      environment: c.environment,
      graceSeconds,
      enabledAt: this.clock.nowDate().toISOString(),
    };
    await this.repo.save(row);
    this.settings.set(keyId, row);
    // A grace change applies to an already armed key from now on.
    if (this.armed.has(keyId)) this.armed.set(keyId, this.clock.now() + graceSeconds * 1000);
    return this.status(c);
  }

  async disable(c: Credential): Promise<CodStatus> {
    const keyId = this.keyOf(c);
    await this.repo.delete({ keyId });
    this.settings.delete(keyId);
    this.armed.delete(keyId);
    this.retryAt.delete(keyId);
    return this.status(c);
  }

  status(c: Credential): CodStatus {
    const keyId = this.keyOf(c);
    const s = this.settings.get(keyId);
    const at = this.armed.get(keyId);
    return {
      key_id: keyId,
      enabled: s !== undefined,
      grace_seconds: s?.graceSeconds ?? null,
      connections: this.live.get(keyId) ?? 0,
      cancels_at: at === undefined ? null : new Date(at).toISOString(),
    };
  }

  connected(c: Credential): void {
    if (c.keyId === null) return;
    this.live.set(c.keyId, (this.live.get(c.keyId) ?? 0) + 1);
    this.armed.delete(c.keyId);
    this.retryAt.delete(c.keyId);
  }

  disconnected(c: Credential): void {
    if (c.keyId === null) return;
    const n = (this.live.get(c.keyId) ?? 1) - 1;
    if (n > 0) {
      this.live.set(c.keyId, n);
      return;
    }
    this.live.delete(c.keyId);
    const s = this.settings.get(c.keyId);
    this.worldOf.set(c.keyId, c.world);
    if (s !== undefined) this.armed.set(c.keyId, this.clock.now() + s.graceSeconds * 1000);
  }

  /** Cancels the open orders of every key whose grace ran out. */
  sweep(): void {
    const now = this.clock.now();
    for (const [keyId, deadline] of this.armed) {
      if (deadline > now || (this.retryAt.get(keyId) ?? 0) > Date.now()) continue;
      this.armed.delete(keyId);
      this.retryAt.delete(keyId);
      const s = this.settings.get(keyId);
      if (s === undefined) continue;
      try {
        const world = this.worldOf.get(keyId) ?? s.environment;
        const r = this.engines.get(world).run((e) => e.cancelByTag(s.userId, keyId));
        this.worldOf.delete(keyId);
        if (r.ok && r.cancelled > 0)
          this.log.log(`key ${keyId}: cancelled ${r.cancelled} open orders on disconnect`);
      } catch (err) {
        // A deleted world's orders went with it: nothing left to cancel.
        if (err instanceof DomainError && err.code === 'NOT_FOUND') continue;
        // Nothing was committed: keep the key armed and retry, rather than leave orders open.
        this.armed.set(keyId, deadline);
        this.retryAt.set(keyId, Date.now() + RETRY_MS);
        this.log.error(
          `cancel-on-disconnect for ${keyId} failed, retrying in ${RETRY_MS} ms: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
  }

  private keyOf(c: Credential): string {
    if (c.keyId === null) {
      throw new DomainError(
        'API_KEY_REQUIRED',
        'Cancel-on-disconnect belongs to an API key; call it with X-API-Key',
      );
    }
    return c.keyId;
  }
}
