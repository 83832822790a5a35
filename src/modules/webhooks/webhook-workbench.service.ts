import { Injectable } from '@nestjs/common';
import { DomainError } from '../../common/errors/domain-error.js';
import type { Credential } from '../../common/http/request-context.js';
import type {
  AttemptOutcome,
  AttemptRow,
  SimulatedFailureMode,
} from './webhook-attempts.repository.js';
import { WebhooksCore } from './webhooks.core.js';
import { deliveryView, WebhooksService, type DeliveryView } from './webhooks.service.js';

/** More than any schedule allows (WEBHOOK_RETRY_SCHEDULE has at most 20 entries). */
const MAX_LOGGED_ATTEMPTS = 50;

export interface SimulatedFailuresView {
  endpoint_id: string;
  pending: number;
  mode: SimulatedFailureMode | null;
}

export interface AttemptView {
  number: number;
  started_at: string;
  duration_ms: number;
  outcome: AttemptOutcome;
  simulated: boolean;
  request: { method: 'POST'; url: string; headers: Record<string, string>; body: string };
  response: { status: number; body: string; body_truncated: boolean } | null;
  error: string | null;
}

/**
 * The webhook workbench (test endpoints): simulated receiver failures and the per-attempt log.
 * Endpoint ownership is the webhooks service's rule (a key sees its own environment's endpoints).
 */
@Injectable()
export class WebhookWorkbenchService {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly core: WebhooksCore,
  ) {}

  /**
   * The endpoint's next `count` attempts fail as `mode` says, without a request. A second call
   * replaces what is pending (count and mode); it does not add to it.
   */
  simulateFailures(
    c: Credential,
    id: string,
    body: { count: number; mode: SimulatedFailureMode },
  ): SimulatedFailuresView {
    const e = this.webhooks.owned(c, id);
    if (e.status === 'DISABLED') {
      throw new DomainError('WEBHOOK_DISABLED', `Endpoint ${id} is DISABLED, which is final`);
    }
    this.core.attempts.setSimulated(e.id, body.count, body.mode);
    return this.simulated(e.id);
  }

  simulatedFailures(c: Credential, id: string): SimulatedFailuresView {
    return this.simulated(this.webhooks.owned(c, id).id);
  }

  /** Drops the simulated failures still pending; the next attempt reaches the receiver. */
  clearSimulatedFailures(c: Credential, id: string): SimulatedFailuresView {
    const e = this.webhooks.owned(c, id);
    this.core.attempts.setSimulated(e.id, 0, null);
    return this.simulated(e.id);
  }

  /** One delivery with each attempt: what was sent, what came back, how long it took. */
  delivery(
    c: Credential,
    id: string,
    deliveryId: string,
  ): DeliveryView & { attempt_log: AttemptView[] } {
    const e = this.webhooks.owned(c, id);
    const d = this.core.repo.delivery(deliveryId);
    if (d === undefined || d.endpoint_id !== e.id) {
      throw new DomainError('NOT_FOUND', `No delivery ${deliveryId}`, {
        endpoint_id: id,
        delivery_id: deliveryId,
      });
    }
    const body = this.core.repo.event(d.event_id)?.payload ?? '';
    const log = this.core.attempts.ofDelivery(d.id, MAX_LOGGED_ATTEMPTS);
    return { ...deliveryView(d), attempt_log: log.map((a) => attemptView(a, body)) };
  }

  private simulated(endpointId: string): SimulatedFailuresView {
    return { endpoint_id: endpointId, ...this.core.attempts.simulated(endpointId) };
  }
}

function attemptView(a: AttemptRow, body: string): AttemptView {
  return {
    number: a.number,
    started_at: a.started_at,
    duration_ms: a.duration_ms,
    outcome: a.outcome,
    simulated: a.simulated === 1,
    request: {
      method: 'POST',
      url: a.url,
      headers: JSON.parse(a.request_headers) as Record<string, string>,
      body,
    },
    response:
      a.response_status === null
        ? null
        : {
            status: a.response_status,
            body: a.response_body ?? '',
            body_truncated: a.response_body_truncated === 1,
          },
    error: a.error,
  };
}
