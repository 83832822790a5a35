import type { FastifyRequest } from 'fastify';
import { DomainError } from '../../errors/domain-error.js';
import { methodNotAllowed, RouteRegistry, routerPath } from '../route-registry.js';

/**
 * Fastify would refuse a QUERY without Content-Type (RFC 10008) in its own words before the
 * not-found handler: no route takes QUERY, so it is answered as any method no route takes.
 */
export function refuseBareQuery(req: FastifyRequest, routes: RouteRegistry): void {
  if (req.method !== 'QUERY' || req.headers['content-type'] !== undefined) return;
  const path = routerPath(req.url.split('?')[0]);
  const allowed = routes.methodsFor(path);
  if (!allowed.includes('QUERY')) {
    throw allowed.length > 0
      ? methodNotAllowed(req.method, path, allowed)
      : new DomainError('NOT_FOUND', `No route ${req.method} ${path}`);
  }
}

/**
 * GET /orders/batch reached GET /orders/{id}: that path is POST /orders/batch's, so 405 (counted
 * against the per-IP ceiling as any unknown method on a known path is). Only a parametric route
 * can take another route's path.
 */
export function refuseShadowedPath(req: FastifyRequest, routes: RouteRegistry): void {
  const template = req.routeOptions?.url;
  if (template === undefined || !RouteRegistry.isParametric(template)) return;
  const path = routerPath(req.url.split('?')[0]);
  const owned = routes.shadowedMethods(template, path);
  if (owned !== null) throw methodNotAllowed(req.method, path, owned);
}
