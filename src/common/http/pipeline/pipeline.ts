/**
 * The one request pipeline, assembled in order from its stages (one file each, beside this one)
 * as Fastify hooks around the thin controllers. Each route's plan (route-plan.ts, decided when
 * the route is registered) says which stages apply to it; the others are not run.
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
import type { Clock } from '../../clock/clock.js';
import type { AppConfig } from '../../../config/app-config.js';
import { applyCors } from '../../../modules/access/cors.js';
import { operationKey } from '../operation-inputs.js';
import type { RouteRegistry } from '../route-registry.js';
import {
  arrive,
  closeAfterLastAnswer,
  noteClosingError,
  refuseClosingOrMalformed,
  skipBehindClose,
} from './connection.stage.js';
import { credential } from './credential.stage.js';
import { forwardToWriter, trustForwarded } from './forward.stage.js';
import { markDeprecated, refuseAfterSunset } from './deprecation.stage.js';
import { beginIdempotent, finishIdempotent } from './idempotency.stage.js';
import { gateBatchLegs, ipLimit, settleBatchLegs } from './ip-limit.stage.js';
import { dropTypeOfEmptyBody, raiseBodyIssue } from './json-body.stage.js';
import { refuseBareQuery, refuseShadowedPath } from './method-match.stage.js';
import { checksInputs, operationInputs } from './operation-inputs.stage.js';
import type { PipelineServices } from './pipeline-state.js';
import { logRequest } from './request-log.stage.js';
import { startRequest } from './request-context.stage.js';
import { planOf, planRoute } from './route-plan.js';
import { routeLimits } from './route-limits.stage.js';
import { scenario } from './scenario.stage.js';

export interface PipelineDeps {
  routes: RouteRegistry;
  clock: Clock;
  log: Logger;
  config: AppConfig;
  services: PipelineServices;
}

/**
 * Runs the rest of a callback-style hook after a stage that waited: a throw fails the request
 * (what Fastify does with a throw in the hook itself), else the hook is done.
 */
function continueWith(rest: () => void, done: (err?: Error) => void): void {
  try {
    rest();
  } catch (err) {
    done(err as Error);
    return;
  }
  done();
}

export function installPipeline(fastify: FastifyInstance, deps: PipelineDeps): void {
  const { routes, clock, log, config, services } = deps;
  const firstParty = new Set(config.firstPartyOrigins);
  // Set on every request as it arrives: declared here so every request has the same shape.
  fastify.decorateRequest('svcPlan', null);
  fastify.decorateRequest('svcForwarded', false);
  fastify.addHook('onRoute', (route) => {
    routes.add(route.method, route.url ?? route.path);
    planRoute(route);
  });

  fastify.addHook('onError', async (req: FastifyRequest, reply: FastifyReply) => {
    noteClosingError(req, reply);
  });

  // Callback-style hooks where a stage can finish at once: no promise and no microtask hop per
  // request on the hot routes; a stage that waits (the per-IP ceiling, an Idempotency-Key, a
  // scenario) continues the hook when it settles. A stage that throws fails the request as before.
  fastify.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done) => {
    if (arrive(req, reply)) return done();
    const plan = planOf(req);
    startRequest(req, reply);
    refuseClosingOrMalformed(req, reply, services);
    dropTypeOfEmptyBody(req);
    // Cluster mode: a request this writer replays for another instance was checked there.
    if (services.cluster !== null && trustForwarded(req, services.cluster)) return done();
    if (plan.deprecated !== null) markDeprecated(req, reply, plan.deprecated);
    // CORS next: a preflight is answered without charging the per-IP ceiling, and a first-party
    // origin's refusals (410, 429) carry its allow and expose headers, so the browser can read them.
    if (applyCors(req, reply, firstParty)) return done();
    const rest = (): void => {
      refuseBareQuery(req, routes);
      if (plan.parametric) refuseShadowedPath(req, routes);
      if (plan.deprecated !== null) refuseAfterSunset(req, plan.deprecated, clock);
    };
    if (services.limits?.enabled !== true) {
      rest();
      return done();
    }
    ipLimit(req, plan.meta, services.limits).then(() => continueWith(rest, done), done);
  });

  // The body is parsed, not yet validated: the credential and its limits come before any
  // validation, so an anonymous or over-limit caller learns that (401, 403, 429) rather than what
  // is wrong with its body, and costs no validation work.
  fastify.addHook('preValidation', (req: FastifyRequest, reply: FastifyReply, done) => {
    if (skipBehindClose(req, reply)) return done();
    const plan = planOf(req);
    const meta = plan.meta;
    const rest = (): void => {
      raiseBodyIssue(req);
      if (plan.checksInputs ?? checksInputs(meta, req.method)) {
        operationInputs(req, plan.operation ?? operationKey(req), services.operations);
      }
    };
    if (meta === undefined || req.svcForwarded) return continueWith(rest, done);
    if (meta.ipCharge !== 'legs' && services.access !== null && services.limits?.enabled !== true) {
      // No limit to charge: the credential alone, with no promise unless it waits (a key read,
      // a signature's replay check); a cached key that needs no signature continues at once.
      let found: Promise<void> | void;
      try {
        found = credential(req, meta, services.access);
      } catch (err) {
        return done(err as Error);
      }
      if (found === undefined) return continueWith(rest, done);
      found.then(() => continueWith(rest, done), done);
      return;
    }
    const charged = async (): Promise<void> => {
      const legs = meta.ipCharge === 'legs' ? await gateBatchLegs(req, services.limits) : null;
      if (services.access !== null) {
        const found = credential(req, meta, services.access);
        if (found !== undefined) await found;
        if (services.limits?.enabled === true) {
          const operation = plan.operation ?? operationKey(req);
          await routeLimits(req, reply, meta, operation, services.limits, legs);
        }
      }
    };
    charged().then(() => continueWith(rest, done), done);
  });

  fastify.addHook('preHandler', (req: FastifyRequest, reply: FastifyReply, done) => {
    if (skipBehindClose(req, reply)) return done();
    const plan = planOf(req);
    if (plan.meta === undefined || services.idempotency === null || req.svcForwarded) return done();
    // Cluster mode: the last stage sends a world-bound request to its world's writer.
    const last = (): void => {
      const sent =
        plan.worldBound && services.cluster !== null
          ? forwardToWriter(req, reply, services.cluster)
          : undefined;
      // Answered by the writer: the request goes no further here (Fastify: no done() then).
      if (sent === undefined) done();
      else sent.then((answered) => answered || done(), done);
    };
    const shape = (): void => {
      let shaping: Promise<void> | undefined;
      try {
        shaping =
          plan.scenarioOperation === null
            ? undefined
            : scenario(req, reply, services.scenarios, plan.scenarioOperation);
      } catch (err) {
        return done(err as Error);
      }
      if (shaping === undefined) last();
      else shaping.then(last, done);
    };
    const begun = plan.idempotent ? beginIdempotent(req, reply, services.idempotency) : false;
    if (begun === false) return shape();
    if (begun === true) return done(); // answered here (a replay)
    begun.then((answered) => (answered ? done() : shape()), done);
  });

  fastify.addHook('onSend', (req: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
    closeAfterLastAnswer(req, reply, services);
    if (req.idempotency === undefined) {
      done(null, payload);
      return;
    }
    finishIdempotent(req, reply, payload, services.idempotency).then(
      () => done(null, payload),
      (err: Error) => done(err),
    );
  });

  // Built only when it is written: at LOG_LEVEL warn and above the request line costs nothing.
  const logsRequests = log.isLevelEnabled('info');
  fastify.addHook('onResponse', (req: FastifyRequest, reply: FastifyReply, done) => {
    const plan = planOf(req);
    if (plan.meta?.ipCharge !== 'legs' || req.svcForwarded) {
      if (logsRequests) logRequest(log, req, reply);
      done();
      return;
    }
    settleBatchLegs(req, plan.meta, services.limits).then(
      () => {
        if (logsRequests) logRequest(log, req, reply);
        done();
      },
      (err: Error) => done(err),
    );
  });
}
