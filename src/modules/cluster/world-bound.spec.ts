import { describe, expect, it } from '@jest/globals';
import 'reflect-metadata';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FastifyRequest, RouteOptions } from 'fastify';
import { PATH_METADATA, METHOD_METADATA } from '@nestjs/common/constants.js';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { ROUTE_META_KEY, type RouteMeta } from '../../common/api/route-meta.js';
import { planOf, planRoute } from '../../common/http/pipeline/route-plan.js';
import { EngineRegistry } from '../trading/engine-registry.js';
import { worldOfRequest } from '../worlds/world.decorator.js';
import { answersForItsInstance, endpointSiteOf, reachesWorldState } from './world-bound.js';

const FASTIFY_ROUTE_CONFIG = '__fastify_route_config__';
const MODULES = fileURLToPath(new URL('..', import.meta.url));

interface Route {
  name: string;
  meta: RouteMeta;
  controller: abstract new (...args: never[]) => unknown;
  method: string;
}

/** Every @Endpoint of every controller in src/modules, with its RouteMeta. */
async function allRoutes(): Promise<Route[]> {
  const routes: Route[] = [];
  for (const dir of readdirSync(MODULES, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const file of readdirSync(join(MODULES, dir.name))) {
      if (!file.endsWith('.controller.ts')) continue;
      const mod = (await import(pathToFileURL(join(MODULES, dir.name, file)).href)) as Record<
        string,
        unknown
      >;
      for (const exported of Object.values(mod)) {
        if (typeof exported !== 'function') continue;
        const cls = exported as Route['controller'];
        const base = String(Reflect.getMetadata(PATH_METADATA, cls) ?? '');
        for (const method of Object.getOwnPropertyNames(cls.prototype)) {
          const handler = (cls.prototype as Record<string, unknown>)[method];
          if (typeof handler !== 'function') continue;
          const config = Reflect.getMetadata(FASTIFY_ROUTE_CONFIG, handler) as
            Record<string, RouteMeta> | undefined;
          const meta = config?.[ROUTE_META_KEY];
          if (meta === undefined) continue;
          const verb = Number(Reflect.getMetadata(METHOD_METADATA, handler));
          routes.push({
            name: `${cls.name}.${method} (${verb} ${base})`,
            meta,
            controller: cls,
            method,
          });
        }
      }
    }
  }
  return routes;
}

/** Whether a request on the route goes to the forwarding stage (its plan, as the pipeline reads it). */
function forwarded(meta: RouteMeta): boolean {
  const route = {
    method: 'POST',
    url: '/x',
    handler: () => undefined,
    config: { [ROUTE_META_KEY]: meta },
  } as unknown as RouteOptions;
  planRoute(route);
  const req = { svcPlan: null, routeOptions: { config: route.config } };
  return planOf(req as unknown as FastifyRequest).worldBound;
}

function takesWorld(r: Route): boolean {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, r.controller, r.method) ?? {}) as Record<
    string,
    { factory?: unknown }
  >;
  return Object.values(args).some((a) => a.factory === worldOfRequest);
}

describe('world-bound routes (cluster mode forwards them to the world writer)', () => {
  it('every route reaching the engines or taking @World() is forwarded; the rest are served where they arrive', async () => {
    const routes = await allRoutes();
    expect(routes.length).toBeGreaterThan(100);
    const local: string[] = [];
    for (const r of routes) {
      expect(endpointSiteOf(r.meta)).toEqual({ controller: r.controller, method: r.method });
      const bound =
        !answersForItsInstance(r.controller) && (takesWorld(r) || reachesWorldState(r.controller));
      expect([r.name, forwarded(r.meta)]).toEqual([r.name, bound]);
      if (!bound) local.push(r.name);
    }
    // The engine routes are among the forwarded ones, platform-only ones are not.
    const byName = (prefix: string) => routes.filter((r) => r.name.startsWith(prefix));
    for (const r of [...byName('OrdersController.'), ...byName('MarketsController.')]) {
      expect([r.name, forwarded(r.meta)]).toEqual([r.name, true]);
    }
    // The health probes reach the engines (readiness reports them) but answer for their instance.
    expect(byName('HealthController.')).toHaveLength(2);
    for (const r of [...byName('ApiKeysController.'), ...byName('HealthController.')]) {
      expect([r.name, forwarded(r.meta)]).toEqual([r.name, false]);
    }
    expect(local.length).toBeGreaterThan(0);
  });

  it('reachability follows constructor dependencies at any depth', () => {
    class Leaf {}
    Reflect.defineMetadata('design:paramtypes', [], Leaf);
    class Service {}
    Reflect.defineMetadata('design:paramtypes', [Leaf, EngineRegistry], Service);
    class Controller {}
    Reflect.defineMetadata('design:paramtypes', [Service], Controller);
    class Platform {}
    Reflect.defineMetadata('design:paramtypes', [Leaf], Platform);
    expect(reachesWorldState(Controller)).toBe(true);
    expect(reachesWorldState(Platform)).toBe(false);
  });
});
