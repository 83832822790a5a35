import type { INestApplication } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { CORS_REFUSAL } from '../../common/api/endpoint.decorator.js';
import { deprecationHeaders, type Lifecycle } from '../../common/api/lifecycle.js';
import { webhookEventDocs } from '../webhooks/webhook-event-schemas.js';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/webhook-outbox.service.js';
import { applyValidationRules } from './openapi-validation-rules.js';
import { API_TAGS } from './tags.js';
import { shareResponseHeaders } from './openapi-shared-headers.js';

type Obj = Record<string, unknown>;

export const LEGACY_OPENAPI_LIFECYCLE: Lifecycle = {
  state: 'DEPRECATED',
  deprecatedOn: '2026-05-08',
  sunsetOn: '2026-08-08',
  successor: '/api/v1/openapi.json',
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const DESCRIPTION = `HTTP API of the paper-trading sandbox exchange.

* Test keys (\`svc_test_...\`) reach the isolated paper engine; live keys (\`svc_live_...\`) the live engine.
* Every operation lists the scopes it needs in \`x-required-scopes\` and in its security requirement,
  its lifecycle in \`x-lifecycle\` (STABLE, BETA, DEPRECATED) and, where one applies, its per-route limit in \`x-rate-limit\`.
* Errors share one body: \`{"error": {"code", "message", "status", "request_id", "details"}}\`.
  A 404 for a resource names the id it did not find in \`details\` (\`market_id\`, \`order_id\`, \`key_id\`,
  \`endpoint_id\`, \`delivery_id\`, \`notification_id\`, \`tier_request_id\`, \`comment_id\`, \`parent_id\`).
* Money is integer cents; prices of binary contracts are integer cents 1..99.
* Every response carries \`Svc-API-Version: v1\` and \`X-Request-Id\`.
* Deprecated operations answer with \`Deprecation\` (@unix seconds), \`Sunset\` (when scheduled) and
  \`Link: <successor>; rel="successor-version"\`; past the sunset they answer 410 SUNSET.
* The interactive API Explorer is served at \`/explorer\` on staging (never in production): it renders
  this document, sends its try-it calls to the origin serving it (or to the staging server listed),
  and takes test keys (\`svc_test_...\`) only. It marks its requests with \`Svc-Client: api-explorer\`;
  such a request carrying a live key is refused with 403 LIVE_KEY_EXPLORER.`;

/**
 * The built document and its serialized form (what GET /api/v1/openapi.json serves). The document
 * is frozen, and shared by every boot of the process that builds the same one: read it, never
 * change it (a change throws).
 */
export interface BuiltContract {
  document: Obj;
  json: string;
}

/**
 * Where built documents are kept between boots, by key (the staging URL and the controllers):
 * this process's memory unless createApp is given another (the e2e tests share one per run
 * across their test files, which Jest loads each in a fresh module registry).
 */
export interface ContractStore {
  get(key: string): string | undefined;
  set(key: string, json: string): void;
}

const BUILT = new Map<string, string>();

/** The documents this process has built or parsed, by key, each with the JSON it came from. */
const PARSED = new Map<string, BuiltContract>();

/**
 * Generates the OpenAPI 3.1 document from the controllers' decorators, then derives the security
 * requirements from each operation's x-auth and x-required-scopes, so the scopes are stated once.
 */
export function buildOpenApi(
  app: INestApplication,
  stagingBaseUrl: string,
  store: ContractStore = BUILT,
): BuiltContract {
  // Scanning every controller's decorators takes about 0.6 s, a third of a boot. The document
  // depends only on the controllers and the staging URL, so a process that boots the app more
  // than once (the e2e tests boot it hundreds of times) builds it once per pair. Parsing the
  // stored JSON again (1.7 MB) took another 30 ms a boot: the parsed document is kept too, frozen
  // so that no boot can change what the next one serves.
  const key = `${stagingBaseUrl}\n${controllerNames(app).join(',')}`;
  const built = store.get(key);
  const parsed = PARSED.get(key);
  if (built !== undefined && parsed?.json === built) return parsed;
  const json = built ?? JSON.stringify(generate(app, stagingBaseUrl));
  if (built === undefined) store.set(key, json);
  // Parsed from its JSON even when just generated: what is frozen then shares no object with the
  // decorators' constants (the generated document holds some of them, API_TAGS for one).
  const contract = { document: deepFreeze(JSON.parse(json) as Obj), json };
  PARSED.set(key, contract);
  return contract;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

function controllerNames(app: INestApplication): string[] {
  const names: string[] = [];
  for (const mod of app.get(ModulesContainer).values()) {
    for (const wrapper of mod.controllers.values()) names.push(wrapper.name);
  }
  return names.sort();
}

function generate(app: INestApplication, stagingBaseUrl: string): Obj {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Sandbox exchange API')
    .setDescription(DESCRIPTION)
    .setVersion('v1')
    .addServer(stagingBaseUrl, 'Staging (the only environment the API Explorer offers)')
    .addSecurity('ApiKeyAuth', {
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description:
        'An API key: svc_live_... (live engine) or svc_test_... (paper engine). A request marked Svc-Client: api-explorer (the API Explorer at /explorer) takes test keys only: with a live key it is refused with 403 LIVE_KEY_EXPLORER.',
    })
    .addSecurity('BearerAuth', {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description:
        "First-party session token from POST /api/v1/auth/login (the service's own apps)",
    });
  for (const t of API_TAGS) builder.addTag(t.name, t.description);
  const doc = SwaggerModule.createDocument(app, builder.build(), {
    operationIdFactory: (controller, method) =>
      `${controller.replace(/Controller$/, '')}_${method}`.replace(/^./, (c) => c.toLowerCase()),
  }) as unknown as Obj;

  const paths = doc.paths as Record<string, Obj>;
  const schemas = ((doc.components as Obj | undefined)?.schemas ?? {}) as Record<string, Obj>;
  applyValidationRules(schemas);
  // Before the loop: the legacy URL answers with the same pipeline headers as every operation.
  paths['/openapi.json'] = legacyOpenApiPath();
  for (const item of Object.values(paths)) {
    for (const m of METHODS) {
      const op = item[m] as Obj | undefined;
      if (op === undefined) continue;
      op.security = securityFor(op);
      describeHeadersAndShared(op, m);
      closeBodySchema(op, schemas);
      if (op['x-auth'] !== 'public' || m !== 'get') refuseEmptyQueryValues(op);
    }
  }
  // The contract's own answers carry its strong ETag (If-None-Match -> 304).
  for (const path of ['/api/v1/openapi/v1.json', '/api/v1/openapi.json']) {
    for (const status of ['200', '304']) {
      const r = ((paths[path]?.get as Obj | undefined)?.responses as Obj | undefined)?.[status] as
        Obj | undefined;
      if (r !== undefined) {
        r.headers = {
          ...(r.headers as Obj),
          ETag: header('Strong ETag of the document; send it as If-None-Match', 'string', true),
        };
      }
    }
  }
  for (const [path, media] of Object.entries(NON_JSON_BODIES)) {
    const responses = (paths[path]?.get as Obj | undefined)?.responses as Obj | undefined;
    for (const status of ['200', '206']) {
      const ok = responses?.[status] as Obj | undefined;
      if (ok !== undefined) {
        ok.content = Object.fromEntries(media.map((m) => [m, { schema: { type: 'string' } }]));
      }
    }
  }
  (doc as Obj).tags = API_TAGS;
  // What an endpoint receives: one OpenAPI 3.1 webhook per event type.
  const events = webhookEventDocs(WEBHOOK_EVENT_TYPES);
  Object.assign(schemas, events.schemas);
  (doc as Obj).webhooks = events.webhooks;
  // The WebSocket feed is described by AsyncAPI, not by a tag.
  (doc as Obj).externalDocs = {
    description: 'Realtime WebSocket feed (/api/v1/ws): AsyncAPI 3.0 document',
    url: `${stagingBaseUrl}/api/v1/asyncapi.json`,
  };
  ((doc as Obj).info as Obj)['x-asyncapi'] = '/api/v1/asyncapi.json';
  shareResponseHeaders(doc);
  return doc;
}

/** Statuses the service may give before routing (malformed HTTP, an unmet Expect, big headers). */
const BEFORE_ROUTING = new Set(['400', '417', '431']);

/** Operations answering something other than JSON (their 200 and 206 content is a string). */
const NON_JSON_BODIES: Record<string, string[]> = {
  '/api/v1/orders/export': ['text/csv'],
  '/api/v1/changelog.rss': ['application/rss+xml'],
  '/api/v1/data/exports/{id}/download': ['text/csv', 'application/x-ndjson'],
};

/** Key-only operations: a session token is refused (cancel-on-disconnect is per API key). */
function securityFor(op: Obj): Obj[] {
  const auth = op['x-auth'];
  const scopes = (op['x-required-scopes'] as string[] | undefined) ?? [];
  // Sessions are live-only: a paper-only (sandbox) operation takes a key.
  const keyOnly = op['x-api-key-only'] === true || op['x-environment'] === 'sandbox-only';
  switch (auth) {
    case 'public':
      return [];
    case 'optional':
      return [{}, { ApiKeyAuth: scopes }, { BearerAuth: scopes }];
    case 'session':
      return [{ BearerAuth: scopes }];
    default:
      return keyOnly ? [{ ApiKeyAuth: scopes }] : [{ ApiKeyAuth: scopes }, { BearerAuth: scopes }];
  }
}

const header = (
  description: string,
  type: 'integer' | 'string' = 'string',
  required = false,
): Obj => ({
  description,
  ...(required ? { required: true } : {}),
  schema: { type },
});
const ERROR_BODY: Obj = {
  'application/json': { schema: { $ref: '#/components/schemas/ErrorResponseDto' } },
};

/**
 * What the request pipeline does for every operation, stated on each: the id and version
 * headers on every answer, the limit headers on authenticated ones, Retry-After on 429, the
 * deprecation headers of deprecated operations, and on mutations the Idempotency-Key request
 * header with its replay header and its 409/422 answers; 400 on every operation that takes a
 * credential, a query or a body (an unknown query parameter is refused), 413 and 415 wherever a
 * body is taken.
 */
function describeHeadersAndShared(op: Obj, method: string): void {
  const responses = op.responses as Record<string, Obj>;
  const authed = op['x-auth'] !== 'public';
  const mutation = method !== 'get' && method !== 'head' && method !== 'options';
  const deprecation = op.deprecated === true ? (op['x-deprecation'] as Obj | undefined) : undefined;
  const ensure = (status: string, description: string): void => {
    responses[status] ??= { description, content: ERROR_BODY };
  };
  /** Like ensure, and where the operation states the status itself, its codes join the text. */
  const ensureCodes = (status: string, description: string, codes: string[]): void => {
    const own = responses[status];
    if (own === undefined) {
      ensure(status, description);
      return;
    }
    const text = String(own.description ?? '');
    const missing = codes.filter((c) => !text.includes(c));
    if (missing.length > 0) own.description = `${text}; also ${description}`;
  };
  // A query parameter the operation does not list is refused on every operation that takes a
  // credential.
  const takesQuery = ((op.parameters as Obj[] | undefined) ?? []).some((p) => p.in === 'query');
  if (authed || mutation || takesQuery || op.requestBody !== undefined)
    ensure(
      '400',
      mutation || op.requestBody !== undefined
        ? 'Invalid request (VALIDATION_FAILED, MALFORMED_JSON)'
        : 'Invalid request (VALIDATION_FAILED: a parameter out of range, or a query parameter the operation does not take)',
    );
  // Any mutation may be sent a body: it is read (and refused) even where none is expected.
  if (op.requestBody !== undefined || mutation) {
    ensure('413', 'Request body too large, or more than 2,000 JSON values (PAYLOAD_TOO_LARGE)');
    ensure(
      '415',
      'Unsupported Content-Type: the API takes application/json (UNSUPPORTED_MEDIA_TYPE; details.accepted_media_types and the Accept header name it)',
    );
  }
  if (mutation && authed) {
    ensureCodes(
      '409',
      'IDEMPOTENCY_KEY_IN_USE (the same Idempotency-Key still running) or IDEMPOTENT_REQUEST_APPLIED',
      ['IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENT_REQUEST_APPLIED'],
    );
    ensureCodes(
      '422',
      'IDEMPOTENCY_KEY_REUSED (the Idempotency-Key was used with another request)',
      ['IDEMPOTENCY_KEY_REUSED'],
    );
    const params = ((op.parameters as Obj[] | undefined) ?? []).filter(
      (p) => String(p.name).toLowerCase() !== 'idempotency-key',
    );
    params.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        '1 to 255 printable ASCII characters (spaces inside allowed), scoped to the credential owner for 24 hours: the same key with the same request replays the stored answer (Idempotent-Replayed: true) and never runs twice.',
      schema: {
        type: 'string',
        minLength: 1,
        maxLength: 255,
        pattern: '^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$',
      },
    });
    op.parameters = params;
  }
  for (const [status, r] of Object.entries(responses)) {
    const h: Obj = {
      'X-Request-Id': header(
        'This request’s id (your own if you sent a well-formed one); equals error.request_id',
        'string',
        true,
      ),
      'Svc-API-Version': header('API version: v1', 'string', true),
    };
    if (authed && status !== '401') {
      h['X-RateLimit-Limit'] = header(
        'Requests a minute this key (or session) may make',
        'integer',
      );
      h['X-RateLimit-Remaining'] = header('Requests left in the current minute', 'integer');
      h['X-RateLimit-Reset'] = header('When the current minute ends (unix seconds)', 'integer');
      // Sent while DATA_API_USAGE_METERING_ENABLED is on, to API keys (sessions are not metered).
      for (const [period, span] of [
        ['Daily', 'UTC day'],
        ['Monthly', 'UTC month'],
      ] as const) {
        h[`X-Quota-${period}-Limit`] = header(
          `Requests this API key may make in the ${span} (only while usage metering is on; never on a session)`,
          'integer',
        );
        h[`X-Quota-${period}-Remaining`] = header(
          `Requests left to this API key in the current ${span} (only while usage metering is on; never on a session)`,
          'integer',
        );
      }
    }
    // Every 401 names the credential schemes (RFC 9110 11.6.1).
    if (status === '401') {
      h['WWW-Authenticate'] = header(
        'The credential schemes taken: ApiKey realm="api", Bearer realm="api"',
        'string',
        true,
      );
    }
    // A 415 for the media type names the one taken (a Content-Encoding one names Accept-Encoding).
    if (status === '415') {
      h['Accept'] = header('The media type the API takes: application/json');
      h['Accept-Encoding'] = header('On a compressed body: the one coding taken, identity');
    }
    // Every 429 says when to retry; a 503 does while shutting down (not from a failed readiness).
    if (status === '429' || status === '503') {
      h['Retry-After'] = header('Seconds to wait before retrying', 'integer', status === '429');
    }
    if (mutation && authed && !status.startsWith('5')) {
      if (!status.startsWith('2')) {
        h['Idempotent-Original-Request-Id'] = header(
          'On a replayed error: the id of the request whose answer this is',
        );
      }
      h['Idempotent-Replayed'] = header(
        'true when this is the stored answer to an earlier request with the same Idempotency-Key',
      );
    }
    if (deprecation !== undefined) {
      // On every answer the operation gives; a 503 while shutting down, malformed HTTP (400), an
      // unmet Expect (417) and oversized headers (431) are answered before routing, without them.
      const always = !status.startsWith('5') && !BEFORE_ROUTING.has(status);
      h['Deprecation'] = header(
        'When the operation was deprecated, as @<unix seconds> (RFC 9745)',
        'string',
        always,
      );
      if (deprecation.sunset_on !== null) {
        h['Sunset'] = header('When the operation stops working (RFC 8594)', 'string', always);
      }
      if (deprecation.successor !== null) {
        h['Link'] = header('The successor operation, rel="successor-version"', 'string', always);
      }
    }
    r.headers = { ...h, ...((r.headers as Obj | undefined) ?? {}) };
  }
}

function legacyOpenApiPath(): Obj {
  const headers = deprecationHeaders(LEGACY_OPENAPI_LIFECYCLE);
  const headerDocs: Obj = {};
  /** The same headers, absent from the answers given before routing. */
  const earlyHeaderDocs: Obj = {};
  for (const [name, example] of Object.entries(headers)) {
    headerDocs[name] = { required: true, schema: { type: 'string' }, example };
    earlyHeaderDocs[name] = { schema: { type: 'string' }, example };
  }
  return {
    get: {
      operationId: 'legacyOpenApi',
      summary: 'Legacy contract URL (deprecated)',
      description:
        'Deprecated on 2026-05-08. Redirects (308) to /api/v1/openapi.json until its sunset on 2026-08-08; after that it answers 410 SUNSET. This path sits outside the /api/v1 prefix.',
      tags: ['Meta'],
      deprecated: true,
      security: [],
      'x-auth': 'public',
      'x-required-scopes': [],
      'x-lifecycle': 'DEPRECATED',
      'x-deprecation': {
        deprecated_on: LEGACY_OPENAPI_LIFECYCLE.deprecatedOn,
        sunset_on: LEGACY_OPENAPI_LIFECYCLE.sunsetOn,
        successor: LEGACY_OPENAPI_LIFECYCLE.successor,
      },
      responses: {
        '308': {
          description: 'Permanent redirect to /api/v1/openapi.json',
          headers: { Location: { required: true, schema: { type: 'string' } }, ...headerDocs },
        },
        '400': {
          description: 'Malformed HTTP (BAD_REQUEST: e.g. a missing or invalid Host header)',
          headers: earlyHeaderDocs,
          content: ERROR_BODY,
        },
        '403': { description: CORS_REFUSAL, headers: headerDocs, content: ERROR_BODY },
        '417': {
          description: 'An Expect header other than 100-continue (EXPECTATION_FAILED)',
          headers: earlyHeaderDocs,
          content: ERROR_BODY,
        },
        '431': {
          description: 'Request headers larger than allowed (HEADERS_TOO_LARGE)',
          headers: earlyHeaderDocs,
          content: ERROR_BODY,
        },
        '410': {
          description: 'Past the sunset (SUNSET)',
          headers: headerDocs,
          content: ERROR_BODY,
        },
        // Like every path, it counts against the per-IP ceiling of its category (general).
        '429': {
          description: 'Rate limit exceeded (RATE_LIMITED: the per-IP ceiling); see Retry-After',
          headers: headerDocs,
          content: ERROR_BODY,
        },
        '500': { description: 'Unexpected error (INTERNAL)', content: ERROR_BODY },
        '503': {
          description: 'Shutting down (SERVICE_UNAVAILABLE); see Retry-After',
          content: ERROR_BODY,
        },
      },
    },
  };
}

/**
 * A request body named by a component schema (a class DTO) takes no other field: the validation
 * pipe refuses unknown ones (400 "property x should not exist"), as the inline order schemas say.
 */
function closeBodySchema(op: Obj, schemas: Record<string, Obj>): void {
  const ref = ((op.requestBody as Obj | undefined)?.content as Obj | undefined)?.[
    'application/json'
  ] as Obj | undefined;
  const name = /^#\/components\/schemas\/(.+)$/.exec(String((ref?.schema as Obj)?.$ref ?? ''));
  const schema = name === null ? undefined : schemas[name[1]];
  if (schema !== undefined && schema.additionalProperties === undefined) {
    schema.additionalProperties = false;
  }
}

/**
 * An empty query value (`?limit=`) is refused on every operation the pipeline checks the query of
 * (all but the public reads): a string parameter says so with minLength 1.
 */
function refuseEmptyQueryValues(op: Obj): void {
  for (const p of (op.parameters ?? []) as Obj[]) {
    const schema = p.schema as Obj | undefined;
    if (p.in === 'query' && schema?.type === 'string' && schema.minLength === undefined) {
      schema.minLength = 1;
    }
  }
}
