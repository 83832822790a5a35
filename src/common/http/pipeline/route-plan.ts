import type { FastifyRequest, RouteOptions } from 'fastify';
import type { Lifecycle } from '../../api/lifecycle.js';
import { routeMetaOf, type RouteMeta } from '../../api/route-meta.js';
import { RouteRegistry } from '../route-registry.js';
import { operationName } from '../../../modules/scenarios/scenario-gate.js';
import { isWorldBound } from '../../../modules/cluster/world-bound.js';
import { deprecatedLifecycle } from './deprecation.stage.js';
import { checksInputs } from './operation-inputs.stage.js';

/**
 * Which stages a route runs and what they need of it, decided once when the route is registered
 * (from its RouteMeta), so a request runs only the stages that apply to its route and none of
 * them re-derives the route's facts: GET /health runs no credential, limit, idempotency or
 * scenario work; POST /orders no deprecation, path-shadow or batch-leg checks.
 */
export interface RoutePlan {
  meta: RouteMeta | undefined;
  /** The route's lifecycle while it is deprecated: its headers, then 410 after the sunset. */
  deprecated: Lifecycle | null;
  /** A parametric template can take a fixed path another route owns (the 405 check). */
  parametric: boolean;
  /** `METHOD /route/:param` (HEAD as GET): the route-limit bucket and the OpenAPI entry's key. */
  operation: string | null;
  /** Its query names and body are checked against its OpenAPI entry (null: per request). */
  checksInputs: boolean | null;
  /** It may run under an Idempotency-Key: the mutations (POST, PUT, PATCH, DELETE). */
  idempotent: boolean;
  /**
   * It reads or writes a world's engine or world-local memory (world-bound.ts): in cluster mode
   * a request of it is served by its world's writer (forward.stage.ts).
   */
  worldBound: boolean;
  /** Its sandbox-scenario name (`POST /orders`) when a credential's scenarios can shape it. */
  scenarioOperation: string | null;
}

const PLAN_KEY = 'svcPlan';
const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function planFor(meta: RouteMeta | undefined, method: string | string[], url: string): RoutePlan {
  const methods = Array.isArray(method) ? method : [method];
  const single = methods.length === 1 ? methods[0] : null;
  return {
    meta,
    deprecated: deprecatedLifecycle(meta),
    parametric: RouteRegistry.isParametric(url),
    operation: single === null ? null : `${single === 'HEAD' ? 'GET' : single} ${url}`,
    // A route of several methods decides per request (see checksInputs).
    checksInputs: single === null ? null : checksInputs(meta, single),
    idempotent: meta !== undefined && methods.some((m) => MUTATIONS.has(m)),
    worldBound: isWorldBound(meta),
    scenarioOperation:
      meta !== undefined && meta.auth !== 'public' && single !== null
        ? operationName(single, url)
        : null,
  };
}

/** onRoute: the route's plan goes into its config (a copy: a config may be shared). */
export function planRoute(route: RouteOptions): void {
  const url = route.url ?? '';
  route.config = {
    ...(route.config ?? {}),
    [PLAN_KEY]: planFor(routeMetaOf(route.config), route.method, url),
  };
}

/** What a request no route took (the not-found handler) runs. */
const UNROUTED: RoutePlan = planFor(undefined, 'GET', '');

declare module 'fastify' {
  interface FastifyRequest {
    /** The plan of the route this request reached, read once as it arrives. */
    svcPlan: RoutePlan | null;
  }
}

/** The plan of the route the request reached (read from the route's config once per request). */
export function planOf(req: FastifyRequest): RoutePlan {
  if (req.svcPlan !== null && req.svcPlan !== undefined) return req.svcPlan;
  const config = req.routeOptions?.config as unknown as Record<string, RoutePlan | undefined>;
  const plan = config?.[PLAN_KEY] ?? UNROUTED;
  req.svcPlan = plan;
  return plan;
}
