/**
 * The one request pipeline, assembled in order from its stages (one file each, beside this one)
 * as Fastify hooks around the thin controllers:
 * onRequest: connection order, request context and headers, closing and malformed HTTP, empty
 * body type, deprecation headers, CORS, per-IP ceiling, method checks, 410 after sunset;
 * preValidation (body parsed, not validated): batch legs against the per-IP ceiling, credential
 * (key state, signature, environment, scope), per-key/per-route limits and quotas, the body
 * parser's findings, the operation's query names and body;
 * preHandler (body validated): idempotency, then sandbox scenarios;
 * onSend: Connection: close while stopping, the idempotent response stored;
 * onResponse: a batch's uncharged legs, one structured log line.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { routeMetaOf } from '../../api/route-meta.js';
import type { Clock } from '../../clock/clock.js';
import type { AppConfig } from '../../../config/app-config.js';
import { applyCors } from '../../../modules/access/cors.js';
import type { RouteRegistry } from '../route-registry.js';
import {
  arrive,
  closeAfterLastAnswer,
  noteClosingError,
  refuseClosingOrMalformed,
  skipBehindClose,
} from './connection.stage.js';
import { credential } from './credential.stage.js';
import { deprecatedLifecycle, markDeprecated, refuseAfterSunset } from './deprecation.stage.js';
import { beginIdempotent, finishIdempotent } from './idempotency.stage.js';
import { gateBatchLegs, ipLimit, settleBatchLegs } from './ip-limit.stage.js';
import { dropTypeOfEmptyBody, raiseBodyIssue } from './json-body.stage.js';
import { refuseBareQuery, refuseShadowedPath } from './method-match.stage.js';
import { checksInputs, operationInputs } from './operation-inputs.stage.js';
import type { PipelineServices } from './pipeline-state.js';
import { logRequest } from './request-log.stage.js';
import { startRequest } from './request-context.stage.js';
import { routeLimits } from './route-limits.stage.js';
import { scenario } from './scenario.stage.js';

export interface PipelineDeps {
  routes: RouteRegistry;
  clock: Clock;
  log: Logger;
  config: AppConfig;
  services: PipelineServices;
}

export function installPipeline(fastify: FastifyInstance, deps: PipelineDeps): void {
  const { routes, clock, log, config, services } = deps;
  const firstParty = new Set(config.firstPartyOrigins);
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url ?? route.path));

  fastify.addHook('onError', async (req: FastifyRequest, reply: FastifyReply) => {
    noteClosingError(req, reply);
  });

  fastify.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    if (arrive(req, reply)) return;
    startRequest(req, reply);
    refuseClosingOrMalformed(req, reply, services);
    dropTypeOfEmptyBody(req);
    const meta = routeMetaOf(req.routeOptions?.config);
    const deprecated = deprecatedLifecycle(meta);
    if (deprecated !== null) markDeprecated(req, reply, deprecated);
    // CORS next: a preflight is answered without charging the per-IP ceiling, and a first-party
    // origin's refusals (410, 429) carry its allow and expose headers, so the browser can read them.
    if (applyCors(req, reply, firstParty)) return reply;
    await ipLimit(req, meta, services.limits);
    refuseBareQuery(req, routes);
    refuseShadowedPath(req, routes);
    if (deprecated !== null) refuseAfterSunset(req, deprecated, clock);
  });

  // The body is parsed, not yet validated: the credential and its limits come before any
  // validation, so an anonymous or over-limit caller learns that (401, 403, 429) rather than what
  // is wrong with its body, and costs no validation work.
  fastify.addHook('preValidation', async (req: FastifyRequest, reply: FastifyReply) => {
    if (skipBehindClose(req, reply)) return;
    const meta = routeMetaOf(req.routeOptions?.config);
    if (meta !== undefined) {
      const legs = meta.ipCharge === 'legs' ? await gateBatchLegs(req, services.limits) : null;
      if (services.access !== null) {
        await credential(req, meta, services.access);
        await routeLimits(req, reply, meta, services.limits, legs);
      }
    }
    raiseBodyIssue(req);
    if (checksInputs(meta, req.method)) operationInputs(req, services.operations);
  });

  fastify.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    if (skipBehindClose(req, reply)) return;
    const meta = routeMetaOf(req.routeOptions?.config);
    if (meta === undefined || services.idempotency === null) return;
    if (await beginIdempotent(req, reply, services.idempotency)) return reply;
    await scenario(req, reply, services.scenarios);
  });

  fastify.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    closeAfterLastAnswer(req, reply, services);
    await finishIdempotent(req, reply, payload, services.idempotency);
    return payload;
  });

  fastify.addHook('onResponse', async (req: FastifyRequest, reply: FastifyReply) => {
    await settleBatchLegs(req, routeMetaOf(req.routeOptions?.config), services.limits);
    logRequest(log, req, reply);
  });
}
