import {
  Inject,
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
import { ClusterSignals } from '../redis/cluster-signals.js';
import { CancelOnDisconnectEntity } from './cancel-on-disconnect.entity.js';
import type { CodCounter } from './cod-counter.js';

/** The connection counter: this instance's (running alone) or every instance's (Redis). */
export const COD_COUNTER = Symbol('COD_COUNTER');

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
 *
 * Several instances on one Redis count a key's connections together (CodCounter): the key is
 * armed when the total reaches 0, by the one instance whose close (or sweep of a dead instance)
 * made it 0, which runs the cancel; the others learn it (cod.armed) for the status, and a
 * connection returning on any instance disarms it everywhere (cod.disarmed). The cancel checks the
 * total once more before it runs.
 */
@Injectable()
export class CancelOnDisconnectService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('CancelOnDisconnect');
  private readonly repo: Repository<CancelOnDisconnectEntity>;
  private readonly keys: Repository<ApiKeyEntity>;
  private readonly settings = new Map<string, CancelOnDisconnectEntity>();
  /** Keys this instance armed: it runs their cancel. */
  private readonly armed = new Map<string, number>();
  /** When (service ms) the grace of each key in `armed` started: its last connection closed. */
  private readonly armedSince = new Map<string, number>();
  /** Keys another instance armed, and when their orders go (for the status only). */
  private readonly armedElsewhere = new Map<string, number>();
  /** The world of each key that disconnected: a world key's orders are in its world's engine. */
  private readonly worldOf = new Map<string, WorldName>();
  /** Keys whose last cancel failed to commit: not retried before this real time (ms). */
  private readonly retryAt = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    @InjectDataSource(PLATFORM_DB) db: DataSource,
    private readonly clock: Clock,
    private readonly engines: EngineRegistry,
    @Inject(COD_COUNTER) private readonly counter: CodCounter,
    private readonly signals: ClusterSignals,
  ) {
    // Run by the world's writer: in cluster mode the socket may have closed on another instance.
    engines.defineCommand('cod.cancel', (world, a: { userId: string; keyId: string }) => {
      const r = this.engines.get(world).run((e) => e.cancelByTag(a.userId, a.keyId));
      return { cancelled: r.ok ? r.cancelled : 0 };
    });
    this.repo = db.getRepository(CancelOnDisconnectEntity);
    this.keys = db.getRepository(ApiKeyEntity);
    signals.on('cod.disarmed', ({ keyId }) => {
      this.armed.delete(keyId);
      this.armedSince.delete(keyId);
      this.armedElsewhere.delete(keyId);
      this.retryAt.delete(keyId);
    });
    signals.on('cod.armed', ({ keyId, at, by }) => {
      // Its own arm is in `armed` already; a connection here since then outweighs another's.
      if (by === signals.instanceId || this.counter.local(keyId) > 0) return;
      this.armedElsewhere.set(keyId, at);
    });
    signals.on('cod.settings', ({ keyId }) => void this.reload(keyId));
    counter.onOrphaned((keyId) => {
      if (this.counter.local(keyId) === 0) this.arm(keyId);
    });
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
    for (const s of rows) this.settings.set(s.keyId, s);
    // With other instances on one Redis, a key they hold connections for is not armed, and of
    // several instances starting together one arms it (CodCounter.claimAtBoot).
    const armable = rows.filter((s) => connectable.has(s.keyId));
    for (let i = 0; i < armable.length; i += 500) {
      const part = armable.slice(i, i + 500);
      const claims = await Promise.all(
        part.map((s) => this.counter.claimAtBoot(s.keyId, s.graceSeconds * 1000)),
      );
      part.forEach((s, j) => {
        if (claims[j]) this.arm(s.keyId, now);
      });
    }
    this.timer = setInterval(() => this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer !== null) clearInterval(this.timer);
  }

  /**
   * The instance is stopping and is about to close its connections: with other instances on one
   * Redis, one of them arms the keys those were the last connections of (CodCounter.halt), since
   * this one will not be there when their grace runs out.
   */
  shuttingDown(): void {
    void this.counter.halt();
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
    // One statement (INSERT ... ON CONFLICT): save()'s SELECT then INSERT let two enables of one
    // key at once both INSERT, and the second failed on the primary key (500 on PostgreSQL).
    await this.repo.upsert(row, ['keyId']);
    this.settings.set(keyId, row);
    // A grace change applies to an already armed key from now on (the row's enabled_at).
    this.rearm(keyId, row);
    this.signals.publish({ kind: 'cod.settings', keyId });
    return this.status(c);
  }

  async disable(c: Credential): Promise<CodStatus> {
    const keyId = this.keyOf(c);
    await this.repo.delete({ keyId });
    this.forgetSetting(keyId);
    this.signals.publish({ kind: 'cod.settings', keyId });
    return this.status(c);
  }

  /** `connections` counts every instance's (with Redis; this instance's while it is away). */
  async status(c: Credential): Promise<CodStatus> {
    const keyId = this.keyOf(c);
    const connections = await this.counter.total(keyId);
    const s = this.settings.get(keyId);
    const at = this.armed.get(keyId) ?? this.armedElsewhere.get(keyId);
    return {
      key_id: keyId,
      enabled: s !== undefined,
      grace_seconds: s?.graceSeconds ?? null,
      connections,
      cancels_at: at === undefined ? null : new Date(at).toISOString(),
    };
  }

  connected(c: Credential): void {
    const keyId = c.keyId;
    if (keyId === null) return;
    void this.counter.connected(keyId);
    this.signals.publish({ kind: 'cod.disarmed', keyId });
  }

  disconnected(c: Credential): void {
    const keyId = c.keyId;
    if (keyId === null) return;
    this.worldOf.set(keyId, c.world);
    void this.counter.disconnected(keyId).then(({ arm }) => {
      // A connection that came back here meanwhile keeps the key (the total is checked again
      // before the cancel, for one that came back elsewhere).
      if (arm && this.counter.local(keyId) === 0) this.arm(keyId);
    });
  }

  /** This instance runs the key's cancel after its grace; the others are told when it runs. */
  private arm(keyId: string, from = this.clock.now()): void {
    const s = this.settings.get(keyId);
    if (s === undefined) return;
    const at = from + s.graceSeconds * 1000;
    this.armed.set(keyId, at);
    this.armedSince.set(keyId, from);
    const world = this.worldOf.get(keyId) ?? s.environment;
    this.signals.publish({ kind: 'cod.armed', keyId, at, world, by: this.signals.instanceId });
  }

  /** Another instance (or this one) changed the key's setting: read it again. */
  private async reload(keyId: string): Promise<void> {
    try {
      const row = await this.repo.findOneBy({ keyId });
      if (row === null) {
        this.forgetSetting(keyId);
        return;
      }
      this.settings.set(keyId, row);
      this.rearm(keyId, row);
    } catch (err) {
      this.log.error(`reading the setting of ${keyId} failed: ${String(err)}`);
    }
  }

  /**
   * The deadline of a key this instance armed, under the setting `row`: the grace counts from
   * when the last connection closed, or from the setting's change (enabled_at) if that came
   * later. Read from the row, not from when the reload ran: the read finishing later (a loaded
   * database, the signal's trip through Redis) must not push the cancel back. A new deadline is
   * told to the other instances (their status).
   */
  private rearm(keyId: string, row: CancelOnDisconnectEntity): void {
    const since = this.armedSince.get(keyId);
    const before = this.armed.get(keyId);
    if (before === undefined || since === undefined) return;
    const changed = Date.parse(row.enabledAt);
    const at = Math.max(since, Number.isNaN(changed) ? since : changed) + row.graceSeconds * 1000;
    if (at === before) return;
    this.armed.set(keyId, at);
    const world = this.worldOf.get(keyId) ?? row.environment;
    this.signals.publish({ kind: 'cod.armed', keyId, at, world, by: this.signals.instanceId });
  }

  private forgetSetting(keyId: string): void {
    this.settings.delete(keyId);
    this.armed.delete(keyId);
    this.armedSince.delete(keyId);
    this.armedElsewhere.delete(keyId);
    this.retryAt.delete(keyId);
  }

  /** Cancels the open orders of every key whose grace ran out. */
  sweep(): void {
    const now = this.clock.now();
    for (const [keyId, at] of this.armedElsewhere) if (at <= now) this.armedElsewhere.delete(keyId);
    for (const [keyId, deadline] of this.armed) {
      if (deadline > now || (this.retryAt.get(keyId) ?? 0) > Date.now()) continue;
      this.armed.delete(keyId);
      this.retryAt.delete(keyId);
      void this.fire(keyId, deadline);
    }
  }

  /**
   * The cancel of a key whose grace ran out, unless a connection returned on another instance
   * since (its cod.disarmed may still be on its way: the total says).
   */
  private async fire(keyId: string, deadline: number): Promise<void> {
    if ((await this.counter.total(keyId)) > 0) return this.unarmed(keyId);
    const s = this.settings.get(keyId);
    if (s === undefined || this.armed.has(keyId)) return this.unarmed(keyId);
    try {
      const world = this.worldOf.get(keyId) ?? s.environment;
      const r = await this.engines.onWriter<{ cancelled: number }>(world, 'cod.cancel', {
        userId: s.userId,
        keyId,
      });
      this.worldOf.delete(keyId);
      this.unarmed(keyId);
      if (r.cancelled > 0)
        this.log.log(`key ${keyId}: cancelled ${r.cancelled} open orders on disconnect`);
    } catch (err) {
      // A deleted world's orders went with it: nothing left to cancel.
      if (err instanceof DomainError && err.code === 'NOT_FOUND') return;
      // Nothing was committed: keep the key armed and retry, rather than leave orders open.
      this.armed.set(keyId, deadline);
      this.retryAt.set(keyId, Date.now() + RETRY_MS);
      this.log.error(
        `cancel-on-disconnect for ${keyId} failed, retrying in ${RETRY_MS} ms: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  /** The key's grace is over (or a connection returned), unless it was armed again meanwhile. */
  private unarmed(keyId: string): void {
    if (!this.armed.has(keyId)) this.armedSince.delete(keyId);
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
