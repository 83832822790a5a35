import { randomBytes } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Clock } from '../../common/clock/clock.js';
import { SecretBox } from '../../common/crypto/secret-box.js';
import { environmentOf, isWorldId, type WorldName } from '../../common/environment.js';
import { IdGenerator } from '../../common/ids/id-generator.js';
import { ConfigService } from '../../config/config.service.js';
import { connectionOf, PLATFORM_DB } from '../../database/databases.js';
import { MailService } from '../mail/mail.service.js';
import { ClusterSignals } from '../redis/cluster-signals.js';
import { NotificationsService } from '../notifications/notifications.service.js';
import { UsersService } from '../users/users.service.js';
import { WorldClocks } from '../worlds/world-clocks.service.js';
import { truncatedUrl } from './url-safety.js';
import { WebhookAttemptsRepository } from './webhook-attempts.repository.js';
import { WebhooksRepository, type EndpointRow } from './webhooks.repository.js';

export const SCHEMA_VERSION = '2026-05-08';
export const SUSPEND_AFTER_DEAD_LETTERS = 20;
const DAY_MS = 86_400_000;

export interface Health {
  endpoint_id: string;
  status: EndpointRow['status'];
  succeeded_24h: number;
  dead_letter_24h: number;
  success_rate_24h: number | null;
  succeeded_7d: number;
  dead_letter_7d: number;
  success_rate_7d: number | null;
  consecutive_failures: number;
  dlq_count: number;
  last_success_at: string | null;
  last_failure_at: string | null;
  last_error: string | null;
  replays_24h: number;
  suspended_at: string | null;
  suspension_reason: string | null;
}

/**
 * What the webhook API, the outbox and the worker share: the repository, secrets, the cache of
 * deliverable endpoints, health figures, suspension and the owner's notices.
 */
@Injectable()
export class WebhooksCore {
  private readonly log = new Logger('Webhooks');
  readonly repo: WebhooksRepository;
  /** The workbench's attempt log and simulated failures. */
  readonly attempts: WebhookAttemptsRepository;
  readonly box: SecretBox;
  /**
   * Non-disabled endpoints by environment (the outbox reads this on every committed batch). Read
   * again after a change here or anywhere (the webhook-endpoint.changed signal), and with Redis
   * at least every CLUSTER_CACHE_TTL_MS (real time) in case a signal was missed.
   */
  private cache: Map<WorldName, EndpointRow[]> | null = null;
  /** When (real ms) the cache must be read again; Infinity when running alone. */
  private cacheUntil = Infinity;
  private readonly cacheTtlMs: number;
  private kick: (() => void) | null = null;

  constructor(
    @InjectDataSource(PLATFORM_DB) db: DataSource,
    config: ConfigService,
    readonly clock: Clock,
    readonly ids: IdGenerator,
    private readonly mail: MailService,
    private readonly users: UsersService,
    private readonly notifications: NotificationsService,
    private readonly clocks: WorldClocks,
    private readonly signals: ClusterSignals,
  ) {
    this.cacheTtlMs = signals.cacheTtlMs ?? Infinity;
    signals.on('webhook-endpoint.changed', () => this.invalidate());
    this.repo = new WebhooksRepository(connectionOf(db));
    this.attempts = new WebhookAttemptsRepository(connectionOf(db));
    this.box = new SecretBox(config.secrets.encryptionKey);
    this.firstDelayMs = config.values.webhookRetrySchedule[0] * 1000;
  }

  /** WEBHOOK_RETRY_SCHEDULE's first entry: the delay before an event's first attempt. */
  private readonly firstDelayMs: number;

  nowIso(): string {
    return this.clock.nowDate().toISOString();
  }

  /**
   * The time of a world (its clock's offset from WorldClocks, which does not load a world and
   * answers 0 for one already gone), so a world's deliveries are due, retried and dead-lettered
   * on the world's clock (POST /sandbox/clock with its key).
   */
  nowOf(world: WorldName): number {
    return this.clock.now() + this.clocks.offsetOrZero(world);
  }

  /** The worlds with at least one endpoint to deliver to: live, paper and ephemeral ones. */
  deliveringWorlds(): WorldName[] {
    this.endpointsFor('live');
    return [...(this.cache?.keys() ?? [])];
  }

  newSecret(): string {
    return `whsec_${randomBytes(24).toString('base64url')}`;
  }

  /** The secrets that sign now: the active one, then the retired one during its grace window. */
  signingSecrets(e: EndpointRow): string[] {
    const secrets = [this.box.open(e.secret_enc)];
    if (
      e.prev_secret_enc !== null &&
      e.prev_secret_until !== null &&
      e.prev_secret_until > this.nowIso()
    ) {
      secrets.push(this.box.open(e.prev_secret_enc));
    }
    return secrets;
  }

  /** The endpoints receiving a world's events (not disabled). */
  endpointsFor(world: WorldName): EndpointRow[] {
    if (this.cache !== null && this.cacheTtlMs !== Infinity && this.cacheUntil <= Date.now()) {
      this.cache = null;
    }
    if (this.cache === null) {
      this.cacheUntil = Date.now() + this.cacheTtlMs;
      this.cache = new Map<WorldName, EndpointRow[]>([
        ['live', []],
        ['test', []],
      ]);
      for (const e of this.repo.liveEndpoints()) {
        const w = endpointWorld(e);
        let list = this.cache.get(w);
        if (list === undefined) this.cache.set(w, (list = []));
        list.push(e);
      }
    }
    return this.cache.get(world) ?? [];
  }

  /**
   * Drops this instance's endpoint cache: for changes only this instance needs to see (delivery
   * outcomes recorded by its worker). What other instances must see goes through {@link changed}.
   */
  invalidate(): void {
    this.cache = null;
  }

  /**
   * An endpoint was created, changed, suspended, reactivated or disabled (null: several): every
   * instance, this one first, reads the endpoints again.
   */
  changed(endpointId: string | null): void {
    this.signals.publish({ kind: 'webhook-endpoint.changed', endpointId });
  }

  onWork(kick: () => void): void {
    this.kick = kick;
  }

  wake(): void {
    this.kick?.();
  }

  /**
   * Creates one event and a delivery per endpoint (HELD for a suspended endpoint), in one
   * transaction: a delivery is recorded before it is ever attempted.
   */
  enqueue(env: WorldName, type: string, data: unknown, endpoints: EndpointRow[]): string | null {
    if (endpoints.length === 0) return null;
    const id = this.ids.next('evt');
    const createdAt = this.nowIso();
    this.repo.transaction(() => this.record(env, { id, type, createdAt, data }, endpoints));
    this.wake();
    return id;
  }

  /**
   * Stores one event and a delivery per endpoint (HELD for a suspended endpoint), the first
   * attempt due after WEBHOOK_RETRY_SCHEDULE's first delay. Call inside a {@link WebhooksRepository.transaction}.
   */
  record(
    env: WorldName,
    e: { id: string; type: string; createdAt: string; data: unknown },
    endpoints: readonly EndpointRow[],
  ): void {
    const now = new Date(this.nowOf(env)).toISOString();
    const firstAttempt =
      this.firstDelayMs === 0 ? now : new Date(Date.parse(now) + this.firstDelayMs).toISOString();
    const payload = JSON.stringify({
      id: e.id,
      type: e.type,
      created_at: e.createdAt,
      schema_version: SCHEMA_VERSION,
      environment: environmentOf(env),
      // Only events of an ephemeral world name it: the paper and live envelopes are unchanged.
      ...(isWorldId(env) ? { world_id: env } : {}),
      data: e.data,
    });
    this.repo.insertEvent({
      id: e.id,
      environment: environmentOf(env),
      type: e.type,
      payload,
      created_at: e.createdAt,
    });
    for (const ep of endpoints) {
      this.repo.insertDelivery({
        id: this.ids.next('dlv'),
        endpointId: ep.id,
        eventId: e.id,
        eventType: e.type,
        status: ep.status === 'SUSPENDED' ? 'HELD' : 'PENDING',
        nextAttemptAt: firstAttempt,
        replayOf: null,
        createdAt: now,
      });
    }
  }

  health(e: EndpointRow): Health {
    const now = this.clock.now();
    const day = this.repo.windowCounts(e.id, new Date(now - DAY_MS).toISOString());
    const week = this.repo.windowCounts(e.id, new Date(now - 7 * DAY_MS).toISOString());
    return {
      endpoint_id: e.id,
      status: e.status,
      succeeded_24h: day.succeeded,
      dead_letter_24h: day.deadLettered,
      success_rate_24h: rate(day.succeeded, day.deadLettered),
      succeeded_7d: week.succeeded,
      dead_letter_7d: week.deadLettered,
      success_rate_7d: rate(week.succeeded, week.deadLettered),
      consecutive_failures: this.streak(e),
      dlq_count: this.repo.dlqCount(e.id),
      last_success_at: e.last_success_at,
      last_failure_at: e.last_failure_at,
      last_error: e.last_error,
      replays_24h: this.repo.replaysSince(e.id, new Date(now - DAY_MS).toISOString()),
      suspended_at: e.suspended_at,
      suspension_reason: e.suspension_reason,
    };
  }

  /** Dead-lettered originals newer than the latest success (replays included) and the baseline. */
  streak(e: EndpointRow): number {
    const after =
      [e.last_success_at, e.streak_baseline_at]
        .filter((x): x is string => x !== null)
        .sort()
        .pop() ?? '';
    return this.repo.streak(e.id, after);
  }

  /**
   * SPEC: 20 consecutive dead-lettered originals AND no successful delivery in 24 hours. Both
   * must hold, so a brief outage on a busy endpoint never suspends it.
   */
  maybeSuspend(e: EndpointRow): boolean {
    if (e.status !== 'ACTIVE') return false;
    const streak = this.streak(e);
    if (streak < SUSPEND_AFTER_DEAD_LETTERS) return false;
    const dayAgo = new Date(this.clock.now() - DAY_MS).toISOString();
    // Same boundary as the health windows (completed_at >= now - 24 h): such a success counts.
    if (e.last_success_at !== null && e.last_success_at >= dayAgo) return false;
    const now = this.nowIso();
    e.status = 'SUSPENDED';
    e.suspended_at = now;
    e.suspension_reason = `${streak} consecutive deliveries dead-lettered and no successful delivery in 24 hours`;
    e.updated_at = now;
    // The notification is written in the suspension's transaction (the same platform database)
    // and announced once it has committed.
    const notice = this.repo.transaction(() => {
      this.repo.saveEndpoint(e);
      this.repo.moveStatus(e.id, 'PENDING', 'HELD');
      return this.notifications.store({
        userId: e.user_id,
        environment: e.environment,
        type: 'WEBHOOK_SUSPENDED',
        title: 'Webhook endpoint suspended',
        body: `Deliveries to ${truncatedUrl(e.url)} are paused after ${streak} consecutive failures with no success in 24 hours. Fix the endpoint, then reactivate it.`,
        data: {
          endpoint_id: e.id,
          url: truncatedUrl(e.url),
          consecutive_failures: streak,
        },
      });
    });
    this.notifications.announce(notice);
    this.changed(e.id);
    // Fire and forget, but never an unhandled rejection (that would stop the process).
    this.notifyByMail(e, streak).catch((err: unknown) =>
      this.log.error(`suspension email for ${e.id} failed: ${String(err)}`),
    );
    this.log.warn(`endpoint ${e.id} suspended after ${streak} dead letters`);
    return true;
  }

  /** The suspension email: scheme, host and a truncated path only; never the URL or the secret. */
  private async notifyByMail(e: EndpointRow, streak: number): Promise<void> {
    const user = await this.users.byId(e.user_id);
    if (user === null) return;
    await this.mail.send({
      to: user.email,
      kind: 'WEBHOOK_SUSPENDED',
      subject: 'Your webhook endpoint was suspended',
      body: [
        `Deliveries to your ${e.environment} webhook endpoint ${truncatedUrl(e.url)} (${e.id}) are suspended:`,
        `${streak} consecutive deliveries were dead-lettered and none succeeded in 24 hours.`,
        'Queued deliveries are held, not dropped. Reactivate the endpoint (POST /api/v1/webhooks/{id}/reactivate) once it answers 2xx.',
      ].join('\n'),
    });
  }
}

function rate(succeeded: number, deadLettered: number): number | null {
  const total = succeeded + deadLettered;
  return total === 0 ? null : succeeded / total;
}

/** The world an endpoint receives events of: its ephemeral world, else its environment. */
export function endpointWorld(e: EndpointRow): WorldName {
  return (e.world_id as WorldName | null) ?? e.environment;
}
