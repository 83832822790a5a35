import { describe, expect, it } from '@jest/globals';
import type { FastifyRequest, RouteOptions } from 'fastify';
import { ROUTE_META_KEY, type RouteMeta } from '../../api/route-meta.js';
import { planOf, planRoute, type RoutePlan } from './route-plan.js';

const KEY_ROUTE: RouteMeta = {
  auth: 'key',
  scopes: ['orders:write'],
  lifecycle: { state: 'STABLE' },
  environment: 'any',
};

/** The plan a route gets when Fastify registers it, as a request on it reads it. */
function planned(method: string, url: string, meta?: RouteMeta): RoutePlan {
  const route = {
    method,
    url,
    handler: () => undefined,
    config: meta === undefined ? undefined : { [ROUTE_META_KEY]: meta },
  } as unknown as RouteOptions;
  planRoute(route);
  const req = { svcPlan: null, routeOptions: { config: route.config } };
  return planOf(req as unknown as FastifyRequest);
}

describe('route plans: which stages a route runs', () => {
  it('POST /orders: credential and inputs, idempotency and its scenario name; no deprecation or shadow check', () => {
    const plan = planned('POST', '/api/v1/orders', KEY_ROUTE);
    expect(plan).toMatchObject({
      deprecated: null,
      parametric: false,
      operation: 'POST /api/v1/orders',
      checksInputs: true,
      idempotent: true,
      scenarioOperation: 'POST /orders',
    });
  });

  it('a public read (GET /health) runs no idempotency, scenario or input checks', () => {
    const plan = planned('GET', '/api/v1/health', { ...KEY_ROUTE, auth: 'public', scopes: [] });
    expect(plan).toMatchObject({ checksInputs: false, idempotent: false, scenarioOperation: null });
  });

  it('a public write (register) still has its inputs checked', () => {
    const plan = planned('POST', '/api/v1/auth/register', { ...KEY_ROUTE, auth: 'public' });
    expect(plan.checksInputs).toBe(true);
    expect(plan.scenarioOperation).toBeNull();
  });

  it('a parametric route is checked for paths other routes own; HEAD is the GET operation', () => {
    const plan = planned('HEAD', '/api/v1/orders/:id', KEY_ROUTE);
    expect(plan).toMatchObject({
      parametric: true,
      operation: 'GET /api/v1/orders/:id',
      idempotent: false,
      scenarioOperation: 'GET /orders/{id}',
    });
  });

  it('a deprecated route carries its lifecycle (headers, then 410 after the sunset)', () => {
    const lifecycle = { state: 'DEPRECATED' as const, deprecatedOn: '2026-01-01' };
    expect(planned('GET', '/api/v1/positions', { ...KEY_ROUTE, lifecycle }).deprecated).toBe(
      lifecycle,
    );
  });

  it('a route without @Endpoint (static files) and the not-found handler run only the universal stages', () => {
    const plan = planned('GET', '/app/*');
    expect(plan).toMatchObject({ meta: undefined, checksInputs: false, idempotent: false });
    const unrouted = planOf({ svcPlan: null, routeOptions: { config: {} } } as never);
    expect(unrouted).toMatchObject({ meta: undefined, parametric: false, idempotent: false });
  });

  it('a plan goes into a copy of the route config: a config shared by two routes is not changed', () => {
    const shared = { [ROUTE_META_KEY]: KEY_ROUTE };
    const route = { method: 'POST', url: '/api/v1/x', handler: () => undefined, config: shared };
    planRoute(route as unknown as RouteOptions);
    expect(Object.keys(shared)).toEqual([ROUTE_META_KEY]);
  });
});
