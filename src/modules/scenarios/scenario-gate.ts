import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../common/errors/domain-error.js';
import { statusOf, type ErrorCode } from '../../common/errors/error-codes.js';
import { serviceUnavailable } from '../../common/errors/service-unavailable.js';
import type { Credential } from '../../common/http/request-context.js';
import { TIER_PER_MINUTE } from '../limits/limit-tables.js';
import { rateLimited } from '../limits/limits.service.js';
import { RealtimeHub } from '../realtime/realtime-hub.service.js';
import { SCENARIO_PATH } from './scenario-rules.js';
import type { FiredScenario, MatchFacts } from './scenarios.repository.js';
import { ScenariosService } from './scenarios.service.js';

const API_PREFIX = '/api/v1';

/**
 * The request pipeline's scenario step: after authentication, scopes, limits and the
 * Idempotency-Key check (a replay is answered before it and spends nothing), it finds the oldest
 * live scenario of the caller matching the request, spends one firing, marks the answer with
 * `Svc-Scenario` and applies the effect. Only paper-world requests are looked at: a live
 * credential's request never meets a scenario.
 */
@Injectable()
export class ScenarioGate implements OnModuleDestroy {
  /** Pending DELAYs, each woken (with a 503) when the service begins to stop. */
  private readonly delays = new Set<() => void>();
  private stopping = false;

  constructor(
    private readonly scenarios: ScenariosService,
    private readonly hub: RealtimeHub,
  ) {}

  /** Applies the scenario the request matches, if any: throws its refusal, or lets it run. */
  apply(
    req: FastifyRequest,
    reply: FastifyReply,
    /** The route's operation name, from its route plan (see {@link operationName}). */
    operation: string,
  ): Promise<void> | undefined {
    const credential = req.svc.credential;
    // The request's world: a world key's scenarios live in its world's file, shaping it only.
    const world = req.svc.world;
    if (world === 'live' || credential === null) return undefined;
    if (operation.includes(` ${SCENARIO_PATH}`)) return undefined;
    // The request's facts are read only for a user holding scenarios (almost no request).
    const fired = this.scenarios.take(world, credential.userId, operation, () => matchFacts(req));
    // None fired (almost every request): no promise, the pipeline goes on at once.
    if (fired === null) return undefined;
    reply.header('Svc-Scenario', fired.id);
    return this.shape(fired, credential);
  }

  /**
   * A shutdown began: pending DELAYs end at once with 503 and new ones are refused (called at the
   * start of closing, before the HTTP drain waits for the requests in flight, which they are).
   */
  stop(): void {
    this.stopping = true;
    for (const stop of [...this.delays]) stop();
  }

  onModuleDestroy(): void {
    this.stop();
  }

  private async shape({ id, effect }: FiredScenario, credential: Credential): Promise<void> {
    switch (effect.type) {
      case 'REJECT':
        throw rejection(id, effect.code as ErrorCode);
      case 'PARTIAL_FILL':
        credential.scenario = { id, fillLimit: effect.quantity };
        return;
      case 'DELAY':
        return this.delay(effect.ms);
      case 'RATE_LIMIT':
        throw rateLimited('key', TIER_PER_MINUTE[credential.tier], effect.retry_after_seconds, {
          tier: credential.tier,
          window_seconds: 60,
          scenario_id: id,
        });
      case 'UNAVAILABLE':
        throw serviceUnavailable(
          `The service is unavailable (sandbox scenario ${id}); retry after ${effect.retry_after_seconds} s`,
          effect.retry_after_seconds,
        );
      case 'DISCONNECT':
        if (credential.keyId !== null) {
          this.hub.restartKeySessions(credential.keyId, `sandbox scenario ${id}`);
        }
        return;
    }
  }

  /** Wall time, as the client waits it (not the service clock); cut short by a shutdown. */
  private delay(ms: number): Promise<void> {
    const stopped = () => serviceUnavailable('The service is shutting down; retry shortly');
    if (this.stopping) return Promise.reject(stopped());
    return new Promise<void>((resolve, reject) => {
      const stop = () => {
        clearTimeout(timer);
        this.delays.delete(stop);
        reject(stopped());
      };
      const timer = setTimeout(() => {
        this.delays.delete(stop);
        resolve();
      }, ms);
      this.delays.add(stop);
    });
  }
}

/** `POST /orders/{id}` for Fastify's `POST /api/v1/orders/:id` (HEAD is GET's operation). */
export function operationName(method: string, template: string): string {
  const path = template.startsWith(API_PREFIX) ? template.slice(API_PREFIX.length) : template;
  return `${method === 'HEAD' ? 'GET' : method} ${path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
}

/** The market(s) and client order id(s) a request is about: its body (each leg) and its path. */
function matchFacts(req: FastifyRequest): MatchFacts {
  const marketIds: string[] = [];
  const clientOrderIds: string[] = [];
  const take = (o: unknown) => {
    if (typeof o !== 'object' || o === null) return;
    const { market_id: market, client_order_id: clientOrderId } = o as Record<string, unknown>;
    if (typeof market === 'string') marketIds.push(market);
    if (typeof clientOrderId === 'string') clientOrderIds.push(clientOrderId);
  };
  const body = req.body as Record<string, unknown> | null | undefined;
  take(body);
  if (body !== null && typeof body === 'object' && Array.isArray(body.orders)) {
    for (const leg of body.orders) take(leg);
  }
  const params = (req.params ?? {}) as Record<string, unknown>;
  if (req.routeOptions.url?.includes('/markets/:id') === true && typeof params.id === 'string') {
    marketIds.push(params.id);
  }
  return { marketIds, clientOrderIds };
}

/** REJECT: the code's own status and the contract's error body, naming the scenario. */
function rejection(id: string, code: ErrorCode): DomainError {
  const status = statusOf(code);
  const message = `Answered ${code} by sandbox scenario ${id}`;
  const details: Record<string, unknown> =
    code === 'VALIDATION_FAILED'
      ? { fields: [{ field: 'body', message }], scenario_id: id }
      : { scenario_id: id };
  const headers: Record<string, string> =
    status === 429 || status === 503 ? { 'Retry-After': '1' } : {};
  return new DomainError(code, message, details, headers);
}
