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
import { ServerResponse, STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import pino, { type DestinationStream, type Logger } from 'pino';
import { AppModule } from './app.module.js';
import { AccessPipeline } from './modules/access/access.pipeline.js';
import { applyCors } from './modules/access/cors.js';
import { IdempotencyService } from './modules/access/idempotency.service.js';
import type { LimitStore } from './modules/limits/limit-store.js';
import { LimitsService } from './modules/limits/limits.service.js';
import { PeerTolerantWsAdapter } from './modules/realtime/ws-adapter.js';
import { deprecationHeaders, isSunset } from './common/api/lifecycle.js';
import { routeMetaOf, ROUTE_META_KEY } from './common/api/route-meta.js';
import { AdjustableClock, type Clock } from './common/clock/clock.js';
import { DomainError, validationFailed } from './common/errors/domain-error.js';
import { mapError } from './common/errors/error-mapper.js';
import { ErrorFilter } from './common/http/error.filter.js';
import { PinoNestLogger } from './common/http/nest-logger.js';
import { installJsonBodyParser } from './common/http/json-body.js';
import { timesSent } from './common/http/raw-headers.js';
import { newRequestContext } from './common/http/request-context.js';
import { requestIdFor } from './common/http/request-id.js';
import { methodNotAllowed, RouteRegistry, routerPath } from './common/http/route-registry.js';
import { createValidationPipe } from './common/http/validation.pipe.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigService } from './config/config.service.js';
import { ensureSecrets } from './config/secrets.js';
import { clockOffsetFile, fileClockOffset } from './config/clock-offset.js';
import { buildOpenApi, LEGACY_OPENAPI_LIFECYCLE } from './modules/meta/openapi.builder.js';
import { OpenApiService } from './modules/meta/openapi.service.js';

export interface CreateAppOptions {
  config: AppConfig;
  /** Defaults to the wall clock (forward-adjustable when SANDBOX_CLOCK_CONTROL is on). */
  clock?: Clock;
  /** Where JSON logs go; stdout by default. */
  logStream?: DestinationStream;
  /** The limit store; the in-process one by default (tests inject failing stores). */
  limitStore?: LimitStore;
}

export interface App {
  app: NestFastifyApplication;
  clock: Clock;
  log: Logger;
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
    closing: false,
    operations: null,
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

  pipeline.access = app.get(AccessPipeline, { strict: false });
  pipeline.idempotency = app.get(IdempotencyService, { strict: false });
  pipeline.limits = app.get(LimitsService, { strict: false });
  await app.init();
  serveOtherUpgradesAsHttp(fastify.server);
  answerOddHttp(fastify.server);
  drainWithDeadline(fastify, config.shutdownDrainMs, pipeline);
  const contract = buildOpenApi(app, config.stagingBaseUrl);
  app.get(OpenApiService, { strict: false }).set(contract);
  pipeline.operations = operationsOf(contract);
  return { app, clock, log };
}

/**
 * Node hands every request with an `Upgrade` header to the `upgrade` listeners, and Nest's
 * WebSocket adapter destroys the socket of any that is not its path: `Upgrade: h2c` (curl
 * --http2, Java's HttpClient on plain http) on any route got no answer at all. Only a WebSocket
 * upgrade of /api/v1/ws goes to the adapter now; any other request is served as the HTTP/1.1
 * request it also is (RFC 9110: a server may ignore Upgrade), on a connection that then closes.
 * One with a body is refused with 400 (its body can no longer be read once Node let go of it).
 */
function serveOtherUpgradesAsHttp(server: Server): void {
  const adapterListeners = server.listeners('upgrade') as ((...args: unknown[]) => void)[];
  server.removeAllListeners('upgrade');
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const path = (req.url ?? '/').split('?')[0];
    if (/\bwebsocket\b/i.test(req.headers.upgrade ?? '') && path === '/api/v1/ws') {
      const refusal = handshakeProblem(req);
      if (refusal !== null) {
        answerClientError(refusal, socket, req);
        return;
      }
      for (const l of adapterListeners) l.call(server, req, socket, head);
      return;
    }
    const hasBody =
      head.length > 0 ||
      req.headers['transfer-encoding'] !== undefined ||
      Number(req.headers['content-length'] ?? 0) > 0;
    if (hasBody) {
      answerClientError(
        new DomainError(
          'BAD_REQUEST',
          'A request with a body cannot ask to upgrade the connection; send it without the Upgrade header',
        ),
        socket,
      );
      return;
    }
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.on('finish', () => socket.end());
    server.emit('request', req, res);
  });
}

/**
 * RFC 3986 host and optional port: an IP literal (IPv6 with an optional zone id, as Node and
 * Python send for link-local addresses, or IPvFuture), an IPv4 address or a registered name,
 * which may be empty (RFC 9112 3.2: a request target without an authority).
 */
const HOST_HEADER =
  /^(?:\[[0-9A-Fa-f:.]+(?:%(?:25)?[A-Za-z0-9\-._~]+)?\]|\[v[0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]*)(?::\d*)?$/;

/**
 * What RFC 9112 has a server refuse with 400 that Node's parser lets through: an HTTP version
 * other than 1.0 or 1.1, and (section 3.2) an HTTP/1.1 request without a Host, any request with
 * more than one, or a Host value that is not a host.
 */
function malformedRequest(req: IncomingMessage): DomainError | null {
  if (req.httpVersion !== '1.1' && req.httpVersion !== '1.0') {
    return new DomainError(
      'BAD_REQUEST',
      `HTTP/${req.httpVersion} is not supported here: send HTTP/1.1`,
    );
  }
  const hosts = timesSent(req.rawHeaders, 'host');
  if (hosts > 1) return new DomainError('BAD_REQUEST', 'A request takes one Host header');
  if (hosts === 0) {
    return req.httpVersion === '1.1'
      ? new DomainError('BAD_REQUEST', 'An HTTP/1.1 request needs a Host header')
      : null;
  }
  return HOST_HEADER.test(req.headers.host ?? '')
    ? null
    : new DomainError('BAD_REQUEST', 'Invalid Host header: expected a host name and port');
}

/**
 * What `ws` would refuse in a WebSocket handshake (RFC 6455 4.2.1), refused here first so the
 * answer is the contract's JSON body with the usual headers instead of `ws`'s text/html one.
 */
function handshakeProblem(req: IncomingMessage): DomainError | null {
  if (req.method !== 'GET') {
    // The same Allow as the path answers without an upgrade (GET, and HEAD with it).
    return new DomainError(
      'METHOD_NOT_ALLOWED',
      'A WebSocket handshake is a GET request',
      { allowed_methods: ['GET', 'HEAD'] },
      { Allow: 'GET, HEAD' },
    );
  }
  if (req.httpVersion !== '1.1') {
    return new DomainError('BAD_REQUEST', 'A WebSocket handshake needs HTTP/1.1 (RFC 6455 4.1)');
  }
  const malformed = malformedRequest(req);
  if (malformed !== null) return malformed;
  if ((req.headers.upgrade ?? '').trim().toLowerCase() !== 'websocket') {
    return new DomainError('BAD_REQUEST', 'Invalid Upgrade header: expected "websocket"');
  }
  const key = req.headers['sec-websocket-key'];
  if (typeof key !== 'string' || !/^[+/0-9A-Za-z]{22}==$/.test(key.trim())) {
    return new DomainError('BAD_REQUEST', 'Missing or invalid Sec-WebSocket-Key header');
  }
  const version = (req.headers['sec-websocket-version'] ?? '').trim();
  if (version !== '13' && version !== '8') {
    return new DomainError(
      'BAD_REQUEST',
      'Missing or unsupported Sec-WebSocket-Version header: this server speaks version 13 (RFC 6455), and the draft version 8 as the ws library does',
      { supported_versions: [13, 8] },
      { 'Sec-WebSocket-Version': '13, 8' },
    );
  }
  return null;
}

/**
 * What Node's HTTP server would answer without a body, or not at all, answered in the contract's
 * shape: an `Expect` other than 100-continue (417), and CONNECT (405: no tunnels here).
 */
function answerOddHttp(server: Server): void {
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const answer = closingAnswer(
      new DomainError(
        'EXPECTATION_FAILED',
        `Expect: ${String(req.headers.expect).slice(0, 60)} is not supported; only 100-continue is`,
      ),
      req,
    );
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  });
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
    answerClientError(
      new DomainError(
        'METHOD_NOT_ALLOWED',
        'CONNECT is not supported: this is not a proxy',
        { allowed_methods: methods },
        { Allow: methods.join(', ') },
      ),
      socket,
      req,
    );
  });
}

/**
 * Graceful shutdown waits for in-flight requests, but not for ever: a client that stalled in the
 * middle of its request would hold SIGTERM indefinitely. SHUTDOWN_DRAIN_MS after closing starts,
 * the connections still open are closed.
 */
function drainWithDeadline(fastify: FastifyInstance, drainMs: number, state: Lifecycle): void {
  let timer: NodeJS.Timeout | null = null;
  fastify.addHook('preClose', (done) => {
    state.closing = true;
    timer = setTimeout(() => fastify.server.closeAllConnections(), drainMs);
    timer.unref();
    done();
  });
  fastify.addHook('onClose', (_instance, done) => {
    if (timer !== null) clearTimeout(timer);
    done();
  });
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
  /** What each documented operation takes, by `METHOD /route/:param` (see operationsOf). */
  operations: ReadonlyMap<string, OperationInputs> | null;
}

/** What a documented operation takes besides its path: its query parameters and whether a body. */
interface OperationInputs {
  query: ReadonlySet<string>;
  body: boolean;
}

/**
 * The inputs of every documented operation, from the OpenAPI document itself, keyed as Fastify
 * names the route (`GET /api/v1/markets/:id/orderbook`): a query parameter the document does not
 * list, or a body sent to an operation that takes none, is refused on every operation that takes
 * a credential alike, rather than ignored (`GET /orders/export?status=OPEN` would otherwise look
 * like a filter that worked). Public operations (health, the documents, the changelog) are left
 * alone: cache-busters and tracking parameters on them harm no one.
 */
function operationsOf(doc: Record<string, unknown>): Map<string, OperationInputs> {
  const out = new Map<string, OperationInputs>();
  const paths = (doc.paths ?? {}) as Record<string, Record<string, unknown>>;
  for (const [path, ops] of Object.entries(paths)) {
    const route = path.replace(/\{([^}]+)\}/g, ':$1');
    for (const [method, op] of Object.entries(ops)) {
      if (op === null || typeof op !== 'object') continue;
      const { parameters, requestBody } = op as { parameters?: unknown[]; requestBody?: unknown };
      const params = (parameters ?? []) as { in?: string; name?: string }[];
      out.set(`${method.toUpperCase()} ${route}`, {
        query: new Set(params.filter((p) => p.in === 'query').map((p) => String(p.name))),
        body: requestBody !== undefined,
      });
    }
  }
  return out;
}

/**
 * 400 VALIDATION_FAILED for a body sent to an operation that takes none, in the pipe's words
 * (an empty object, which many clients send with every POST, is no body).
 */
function checkNoBody(req: FastifyRequest, op: OperationInputs): void {
  const body = req.body;
  if (body === undefined || body === null || op.body) return;
  if (typeof body === 'object' && !Array.isArray(body)) {
    const keys = Object.keys(body);
    if (keys.length === 0) return;
    throw validationFailed(
      keys.map((k) => ({ field: k, message: `property ${k} should not exist` })),
    );
  }
  throw validationFailed([{ field: 'body', message: 'this operation takes no body' }]);
}

/**
 * The operation a request reached, as `METHOD /route/:param`. HEAD is GET without the body
 * (Fastify adds it to every GET): one operation, one route budget, the same query parameters.
 */
function operationKey(req: FastifyRequest): string {
  return `${req.method === 'HEAD' ? 'GET' : req.method} ${req.routeOptions.url}`;
}

/** 400 VALIDATION_FAILED for query parameters the operation does not take, in the pipe's words. */
function checkQueryNames(req: FastifyRequest, op: OperationInputs): void {
  const query = req.query as Record<string, unknown> | undefined;
  if (query === undefined || query === null) return;
  const keys = Object.keys(query);
  if (keys.length === 0) return;
  const allowed = op.query;
  // `/markets/?limit=1` reaches `/markets/:id` with an empty id: the handler's 404 says it best.
  const params = req.params as Record<string, unknown> | undefined;
  if (params !== undefined && Object.values(params).some((v) => v === '')) return;
  // No operation takes a list in its query: a parameter given twice is named as such, rather
  // than judged as the array the parser made of it ("must be an integer number").
  const problems = keys.flatMap((k) =>
    !allowed.has(k)
      ? [
          k === ''
            ? { field: k, message: 'a query parameter without a name' }
            : { field: k, message: `property ${k} should not exist` },
        ]
      : Array.isArray(query[k])
        ? [{ field: k, message: `${k} may be given once` }]
        : [],
  );
  if (problems.length > 0) throw validationFailed(problems);
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
 * preHandler (body validated): idempotency;
 * onSend: the idempotent response is stored; onResponse: one structured log line.
 */
function installHooks(fastify: FastifyInstance, deps: HookDeps): void {
  const { routes, clock, log, config, pipeline } = deps;
  const firstParty = new Set(config.firstPartyOrigins);
  fastify.addHook('onRoute', (route) => routes.add(route.method, route.url ?? route.path));

  fastify.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    req.svc = newRequestContext();
    reply.header('X-Request-Id', req.id).header('Svc-API-Version', 'v1');
    if (pipeline.closing) {
      reply.header('Connection', 'close');
      throw new DomainError(
        'SERVICE_UNAVAILABLE',
        'The service is shutting down; retry shortly',
        {},
        { 'Retry-After': '1' },
      );
    }
    const malformed = malformedRequest(req.raw);
    if (malformed !== null) {
      reply.header('Connection', 'close');
      throw malformed;
    }
    const meta = routeMetaOf(req.routeOptions?.config);
    const deprecated = meta !== undefined && meta.lifecycle.state === 'DEPRECATED';
    // Deprecation headers go on every answer of a deprecated operation, refusals included.
    if (deprecated) {
      for (const [k, v] of Object.entries(deprecationHeaders(meta.lifecycle))) reply.header(k, v);
    }
    // CORS next: a preflight is answered without charging the per-IP ceiling, and a first-party
    // origin's refusals (410, 429) carry its allow and expose headers, so the browser can read them.
    if (applyCors(req, reply, firstParty)) return reply;
    // Every request counts against its path category, an operation past its sunset included.
    await pipeline.limits?.checkIp(req, meta);
    // GET /orders/batch reached GET /orders/{id}: that path is POST /orders/batch's, so 405
    // (counted against the per-IP ceiling as any unknown method on a known path is).
    const template = req.routeOptions?.url;
    if (template !== undefined && RouteRegistry.isParametric(template)) {
      const path = routerPath(req.url.split('?')[0]);
      const owned = routes.shadowedMethods(template, path);
      if (owned !== null) throw methodNotAllowed(req.method, path, owned);
    }
    if (deprecated && isSunset(meta.lifecycle, clock.now())) {
      const link = meta.lifecycle.successor;
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
    // Public documents and the health probe take no credential and tolerate cache-busters.
    if (meta !== undefined && meta.auth !== 'public') {
      const op = pipeline.operations?.get(operationKey(req));
      if (op !== undefined) {
        checkQueryNames(req, op);
        checkNoBody(req, op);
      }
    }
  });

  // Validated: an idempotent replay or conflict is answered now, before the controller.
  fastify.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    const meta = routeMetaOf(req.routeOptions?.config);
    if (meta === undefined || pipeline.idempotency === null) return;
    if (await pipeline.idempotency.begin(req, reply)) return reply;
  });

  fastify.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
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
    .headers({ ...mapped.headers, 'X-Request-Id': String(req.id), 'Svc-API-Version': 'v1' })
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(mapped.body));
}

/**
 * The contract's answer to a request answered outside Fastify, on a connection that then closes:
 * its status, every header (the caller's X-Request-Id kept when the request was parsed) and body.
 */
function closingAnswer(
  err: Error,
  req?: IncomingMessage,
): { status: number; headers: Record<string, string>; body: string } {
  const id = requestIdFor(req ?? ({ headers: {} } as IncomingMessage));
  let mapped = mapError(err, id);
  if (mapped.unexpected) {
    mapped = mapError(new DomainError('BAD_REQUEST', 'Malformed HTTP request'), id);
  }
  const body = JSON.stringify(mapped.body);
  return {
    status: mapped.status,
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
      ...mapped.headers,
      'X-Request-Id': id,
      'Svc-API-Version': 'v1',
      Connection: 'close',
    },
    body,
  };
}

/** Malformed HTTP never becomes a request: answer on the socket, still in the contract's shape. */
function answerClientError(
  err: Error & { code?: string },
  socket: Socket,
  req?: IncomingMessage,
  log?: Logger,
): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  socket.on('error', () => undefined); // the destroy below ends it with the error
  const internals = socket as Socket & {
    parser?: { incoming?: (IncomingMessage & { _dumped?: boolean }) | null } | null;
    _httpMessage?: { headersSent?: boolean } | null;
  };
  const incoming = internals.parser?.incoming ?? null;
  // No second answer: the request in progress was answered already, before its body had all
  // arrived (Node then discards the rest: _dumped), or another answer has begun on the socket
  // (as Node's own handler checks). A keep-alive client would read ours as its next answer.
  if (incoming?._dumped === true || internals._httpMessage?.headersSent === true) {
    socket.destroy(err);
    return;
  }
  // A timeout arrives without the request; the parser holds the one still arriving once its
  // headers were read, so its caller's X-Request-Id is kept (a request received whole and
  // waiting for its answer is not the one that timed out).
  const request = req ?? (incoming !== null && !incoming.complete ? incoming : undefined);
  const answer = closingAnswer(err, request);
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && request !== undefined) {
    log?.info(
      {
        req_id: answer.headers['X-Request-Id'],
        method: request.method,
        url: request.url,
        status: answer.status,
      },
      'request timed out before it was fully received',
    );
  }
  if (socket.writable) {
    const head = Object.entries(answer.headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\n${head}\r\n${answer.body}`,
    );
  }
  socket.destroy(err);
}
