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
import { registerExplorer } from './modules/explorer/explorer.static.js';
import { IdempotencyService } from './modules/access/idempotency.service.js';
import type { LimitStore } from './modules/limits/limit-store.js';
import { LimitsService } from './modules/limits/limits.service.js';
import { PeerTolerantWsAdapter } from './modules/realtime/ws-adapter.js';
import { ScenarioGate } from './modules/scenarios/scenario-gate.js';
import { WebhookWorker } from './modules/webhooks/webhook-worker.service.js';
import { ROUTE_META_KEY } from './common/api/route-meta.js';
import { AdjustableClock, type Clock } from './common/clock/clock.js';
import { DomainError } from './common/errors/domain-error.js';
import { mapError } from './common/errors/error-mapper.js';
import { ErrorFilter } from './common/http/error.filter.js';
import { PinoNestLogger } from './common/http/nest-logger.js';
import { lazyRequestLogger } from './common/http/request-logger.js';
import { installGracefulDrain } from './common/http/graceful-drain.js';
import { installJsonBodyParser } from './common/http/json-body.js';
import { installPipeline } from './common/http/pipeline/pipeline.js';
import { pipelineServices, shuttingDown } from './common/http/pipeline/pipeline-state.js';
import { requestIdFor } from './common/http/request-id.js';
import { RouteRegistry } from './common/http/route-registry.js';
import { operationsOf } from './common/http/operation-inputs.js';
import {
  answerClientError,
  answerOddHttp,
  serveOtherUpgradesAsHttp,
} from './common/http/raw-http.js';
import { createValidationPipe } from './common/http/validation.pipe.js';
import { sharedValidatorCompilers } from './common/http/validator-compilers.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigService } from './config/config.service.js';
import { ensureSecrets } from './config/secrets.js';
import { lockDataDir } from './config/data-dir-lock.js';
import { lockDatabase, type DatabaseLock } from './modules/cluster/database-lock.js';
import { ClusterService } from './modules/cluster/cluster.service.js';
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
  const dirLock = lockDataDir(config.dataDir);
  let dbLock: DatabaseLock | null = null;
  const lock = {
    release: async (): Promise<void> => {
      try {
        await dbLock?.release();
      } finally {
        dirLock.release();
      }
    },
  };
  try {
    // Cluster mode (REDIS_URL too) shares the database by writer election instead (ClusterNode).
    if (config.databaseUrl !== null && config.redisUrl === null) {
      dbLock = await lockDatabase(config.databaseUrl);
    }
    return await build(opts, lock);
  } catch (err) {
    await lock.release();
    throw err;
  }
}

async function build(opts: CreateAppOptions, lock: { release(): Promise<void> }): Promise<App> {
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
    // req.log becomes a pino child only if something logs through it (see request-logger.ts).
    childLoggerFactory: lazyRequestLogger,
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
    // One Ajv and its compiled body schemas for every boot of this process (the e2e tests').
    schemaController: { compilersFactory: { buildValidator: sharedValidatorCompilers } },
    // The client IP comes from the socket; X-Forwarded-For only from configured proxies.
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    // Errors raised before any hook runs (malformed URL, over-long path parameter, malformed
    // HTTP) also leave as the contract's error body with the id and version headers.
    frameworkErrors: sendEarlyError,
    clientErrorHandler: (err: Error, socket: Socket) =>
      answerClientError(err, socket, undefined, log),
  });
  const fastify = adapter.getInstance() as unknown as FastifyInstance;
  const pipeline = pipelineServices();
  const drain = installGracefulDrain(adapter, pipeline, config.shutdownDrainMs, log);
  installPipeline(fastify, { routes, clock, log, config, services: pipeline });
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
    const scenarios = app.get(ScenarioGate, { strict: false });
    pipeline.scenarios = scenarios;
    drain.closing = () => scenarios.stop();
    const webhooks = app.get(WebhookWorker, { strict: false });
    drain.first = () => webhooks.drain();
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
    const contract = buildOpenApi(app, config.stagingBaseUrl, opts.contractStore);
    app.get(OpenApiService, { strict: false }).set(contract.document, contract.json);
    pipeline.operations = operationsOf(contract.document);
    const cluster = app.get(ClusterService, { strict: false });
    if (cluster.enabled) {
      pipeline.cluster = cluster;
      // Before the app listens: the worlds this instance can write are written from the first
      // request (a restart of a lone instance serves at once, instead of 503 until its round).
      await cluster.start(fastify);
    }
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
        await lock.release();
      }
    },
  };
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
