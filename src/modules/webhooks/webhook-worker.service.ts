import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { ConfigService } from '../../config/config.service.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import type { AttemptRow } from './webhook-attempts.repository.js';
import { sendWebhook, simulatedResult, type SendResult } from './webhook-sender.js';
import { signatureHeader } from './webhook-signer.js';
import { endpointWorld, SUSPEND_AFTER_DEAD_LETTERS, WebhooksCore } from './webhooks.core.js';
import { CUT_SHORT_LAST, type DeliveryRow, type EndpointRow } from './webhooks.repository.js';

/** At most this many attempts in flight per endpoint, so a slow endpoint only slows itself. */
export const PER_ENDPOINT_CONCURRENCY = 4;
const USER_AGENT = 'svc-webhooks/1 (+https://sandbox.staging.svc.example/api/v1/openapi.json)';

/**
 * The delivery worker: at-least-once over the SQLite queue. Due deliveries (the service Clock
 * decides) are attempted per endpoint with a small concurrency cap; 2xx within the timeout
 * succeeds, anything else (3xx included: redirects are never followed) is retried on the
 * schedule with jitter, honouring Retry-After on 429/503, and dead-lettered after the last
 * attempt. A crash loses nothing: a delivery is stored before it is attempted and stays PENDING
 * until an outcome is recorded. An attempt a crash or shutdown cuts short counts (the receiver
 * may have got it): the delivery is sent again after the restart, unless that was its last
 * attempt, in which case it is dead-lettered (replayable like any dead letter).
 */
@Injectable()
export class WebhookWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('WebhookWorker');
  private readonly inFlight = new Map<string, number>();
  private readonly attempting = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private scheduled = false;
  private stopped = false;
  private draining: Promise<void> | null = null;
  private readonly pending = new Set<Promise<void>>();
  /** Where the next pass starts in the endpoint list (round robin). */
  private rotation = 0;
  /** Cluster mode: this instance held the lease at its last pass. */
  private delivering = false;
  /** Cluster mode, not the holder: when the lease was last tried (wall ms). */
  private triedAt = 0;

  constructor(
    private readonly core: WebhooksCore,
    private readonly config: ConfigService,
    private readonly engines: EngineRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.engines.clustered) this.countCutShort();
    this.timer = setInterval(() => this.poll(), this.config.values.webhookPollMs);
    this.timer.unref();
    this.core.onWork(() => this.soon());
    this.soon();
  }

  /**
   * Starts nothing more, and gives the deliveries in flight SHUTDOWN_DRAIN_MS to finish (a slow
   * receiver must not hold a stopping service for WEBHOOK_TIMEOUT_MS). Those still in flight then
   * stay marked as attempting: after the restart the attempt counts and they are delivered again,
   * unless it was their last attempt (then they are dead-lettered).
   */
  onModuleDestroy(): Promise<void> {
    return this.drain();
  }

  /**
   * The wait above, once: the graceful shutdown runs it first (app.factory.ts, while new requests
   * are answered 503 and before the HTTP server stops accepting), onModuleDestroy finds it done.
   */
  drain(): Promise<void> {
    this.draining ??= this.stopAndWait();
    return this.draining;
  }

  private async stopAndWait(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    if (this.pending.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.config.values.shutdownDrainMs);
    });
    const outcome = await Promise.race([Promise.allSettled([...this.pending]), deadline]);
    clearTimeout(timer);
    if (outcome === 'late') {
      this.log.warn(
        `${this.pending.size} webhook deliveries still in flight after SHUTDOWN_DRAIN_MS; the attempts count, and those with attempts left are delivered again after the restart`,
      );
    }
  }

  private soon(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.poll();
    });
  }

  /** Counts the attempts a stop cut short (their outcome never recorded): none is in flight here. */
  private countCutShort(): void {
    const counted = this.core.repo.countCutShortAttempts(
      this.config.values.webhookRetrySchedule.length,
      this.core.nowIso(),
    );
    if (counted > 0) {
      this.log.log(`${counted} webhook attempts cut short by the last stop were counted`);
    }
  }

  poll(): void {
    if (this.stopped) return;
    if (!this.engines.clustered) {
      // A timer's pass: a database that went away (PostgreSQL restarting) must not end the
      // process; the next pass tries again.
      try {
        this.pass();
      } catch (err) {
        this.log.error(`webhook pass: ${err instanceof Error ? err.stack : String(err)}`);
      }
      return;
    }
    // Not the holder: try for the lease once per poll interval, not on every wake-up.
    const now = Date.now();
    if (!this.delivering && now - this.triedAt < this.config.values.webhookPollMs) return;
    this.triedAt = now;
    void this.engines
      .once('webhook-worker', () => {
        if (this.stopped) return;
        // Taken now: what the previous holder left marked was cut short. With attempts of its own
        // still in flight (the lease lost and taken back), their marks are counted when retried.
        if (!this.delivering && this.attempting.size === 0) this.countCutShort();
        this.delivering = true;
        this.pass();
      })
      .then(
        (ran) => (this.delivering = ran),
        (err: unknown) => {
          this.delivering = false;
          this.log.error(`webhook pass: ${err instanceof Error ? err.stack : String(err)}`);
        },
      );
  }

  /**
   * One pass: start every due delivery the per-endpoint and global caps allow. Below
   * WEBHOOK_MAX_IN_FLIGHT an endpoint starts at most what the cap has left. Slow endpoints must
   * not hold up the others: once the cap is reached, an endpoint with none in flight may still
   * start one (so the overshoot is at most one per endpoint), and each pass starts at the next
   * endpoint, so no endpoint is always served first.
   */
  private pass(): void {
    const maxInFlight = this.config.values.webhookMaxInFlight;
    // Ephemeral worlds' endpoints too, each on its world's clock.
    for (const env of this.core.deliveringWorlds()) {
      const now = new Date(this.core.nowOf(env)).toISOString();
      const endpoints = this.core.endpointsFor(env);
      const n = endpoints.length;
      const first = n === 0 ? 0 : this.rotation++ % n;
      for (let k = 0; k < n; k++) {
        const e = endpoints[(first + k) % n];
        if (e.status === 'ACTIVE') this.core.maybeSuspend(e);
        if (e.status !== 'ACTIVE') continue;
        const busy = this.inFlight.get(e.id) ?? 0;
        const free = PER_ENDPOINT_CONCURRENCY - busy;
        if (free <= 0) continue;
        // Within the cap, as many as it leaves (the endpoint's own cap permitting); past it, one
        // for an endpoint with none in flight.
        const room = maxInFlight - this.attempting.size;
        const allowed = room > 0 ? Math.min(free, room) : busy === 0 ? 1 : 0;
        if (allowed === 0) continue;
        let started = 0;
        for (const d of this.core.repo.due(e.id, now, allowed + this.attemptingOf(e.id))) {
          if (this.attempting.has(d.id)) continue;
          if (started >= allowed) break;
          this.start(e, d);
          started++;
        }
      }
    }
  }

  private attemptingOf(endpointId: string): number {
    return this.inFlight.get(endpointId) ?? 0;
  }

  private start(e: EndpointRow, d: DeliveryRow): void {
    this.attempting.add(d.id);
    this.inFlight.set(e.id, (this.inFlight.get(e.id) ?? 0) + 1);
    const p = this.deliver(e, d)
      .catch((err: unknown) =>
        this.log.error(`delivery ${d.id}: ${err instanceof Error ? err.stack : String(err)}`),
      )
      .finally(() => {
        this.attempting.delete(d.id);
        const n = (this.inFlight.get(e.id) ?? 1) - 1;
        if (n <= 0) this.inFlight.delete(e.id);
        else this.inFlight.set(e.id, n);
        this.pending.delete(p);
        this.soon();
      });
    this.pending.add(p);
  }

  private async deliver(endpoint: EndpointRow, d: DeliveryRow): Promise<void> {
    const event = this.core.repo.event(d.event_id);
    if (event === undefined) return;
    const t = this.core.clock.nowSeconds();
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'svc-webhook-signature': signatureHeader(
        event.payload,
        t,
        this.core.signingSecrets(endpoint),
      ),
      'svc-webhook-secret-version': String(endpoint.secret_version),
      'svc-webhook-id': d.id,
      'svc-webhook-event': event.type,
    };
    // An attempt whose outcome was never recorded (its mark still set) counts: the receiver may
    // have got it. A delivery whose attempts used up its schedule is not sent again (a cut-short
    // last attempt, or one that ran while its endpoint was suspended and is now reactivated).
    const prior = d.attempts + (d.attempt_started_at !== null ? 1 : 0);
    const world = endpointWorld(endpoint);
    if (prior >= this.config.values.webhookRetrySchedule.length) {
      const at = new Date(this.core.nowOf(world)).toISOString();
      if (this.core.repo.exhaust(d.id, at, CUT_SHORT_LAST)) this.core.invalidate();
      return;
    }
    // Marked before it is sent, so that an attempt a crash or shutdown cuts short is counted at
    // the next boot: `attempts` is every POST the receiver may have seen.
    const startedAt = new Date(this.core.nowOf(world)).toISOString();
    if (!this.core.repo.startAttempt(d.id, startedAt)) return;
    const began = performance.now();
    // A simulated failure (the workbench) stands in for the receiver: nothing is sent.
    const simulated = this.core.attempts.takeSimulated(endpoint.id);
    const result =
      simulated !== null
        ? simulatedResult(simulated, endpoint.url, this.config.values.webhookTimeoutMs)
        : await sendWebhook(endpoint.url, event.payload, headers, this.sendOptions());
    this.record(endpoint.id, { ...d, attempts: prior }, result, {
      delivery_id: d.id,
      number: prior + 1,
      started_at: startedAt,
      duration_ms: Math.round(performance.now() - began),
      outcome: result.outcome,
      simulated: simulated !== null ? 1 : 0,
      url: endpoint.url,
      request_headers: JSON.stringify({
        ...headers,
        'content-length': String(Buffer.byteLength(event.payload)),
      }),
      response_status: result.status,
      response_body: result.responseBody,
      response_body_truncated: result.responseTruncated ? 1 : 0,
      error: result.error,
    });
  }

  private sendOptions(): { timeoutMs: number; allowPrivate: boolean } {
    return {
      timeoutMs: this.config.values.webhookTimeoutMs,
      allowPrivate:
        this.config.values.webhookAllowPrivateTargets && this.config.values.appEnv !== 'production',
    };
  }

  /** Records the outcome, schedules the retry or dead-letters, then updates health and suspension. */
  private record(endpointId: string, d: DeliveryRow, r: SendResult, log: AttemptRow): void {
    const schedule = this.config.values.webhookRetrySchedule;
    const endpoint = this.core.repo.endpoint(endpointId);
    if (endpoint === undefined) return;
    const now = this.core.nowOf(endpointWorld(endpoint));
    const at = new Date(now).toISOString();
    const attempts = d.attempts + 1;
    let status: DeliveryRow['status'] = 'PENDING';
    let next: string | null = null;
    let completed: string | null = null;
    if (r.ok) {
      status = 'SUCCEEDED';
      completed = at;
    } else if (attempts >= schedule.length) {
      status = 'DEAD_LETTERED';
      completed = at;
    } else {
      const base = schedule[attempts] * 1000;
      const jitter = Math.floor(Math.random() * Math.min(base * 0.1, 30_000));
      const honoured = r.retryAfterSeconds === null ? 0 : r.retryAfterSeconds * 1000;
      next = new Date(now + Math.max(base + jitter, honoured)).toISOString();
    }
    // The outcome and the endpoint's health fields in one transaction: a crash between them
    // must not leave a success that the failure streak does not see (or the reverse).
    const recorded = this.core.repo.transaction(() => {
      this.core.attempts.insert(log);
      const changed = this.core.repo.attempted(d.id, {
        status,
        attempts,
        nextAttemptAt: next,
        at,
        completedAt: completed,
        responseStatus: r.status,
        error: r.error,
      });
      if (!changed) {
        // Held or cancelled meanwhile: no outcome to record, but the POST was made.
        this.core.repo.countAttempt(d.id, at);
        return false;
      }
      if (r.ok) endpoint.last_success_at = at;
      else {
        endpoint.last_failure_at = at;
        endpoint.last_error = r.error;
      }
      endpoint.updated_at = at;
      this.core.repo.saveEndpoint(endpoint);
      return true;
    });
    if (!recorded) return;
    this.core.invalidate();
    if (
      status === 'DEAD_LETTERED' &&
      d.is_replay === 0 &&
      this.core.streak(endpoint) >= SUSPEND_AFTER_DEAD_LETTERS
    ) {
      this.core.maybeSuspend(endpoint);
    }
  }
}
