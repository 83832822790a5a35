import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  LogController,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import proxyaddr from '@fastify/proxy-addr';
import pino, { type DestinationStream, type Logger } from 'pino';
import { AppModule } from './app.module.js';
import { AccessPipeline } from './modules/access/access.pipeline.js';
import { applyCors } from './modules/access/cors.js';
import { registerExplorer } from './modules/explorer/explorer.static.js';
import { IdempotencyService } from './modules/access/idempotency.service.js';
import type { LimitStore } from './modules/limits/limit-store.js';
import { LimitsService } from './modules/limits/limits.service.js';
import { PeerTolerantWsAdapter } from './modules/realtime/ws-adapter.js';
import { ScenarioGate } from './modules/scenarios/scenario-gate.js';
import { deprecationHeaders, isSunset, successorPath } from './common/api/lifecycle.js';
import { routeMetaOf, ROUTE_META_KEY } from './common/api/route-meta.js';
import { AdjustableClock, type Clock } from './common/clock/clock.js';
import { DomainError } from './common/errors/domain-error.js';
import { mapError } from './common/errors/error-mapper.js';
import { serviceUnavailable } from './common/errors/service-unavailable.js';
import { ErrorFilter } from './common/http/error.filter.js';
import { PinoNestLogger } from './common/http/nest-logger.js';
import {
  arrived,
  behindClose,
  closesConnection,
  isLatest,
} from './common/http/connection-order.js';
import { hasNoBody, installJsonBodyParser } from './common/http/json-body.js';
import { newRequestContext } from './common/http/request-context.js';
import { requestIdFor } from './common/http/request-id.js';
import { methodNotAllowed, RouteRegistry, routerPath } from './common/http/route-registry.js';
import {
  checkNoBody,
  checkQueryNames,
  operationKey,
  operationsOf,
  type OperationInputs,
} from './common/http/operation-inputs.js';
import {
  answerClientError,
  answerOddHttp,
  malformedRequest,
  serveOtherUpgradesAsHttp,
} from './common/http/raw-http.js';
import { createValidationPipe } from './common/http/validation.pipe.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigService } from './config/config.service.js';
import { ensureSecrets } from './config/secrets.js';
import { lockDataDir, type DataDirLock } from './config/data-dir-lock.js';
import { clockOffsetFile, fileClockOffset } from './config/clock-offset.js';
import {
  buildOpenApi,
  LEGACY_OPENAPI_LIFECYCLE,
  type ContractStore,
} from './modules/meta/openapi.builder.js';
import { OpenApiService } from './modules/meta/openapi.service.js';
import { registerWebApp } from './modules/web-app/web-app.static.js';

export interface CreateAppOptions {
  config: AppConfig;
  /** Defaults to the wall clock (forward-adjustable when SANDBOX_CLOCK_CONTROL is on). */
  clock?: Clock;
  /** Where JSON logs go; stdout by default. */
  logStream?: DestinationStream;
  /** The limit store; the in-process one by default (tests inject failing stores). */
  limitStore?: LimitStore;
  /** Where the built OpenAPI document is kept between boots; this process's memory by default. */
  contractStore?: ContractStore;
}

export interface App {
  app: NestFastifyApplication;
  clock: Clock;
  log: Logger;
  /** Closes the app, then releases its DATA_DIR (an in-process restart on it needs both). */
  close(): Promise<void>;
}

/** Paths and header names a log line must never carry in full. */
const REDACT = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-svc-signature"]',
];

/**
 * Builds the whole service (not yet listening): the one request pipeline, the error model, the
 * databases, the seeds and the contract. main.ts and the end-to-end tests both start it this way.
 */
export async function createApp(opts: CreateAppOptions): Promise<App> {
  const { config } = opts;
  const lock = lockDataDir(config.dataDir);
  try {
    return await build(opts, lock);
  } catch (err) {
    lock.release();
    throw err;
  }
}

async function build(opts: CreateAppOptions, lock: DataDirLock): Promise<App> {
  const { config } = opts;
  const secrets = ensureSecrets(config.dataDir, {
    jwtSecret: config.jwtSecret,
    encryptionKey: config.secretsEncryptionKey,
  });
  // The sandbox clock control's offset is kept across restarts, and read only while it is on.
  const clock =
    opts.clock ??
    new AdjustableClock(
      Date.now,
      config.sandboxClockControl ? fileClockOffset(config.dataDir) : null,
    );
  const log = pino(
    {
      level: config.logLevel,
      redact: { paths: REDACT, censor: '[redacted]' },
      base: { svc: 'sandbox-exchange' },
    },
    opts.logStream ?? pino.destination({ fd: 1, sync: false }),
  );
  if (clock instanceof AdjustableClock && clock.offset > 0) {
    log.warn(
      `the service clock runs ${clock.offset / 1000} s ahead of the wall clock (moved by POST /sandbox/clock; kept in DATA_DIR/clock.json)`,
    );
  }
  if (!config.sandboxClockControl && existsSync(clockOffsetFile(config.dataDir))) {
    log.warn(
      'DATA_DIR/clock.json is ignored: SANDBOX_CLOCK_CONTROL is off, so the service runs on the wall clock',
    );
  }
  const routes = new RouteRegistry();
  const adapter = new FastifyAdapter({
    loggerInstance: log,
    // One structured line per request comes from our onResponse hook instead.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: requestIdFor,
    requestIdHeader: false,
    bodyLimit: config.bodyLimitBytes,
    // Node answers an HTTP/1.1 request without Host with a bare 400; the onRequest hook answers
    // it in the contract's shape instead.
    // A request not fully received in REQUEST_TIMEOUT_MS (a stalled body included) is answered
    // 408 through the client-error handler; checked every second.
    http: {
      requireHostHeader: false,
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: Math.min(60_000, config.requestTimeoutMs),
      connectionsCheckingInterval: 1_000,
    },
    requestTimeout: config.requestTimeoutMs,
    // While closing, new requests get the contract's 503 from our onRequest hook instead.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Body schemas (the order hot path) are strict: no coercion, no silent removal, every error.
    ajv: {
      customOptions: {
        removeAdditional: false,
        coerceTypes: false,
        allErrors: true,
        allowUnionTypes: true,
        strictTypes: false,
      },
    },
    // The client IP comes from the socket; X-Forwarded-For only from configured proxies.
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    // Errors raised before any hook runs (malformed URL, over-long path parameter, malformed
    // HTTP) also leave as the contract's error body with the id and version headers.
    frameworkErrors: sendEarlyError,
    clientErrorHandler: (err: Error, socket: Socket) =>
      answerClientError(err, socket, undefined, log),
  });
  const fastify = adapter.getInstance() as unknown as FastifyInstance;
  const pipeline: Pipeline = {
    access: null,
    idempotency: null,
    limits: null,
    scenarios: null,
    closing: false,
    operations: null,
  };
  // Closing starts before Nest's destroy hooks (the webhook worker's wait among them), which run
  // before the HTTP server closes: from the first moment, new requests (readiness included) are
  // 503 and their connections close, so no new order lands on a stopping service.
  const beforeClose = adapter.beforeClose.bind(adapter);
  adapter.beforeClose = () => {
    pipeline.closing = true;
    log.info(
      { drain_ms: config.shutdownDrainMs },
      'shutting down: new requests are answered 503; requests in flight may finish',
    );
    beforeClose();
  };
  installHooks(fastify, { routes, clock, log, config, pipeline });
  installJsonBodyParser(fastify);

  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({
      config: new ConfigService(config, secrets),
      clock,
      routes,
      limitStore: opts.limitStore,
    }),
    adapter,
    { bodyParser: false, logger: new PinoNestLogger(log), abortOnError: false },
  );
  // What Nest built is closed again if the rest fails (databases, timers), before DATA_DIR is
  // released: a retry in the same process must not meet a second engine on it.
  try {
    app.setGlobalPrefix('api/v1');
    // The realtime feed shares the HTTP port; its protocol parses messages itself.
    const ws = new PeerTolerantWsAdapter(app);
    ws.setMessageParser(() => undefined);
    app.useWebSocketAdapter(ws);
    app.useGlobalFilters(new ErrorFilter(routes, log));
    app.useGlobalPipes(createValidationPipe());
    // useProcessExit: exit 0 once closed, instead of re-raising the signal (which exits 143).
    app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
    registerLegacyOpenApi(fastify);
    registerRealtimePath(fastify);
    registerWebApp(fastify, log);
    registerExplorer(fastify, config);

    pipeline.access = app.get(AccessPipeline, { strict: false });
    pipeline.idempotency = app.get(IdempotencyService, { strict: false });
    pipeline.limits = app.get(LimitsService, { strict: false });
    pipeline.scenarios = app.get(ScenarioGate, { strict: false });
    await app.init();
    const trusted =
      config.trustedProxies.length > 0 ? proxyaddr.compile(config.trustedProxies) : null;
    const refuseWhileClosing = (): void => {
      if (pipeline.closing) throw shuttingDown();
    };
    serveOtherUpgradesAsHttp(fastify.server, async (req) => {
      refuseWhileClosing();
      const ip =
        trusted === null ? (req.socket.remoteAddress ?? 'unknown') : proxyaddr(req, trusted);
      await pipeline.limits?.checkHandshake(ip);
      refuseWhileClosing(); // the charge may have waited on the limit store
    });
    answerOddHttp(fastify.server);
    drainWithDeadline(fastify, config.shutdownDrainMs, pipeline, log);
    const contract = buildOpenApi(app, config.stagingBaseUrl, opts.contractStore);
    app.get(OpenApiService, { strict: false }).set(contract.document, contract.json);
    pipeline.operations = operationsOf(contract.document);
  } catch (err) {
    await app.close().catch(() => undefined);
    throw err;
  }
  return {
    app,
    clock,
    log,
    // DATA_DIR is released once everything closed, the databases included. A signal's shutdown
    // ends with the process, which drops the lock with it.
    close: async () => {
      try {
        await app.close();
      } finally {
        lock.release();
      }
    },
  };
}

/**
 * Graceful shutdown waits for in-flight requests, but not for ever: a client that stalled in the
 * middle of its request would hold SIGTERM indefinitely. SHUTDOWN_DRAIN_MS after closing starts,
 * the connections still open are closed.
 */
function drainWithDeadline(
  fastify: FastifyInstance,
  drainMs: number,
  state: Lifecycle,
  log: Logger,
): void {
  let timer: NodeJS.Timeout | null = null;
  let forced = false;
  fastify.addHook('preClose', (done) => {
    state.closing = true;
    timer = setTimeout(() => {
      forced = true;
      log.warn(
        { drain_ms: drainMs },
        'SHUTDOWN_DRAIN_MS passed: closing the connections still open, requests in flight included',
      );
      fastify.server.closeAllConnections();
    }, drainMs);
    timer.unref();
    done();
  });
  fastify.addHook('onClose', (_instance, done) => {
    if (timer !== null) clearTimeout(timer);
    if (forced) log.warn('HTTP server closed after the drain deadline; closing the databases');
    else log.info('HTTP server closed: every request answered; closing the databases');
    done();
  });
}

/** The answer to anything that arrives once a graceful shutdown began. */
function shuttingDown(): DomainError {
  return serviceUnavailable('The service is shutting down; retry shortly');
}

/** Services the hooks call, resolved once Nest has built them. */
interface Lifecycle {
  /** Set once a graceful shutdown began: new requests are answered 503 SERVICE_UNAVAILABLE. */
  closing: boolean;
}

interface Pipeline extends Lifecycle {
  access: AccessPipeline | null;
  idempotency: IdempotencyService | null;
  limits: LimitsService | null;
  scenarios: ScenarioGate | null;
  /** What each documented operation takes, by `METHOD /route/:param` (see operationsOf). */
  operations: ReadonlyMap<string, OperationInputs> | null;
}

interface HookDeps {
  routes: RouteRegistry;
  clock: Clock;
  log: Logger;
  config: AppConfig;
  pipeline: Pipeline;
}

/**
 * The one request pipeline, as Fastify hooks around the thin controllers:
 * onRequest: ids and version header, deprecation headers, CORS, per-IP ceiling, 410 after
 * sunset;
 * preValidation (body parsed, not validated): batch legs against the per-IP ceiling, credential,
 * key state, signature, environment, scope, per-key/per-route limits and quotas;
 * preHandler (body validated): idempotency, then sandbox scenarios;
 * onSend: the idempotent response is stored; onResponse: one structured log line.
 */
function installHooks(fastify: FastifyInstance, deps: HookDeps): void {
  const { routes, clock, log, config, pipeline } = deps;
  const firstParty = new Set(config.firstPartyOrigins);
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url ?? route.path));

  // Behind an answer that closes the connection a pipelined request is never answered, so it is
  // not run (see connection-order.ts): checked as it arrives and before each step that acts.
  const skipBehindClose = (req: FastifyRequest, reply: FastifyReply): boolean => {
    if (!behindClose(req.raw)) return false;
    reply.hijack();
    return true;
  };
  fastify.addHook('onError', async (req: FastifyRequest, reply: FastifyReply) => {
    if (String(reply.getHeader('connection') ?? '').toLowerCase() === 'close') {
      closesConnection(req.raw);
    }
  });

  fastify.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    arrived(req.raw);
    if (skipBehindClose(req, reply)) return;
    req.svc = newRequestContext();
    reply.header('X-Request-Id', req.id).header('Svc-API-Version', 'v1');
    // Answers carry keys, tokens, secrets and account data: no cache keeps them (a GET sent
    // with X-API-Key is not protected as one with Authorization is, RFC 9111 3.5). The contract
    // document sets its own (no-cache, with its ETag).
    reply.header('Cache-Control', 'no-store');
    if (pipeline.closing) {
      reply.header('Connection', 'close');
      closesConnection(req.raw);
      throw shuttingDown();
    }
    const malformed = malformedRequest(req.raw);
    if (malformed !== null) {
      reply.header('Connection', 'close');
      closesConnection(req.raw);
      throw malformed;
    }
    // A request without a body has nothing to parse, whatever media type it names (fetch sends
    // text/plain with body '', SDKs application/json on every call): no 415, no "empty JSON".
    if (req.headers['content-type'] !== undefined && hasNoBody(req.headers)) {
      delete req.headers['content-type'];
    }
    const meta = routeMetaOf(req.routeOptions?.config);
    const deprecated = meta !== undefined && meta.lifecycle.state === 'DEPRECATED';
    // Deprecation headers go on every answer of a deprecated operation, refusals included.
    if (deprecated) {
      const params = (req.params ?? {}) as Record<string, string | undefined>;
      for (const [k, v] of Object.entries(deprecationHeaders(meta.lifecycle, params))) {
        reply.header(k, v);
      }
    }
    // CORS next: a preflight is answered without charging the per-IP ceiling, and a first-party
    // origin's refusals (410, 429) carry its allow and expose headers, so the browser can read them.
    if (applyCors(req, reply, firstParty)) return reply;
    // Every request counts against its path category, an operation past its sunset included.
    await pipeline.limits?.checkIp(req, meta);
    // Fastify would refuse a QUERY without Content-Type (RFC 10008) in its own words before the
    // not-found handler: no route takes QUERY, so it is answered as any method no route takes.
    if (req.method === 'QUERY' && req.headers['content-type'] === undefined) {
      const path = routerPath(req.url.split('?')[0]);
      const allowed = routes.methodsFor(path);
      if (!allowed.includes('QUERY')) {
        throw allowed.length > 0
          ? methodNotAllowed(req.method, path, allowed)
          : new DomainError('NOT_FOUND', `No route ${req.method} ${path}`);
      }
    }
    // GET /orders/batch reached GET /orders/{id}: that path is POST /orders/batch's, so 405
    // (counted against the per-IP ceiling as any unknown method on a known path is).
    const template = req.routeOptions?.url;
    if (template !== undefined && RouteRegistry.isParametric(template)) {
      const path = routerPath(req.url.split('?')[0]);
      const owned = routes.shadowedMethods(template, path);
      if (owned !== null) throw methodNotAllowed(req.method, path, owned);
    }
    if (deprecated && isSunset(meta.lifecycle, clock.now())) {
      const link = successorPath(
        meta.lifecycle,
        (req.params ?? {}) as Record<string, string | undefined>,
      );
      throw new DomainError(
        'SUNSET',
        `This operation passed its sunset on ${meta.lifecycle.sunsetOn}` +
          (link !== undefined ? `; use ${link}` : ''),
        { sunset: meta.lifecycle.sunsetOn, successor: link ?? null },
        link !== undefined ? { Link: `<${link}>; rel="successor-version"` } : {},
      );
    }
  });

  // The body is parsed, not yet validated. A per-leg route's legs meet the per-IP ceiling first
  // (as per-IP ceilings come before authentication); then the credential and its limits, before
  // any validation: an anonymous or over-limit caller learns that (401, 403, 429) rather than
  // what is wrong with its body, and costs no validation work. The legs are charged with the
  // key's limits, so a batch the schema refuses still counts against the per-IP ceiling.
  fastify.addHook('preValidation', async (req: FastifyRequest, reply: FastifyReply) => {
    if (skipBehindClose(req, reply)) return;
    const meta = routeMetaOf(req.routeOptions?.config);
    if (meta !== undefined) {
      const limits = pipeline.limits;
      // A batch's legs meet the per-IP ceiling before authentication, as any request does; they
      // are charged with the key's limits, all or nothing. A batch refused before that charge
      // (a bad credential) counts once, like any request (settleLegs, after the answer).
      const legs = meta.ipCharge === 'legs' ? (limits?.legCharge(req) ?? null) : null;
      if (legs !== null) await limits!.gateLegs(legs);
      if (pipeline.access !== null) {
        await pipeline.access.authenticate(req, meta);
        const credential = req.svc.credential;
        if (credential !== null) {
          await limits?.checkCredential(
            credential,
            meta,
            meta.routeLimitGroup ?? operationKey(req),
            reply,
            legs,
          );
        }
      }
    }
    // What the body parser found wrong with a field, now that the caller is known.
    if (req.bodyIssue !== undefined) throw req.bodyIssue;
    // The public reads (the documents, the changelog, the health probe) tolerate cache-busters;
    // every other operation, the public POSTs (register, login, ...) included, takes only what
    // its OpenAPI entry lists.
    const publicRead = meta?.auth === 'public' && (req.method === 'GET' || req.method === 'HEAD');
    if (meta !== undefined && !publicRead) {
      const op = pipeline.operations?.get(operationKey(req));
      if (op !== undefined) {
        checkQueryNames(req, op);
        checkNoBody(req, op);
      }
    }
  });

  // Validated: an idempotent replay or conflict is answered now, before the controller; then a
  // sandbox scenario the request matches shapes it (after the replay, which spends none).
  fastify.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    if (skipBehindClose(req, reply)) return;
    const meta = routeMetaOf(req.routeOptions?.config);
    if (meta === undefined || pipeline.idempotency === null) return;
    if (await pipeline.idempotency.begin(req, reply)) return reply;
    await pipeline.scenarios?.apply(req, reply);
  });

  fastify.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    // While shutting down, an answer with nothing queued behind it on its connection ends that
    // connection, so the exit need not wait SHUTDOWN_DRAIN_MS to drop it (a request already
    // queued behind keeps it open and gets its 503).
    if (pipeline.closing && isLatest(req.raw)) reply.header('Connection', 'close');
    if (req.idempotency !== undefined && pipeline.idempotency !== null) {
      await pipeline.idempotency.finish(req, reply, payload);
    }
    return payload;
  });

  fastify.addHook('onResponse', async (req: FastifyRequest, reply: FastifyReply) => {
    await pipeline.limits?.settleLegs(req, routeMetaOf(req.routeOptions?.config));
    log.info(
      {
        req_id: req.id,
        method: req.method,
        route: req.routeOptions?.url ?? null,
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request',
    );
  });
}

/** GET /openapi.json: outside the /api/v1 prefix, deprecated, 308 until its sunset, then 410. */
function registerLegacyOpenApi(fastify: FastifyInstance): void {
  fastify.route({
    method: 'GET',
    url: '/openapi.json',
    config: {
      [ROUTE_META_KEY]: {
        auth: 'public',
        scopes: [],
        lifecycle: LEGACY_OPENAPI_LIFECYCLE,
        environment: 'any',
      },
    },
    handler: async (_req, reply) => {
      await reply.code(308).header('Location', '/api/v1/openapi.json').send();
    },
  });
}

/**
 * The realtime path over plain HTTP: a GET that asks for no WebSocket upgrade (or for another
 * protocol) is a refused handshake, 400 BAD_REQUEST, and other methods are 405 (Allow: GET, HEAD)
 * as on any known path. A real handshake never gets here: the server's upgrade listener takes it.
 */
function registerRealtimePath(fastify: FastifyInstance): void {
  fastify.route({
    method: 'GET',
    url: '/api/v1/ws',
    handler: async () => {
      throw new DomainError(
        'BAD_REQUEST',
        'This is the WebSocket endpoint: open it with a handshake (GET with Upgrade: websocket and Connection: Upgrade)',
      );
    },
  });
}

/** An error Fastify's router raises before any hook has run, so before the id and version headers. */
function sendEarlyError(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  const mapped = mapError(err, String(req.id));
  void reply
    .code(mapped.status)
    .headers({
      ...mapped.headers,
      'X-Request-Id': String(req.id),
      'Svc-API-Version': 'v1',
      'Cache-Control': 'no-store',
    })
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(mapped.body));
}
