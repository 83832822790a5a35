import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import type { RouteMeta } from '../../common/api/route-meta.js';
import { worldOfRequest } from '../worlds/world.decorator.js';

/**
 * Marks a provider class that keeps a world's state in this process's memory (the engines): a
 * route whose controller reaches one, through its constructor's dependencies at any depth, is
 * world-bound, and in cluster mode is served by the world's writer (forward.stage.ts).
 */
export const HOLDS_WORLD_STATE = Symbol.for('svc.holdsWorldState');

/**
 * Marks a controller whose routes answer for the instance they arrive at, whatever providers they
 * reach: the health probes. A load balancer asks each instance whether it lives and is ready; a
 * probe forwarded to a world's writer would answer for the writer, and fail on every other
 * instance whenever the writer cannot be reached (Redis away, a failover's gap).
 */
export const ANSWERS_FOR_ITS_INSTANCE = Symbol.for('svc.answersForItsInstance');

/** Where an @Endpoint sits: its controller class and handler (set by the decorator). */
export interface EndpointSite {
  controller: abstract new (...args: never[]) => unknown;
  method: string | symbol;
}

const SITES = new WeakMap<RouteMeta, EndpointSite>();

export function recordEndpointSite(meta: RouteMeta, site: EndpointSite): void {
  SITES.set(meta, site);
}

export function endpointSiteOf(meta: RouteMeta): EndpointSite | undefined {
  return SITES.get(meta);
}

const reaches = new Map<unknown, boolean>();

/** Whether the class, or a constructor dependency of it at any depth, holds world state. */
export function reachesWorldState(cls: unknown, path = new Set<unknown>()): boolean {
  if (typeof cls !== 'function') return false;
  const known = reaches.get(cls);
  if (known !== undefined) return known;
  if ((cls as unknown as Record<symbol, unknown>)[HOLDS_WORLD_STATE] === true) {
    reaches.set(cls, true);
    return true;
  }
  if (path.has(cls)) return false; // a cycle (forwardRef): decided where it started
  path.add(cls);
  const deps = (Reflect.getMetadata('design:paramtypes', cls) ?? []) as unknown[];
  const result = deps.some((d) => reachesWorldState(d, path));
  path.delete(cls);
  reaches.set(cls, result);
  return result;
}

export function answersForItsInstance(cls: unknown): boolean {
  return (cls as Record<symbol, unknown>)[ANSWERS_FOR_ITS_INSTANCE] === true;
}

/** Whether the handler takes the request's world (@World()). */
function takesWorld(site: EndpointSite): boolean {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, site.controller, site.method) ??
    {}) as Record<string, { factory?: unknown }>;
  return Object.values(args).some((a) => a.factory === worldOfRequest);
}

/**
 * A world-bound route reads or writes a world's engine or other world-local memory: its handler
 * takes @World(), or its controller reaches a provider marked HOLDS_WORLD_STATE. Routes without
 * an @Endpoint site (framework routes) are not.
 */
export function isWorldBound(meta: RouteMeta | undefined): boolean {
  if (meta === undefined) return false;
  const site = SITES.get(meta);
  if (site === undefined) return false;
  if (answersForItsInstance(site.controller)) return false;
  return takesWorld(site) || reachesWorldState(site.controller);
}
