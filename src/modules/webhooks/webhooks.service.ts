import { Injectable } from '@nestjs/common';
import { isWorldId } from '../../common/environment.js';
import { DomainError } from '../../common/errors/domain-error.js';
import type { Credential, Tier } from '../../common/http/request-context.js';
import { paginate, type Page } from '../../common/pagination/paginate.js';
import { ConfigService } from '../../config/config.service.js';
import { ApiKeyRepository, highestActiveTier } from '../api-keys/api-key.repository.js';
import { assertSafeWebhookUrl } from './url-safety.js';
import type { WebhookEventType } from './webhook-event-schemas.js';
import { WEBHOOK_SAMPLES } from './webhook-samples.js';
import { endpointWorld, WebhooksCore, type Health } from './webhooks.core.js';
import type { DeliveryRow, EndpointRow } from './webhooks.repository.js';

/** SPEC.md webhook limits: endpoints per user by the highest tier among the user's active keys. */
export const ENDPOINT_CAPS: Record<Tier, number> = { FREE: 3, PRO: 10, ENTERPRISE: 25 };
const ENDPOINT_ID = /^whe_[a-z0-9]{1,40}$/;
const HOUR_MS = 3_600_000;

export interface EndpointView {
  id: string;
  url: string;
  description: string;
  events: string[];
  environment: 'live' | 'test';
  status: EndpointRow['status'];
  secret_version: number;
  previous_secret_expires_at: string | null;
  success_rate_24h: number | null;
  consecutive_failures: number;
  dlq_count: number;
  replays_24h: number;
  created_at: string;
  updated_at: string;
}

export interface DeliveryView {
  id: string;
  event_id: string;
  event_type: string;
  status: DeliveryRow['status'];
  attempts: number;
  is_replay: boolean;
  replay_of: string | null;
  created_at: string;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  response_status: number | null;
  last_error: string | null;
}

@Injectable()
export class WebhooksService {
  constructor(
    private readonly core: WebhooksCore,
    private readonly keys: ApiKeyRepository,
    private readonly config: ConfigService,
  ) {}

  async create(
    c: Credential,
    body: { url: string; events: string[]; description?: string },
  ): Promise<EndpointView & { secret: string }> {
    await assertSafeWebhookUrl(body.url, this.policy());
    const now = this.core.nowIso();
    const tier = await highestActiveTier(this.keys.repo, c.userId, now);
    const cap = ENDPOINT_CAPS[tier];
    const count = this.core.repo.countCapped(c.userId);
    if (count >= cap) {
      throw new DomainError(
        'WEBHOOK_ENDPOINT_CAP_REACHED',
        `The ${tier} tier allows ${cap} webhook endpoints (active and suspended); you have ${count}`,
        { cap, current_count: count, tier },
      );
    }
    const secret = this.core.newSecret();
    const row: EndpointRow = {
      id: this.core.ids.next('whe'),
      user_id: c.userId,
      environment: c.environment,
      world_id: isWorldId(c.world) ? c.world : null,
      url: body.url,
      description: body.description ?? '',
      events: body.events.join(','),
      status: 'ACTIVE',
      secret_enc: this.core.box.seal(secret),
      secret_version: 1,
      prev_secret_enc: null,
      prev_secret_until: null,
      streak_baseline_at: null,
      last_success_at: null,
      last_failure_at: null,
      last_error: null,
      suspended_at: null,
      suspension_reason: null,
      created_at: now,
      updated_at: now,
    };
    this.core.repo.insertEndpoint(row);
    this.core.changed(row.id);
    return { ...this.view(row), secret };
  }

  list(c: Credential, q: { limit?: number; cursor?: string }): Page<EndpointView> {
    return paginate({
      list: `webhooks:${c.world}`,
      keys: ['id'],
      query: q,
      // '' sorts before every id: the first page.
      fetch: (after, take) =>
        this.core.repo.endpointsOfUser(
          c.userId,
          c.environment,
          isWorldId(c.world) ? c.world : null,
          after?.[0] ?? '',
          take,
        ),
      keyOf: (r) => [r.id],
      map: (r) => this.view(r),
    });
  }

  get(c: Credential, id: string): EndpointView {
    return this.view(this.owned(c, id));
  }

  async update(
    c: Credential,
    id: string,
    body: { url?: string; events?: string[]; description?: string },
  ): Promise<EndpointView> {
    if (this.owned(c, id).status === 'DISABLED') throw disabled(id);
    if (body.url !== undefined) await assertSafeWebhookUrl(body.url, this.policy());
    // Re-read after the (asynchronous) URL check and write in the same synchronous step, so a
    // DELETE, a suspension or a delivery outcome recorded meanwhile is never overwritten.
    const e = this.owned(c, id);
    if (e.status === 'DISABLED') throw disabled(id);
    if (body.url !== undefined) e.url = body.url;
    if (body.events !== undefined) e.events = body.events.join(',');
    if (body.description !== undefined) e.description = body.description;
    e.updated_at = this.core.nowIso();
    this.core.repo.saveEndpoint(e);
    this.core.changed(e.id);
    return this.view(e);
  }

  /** DISABLED is terminal: queued deliveries are cancelled and never restored. */
  disable(c: Credential, id: string): EndpointView {
    const e = this.owned(c, id);
    if (e.status !== 'DISABLED') {
      e.status = 'DISABLED';
      e.updated_at = this.core.nowIso();
      this.core.repo.transaction(() => {
        this.core.repo.saveEndpoint(e);
        this.core.repo.moveStatus(e.id, 'PENDING', 'CANCELLED');
        this.core.repo.moveStatus(e.id, 'HELD', 'CANCELLED');
      });
      this.core.changed(e.id);
    }
    return this.view(e);
  }

  /**
   * A new secret, returned once; the retired one co-signs for the grace window
   * (WEBHOOK_SECRET_GRACE_HOURS, at most 72; a request may ask for less).
   */
  rotate(
    c: Credential,
    id: string,
    graceHours: number | undefined,
  ): EndpointView & { secret: string; previous_secret_valid_until: string | null } {
    const e = this.owned(c, id);
    if (e.status === 'DISABLED') throw disabled(id);
    const max = this.config.values.webhookSecretGraceHours;
    const hours = Math.min(graceHours ?? max, max);
    const secret = this.core.newSecret();
    const now = this.core.clock.now();
    e.prev_secret_enc = hours > 0 ? e.secret_enc : null;
    e.prev_secret_until = hours > 0 ? new Date(now + hours * HOUR_MS).toISOString() : null;
    e.secret_enc = this.core.box.seal(secret);
    e.secret_version += 1;
    e.updated_at = new Date(now).toISOString();
    this.core.repo.saveEndpoint(e);
    this.core.changed(e.id);
    return { ...this.view(e), secret, previous_secret_valid_until: e.prev_secret_until };
  }

  reactivate(c: Credential, id: string): EndpointView {
    const e = this.owned(c, id);
    if (e.status !== 'SUSPENDED') {
      throw new DomainError(
        'WEBHOOK_NOT_SUSPENDED',
        `Endpoint ${id} is ${e.status}; only SUSPENDED endpoints can be reactivated`,
        {
          status: e.status,
        },
      );
    }
    const now = this.core.nowIso();
    e.status = 'ACTIVE';
    e.suspended_at = null;
    e.suspension_reason = null;
    // The old backlog must not re-suspend at once: the streak counts from here.
    e.streak_baseline_at = now;
    e.updated_at = now;
    this.core.repo.transaction(() => {
      this.core.repo.saveEndpoint(e);
      this.core.repo.moveStatus(e.id, 'HELD', 'PENDING', now);
    });
    this.core.changed(e.id);
    this.core.wake();
    return this.view(e);
  }

  health(c: Credential, id: string): Health {
    return this.core.health(this.owned(c, id));
  }

  deliveries(
    c: Credential,
    id: string,
    q: { limit?: number; cursor?: string; status?: string },
  ): Page<DeliveryView> {
    const e = this.owned(c, id);
    return paginate({
      list: `deliveries:${e.id}`,
      keys: ['id'],
      query: q,
      // '\uffff' sorts after every id: the first page of this newest-first list.
      fetch: (after, take) =>
        this.core.repo.deliveriesOf(e.id, q.status, after?.[0] ?? '\uffff', take),
      keyOf: (r) => [r.id],
      map: deliveryView,
    });
  }

  /** A new delivery of the same event, marked as a replay (counted in replays_24h only). */
  replay(c: Credential, id: string, deliveryId: string): DeliveryView {
    const e = this.owned(c, id);
    if (e.status === 'DISABLED') throw disabled(id);
    const d = this.core.repo.delivery(deliveryId);
    if (d === undefined || d.endpoint_id !== e.id)
      throw new DomainError('NOT_FOUND', `No delivery ${deliveryId}`, {
        endpoint_id: id,
        delivery_id: deliveryId,
      });
    if (d.status !== 'DEAD_LETTERED') {
      throw new DomainError(
        'DELIVERY_NOT_DEAD_LETTERED',
        `Only dead-lettered deliveries can be replayed; this one is ${d.status}`,
        {
          status: d.status,
        },
      );
    }
    const now = this.core.nowIso();
    const newId = this.core.ids.next('dlv');
    this.core.repo.insertDelivery({
      id: newId,
      endpointId: e.id,
      eventId: d.event_id,
      eventType: d.event_type,
      status: e.status === 'SUSPENDED' ? 'HELD' : 'PENDING',
      nextAttemptAt: now,
      replayOf: d.id,
      createdAt: now,
    });
    this.core.wake();
    return deliveryView(this.core.repo.delivery(newId)!);
  }

  /**
   * Sends a sample event of `type` (webhook.test by default) to this endpoint as an ordinary
   * delivery, whether or not the endpoint subscribes to that type. Samples of business events go
   * to test endpoints only: a live integration must never receive an order that does not exist.
   */
  test(c: Credential, id: string, type: WebhookEventType = 'webhook.test'): DeliveryView {
    const e = this.owned(c, id);
    if (type !== 'webhook.test' && e.environment !== 'test') {
      throw new DomainError(
        'LIVE_KEY_SANDBOX_ENDPOINT',
        `Sample ${type} events are sent to test endpoints only; a live endpoint takes webhook.test`,
        { type },
      );
    }
    if (e.status === 'DISABLED') throw disabled(id);
    const data = WEBHOOK_SAMPLES[type]({
      id: (prefix) => this.core.ids.next(prefix),
      endpointId: e.id,
      now: this.core.clock.now(),
    });
    const eventId = this.core.enqueue(endpointWorld(e), type, data, [e]);
    // By its event, not by recency: delivery ids follow the clock, which may have stepped back.
    return deliveryView(this.core.repo.deliveryOfEvent(e.id, eventId!)!);
  }

  /**
   * The caller's endpoint in the caller's environment: an endpoint belongs to the environment of
   * the key that created it, so a test key never sees or controls a live endpoint (nor the
   * reverse). Sessions work on the live environment.
   */
  owned(c: Credential, id: string): EndpointRow {
    const e = ENDPOINT_ID.test(id) ? this.core.repo.endpoint(id) : undefined;
    // A world key's endpoints are its world's; the paper world's are not a world's (nor the reverse).
    if (e === undefined || e.user_id !== c.userId || endpointWorld(e) !== c.world)
      throw new DomainError('NOT_FOUND', `No webhook endpoint ${id}`, { endpoint_id: id });
    return e;
  }

  private policy(): { httpsOnly: boolean; allowPrivate: boolean } {
    const production = this.config.values.appEnv === 'production';
    return {
      httpsOnly: production,
      allowPrivate: !production && this.config.values.webhookAllowPrivateTargets,
    };
  }

  /** When the retired secret stops co-signing; null when no grace window is running. */
  private graceEnd(e: EndpointRow): string | null {
    return e.prev_secret_enc !== null &&
      e.prev_secret_until !== null &&
      e.prev_secret_until > this.core.nowIso()
      ? e.prev_secret_until
      : null;
  }

  private view(e: EndpointRow): EndpointView {
    const h = this.core.health(e);
    return {
      id: e.id,
      url: e.url,
      description: e.description,
      events: e.events.split(','),
      environment: e.environment,
      status: e.status,
      secret_version: e.secret_version,
      previous_secret_expires_at: this.graceEnd(e),
      success_rate_24h: h.success_rate_24h,
      consecutive_failures: h.consecutive_failures,
      dlq_count: h.dlq_count,
      replays_24h: h.replays_24h,
      created_at: e.created_at,
      updated_at: e.updated_at,
    };
  }
}

function disabled(id: string): DomainError {
  return new DomainError('WEBHOOK_DISABLED', `Endpoint ${id} is DISABLED, which is final`);
}

export function deliveryView(d: DeliveryRow): DeliveryView {
  return {
    id: d.id,
    event_id: d.event_id,
    event_type: d.event_type,
    status: d.status,
    attempts: d.attempts,
    is_replay: d.is_replay === 1,
    replay_of: d.replay_of,
    created_at: d.created_at,
    last_attempt_at: d.last_attempt_at,
    next_attempt_at: d.status === 'PENDING' ? d.next_attempt_at : null,
    response_status: d.response_status,
    last_error: d.last_error,
  };
}
