import type { Lifecycle } from './lifecycle.js';
import type { Scope } from './scopes.js';

/**
 * Who may call an operation:
 * - public: no credential; one is ignored.
 * - optional: no credential needed; a key, when sent, selects the engine (live or paper).
 * - key: an API key or a session token.
 * - session: a first-party session token only (key management, MFA).
 */
export type AuthMode = 'public' | 'optional' | 'key' | 'session';

/** Which engine an operation may reach. */
export type EnvironmentRule = 'any' | 'real-money' | 'sandbox-only';

/** Everything the request pipeline and the OpenAPI document need to know about a route. */
export interface RouteMeta {
  auth: AuthMode;
  scopes: Scope[];
  lifecycle: Lifecycle;
  environment: EnvironmentRule;
  /** Per-route limit, requests per minute per credential (SPEC.md Limits). */
  routeLimitPerMinute?: number;
  /**
   * Routes that share one per-route bucket name it here (SPEC.md: "POST and DELETE
   * /orders/cancel-on-disconnect | 60" is one limit for both); default: the route's own bucket.
   */
  routeLimitGroup?: string;
  /**
   * Whom the per-route limit counts: the credential (default: the key, or the user for a
   * session), or the user behind it, so all of one user's keys and sessions of one world share
   * one bucket (SPEC: "10 comments a minute per user"); the paper and live worlds count apart.
   */
  routeLimitPer?: 'credential' | 'user';
  /**
   * How the request counts against its per-IP ceiling: once (default), or once per leg of the
   * body's `orders` array, charged atomically before any leg runs (POST /orders/batch).
   */
  ipCharge?: 'request' | 'legs';
  /**
   * The operation belongs to an API key (cancel-on-disconnect): a session is refused with
   * 403 API_KEY_REQUIRED right after authentication, before environment and scope checks.
   */
  apiKeyOnly?: boolean;
}

/** Key under which RouteMeta sits in Fastify's route config. */
export const ROUTE_META_KEY = 'svc';

export function routeMetaOf(config: unknown): RouteMeta | undefined {
  if (config === null || typeof config !== 'object') return undefined;
  return (config as Record<string, RouteMeta | undefined>)[ROUTE_META_KEY];
}
