import { applyDecorators, HttpCode, type Type } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { recordEndpointSite } from '../../modules/cluster/world-bound.js';
import { ApiExtension, ApiOperation, ApiResponse } from '@nestjs/swagger';
import { ErrorResponseDto } from './error-response.dto.js';
import { documentedCodes } from './documented-codes.js';
import { STABLE, type Lifecycle } from './lifecycle.js';
import {
  ROUTE_META_KEY,
  type AuthMode,
  type EnvironmentRule,
  type RouteMeta,
} from './route-meta.js';
import { isWriteScope, type Scope } from './scopes.js';

export interface EndpointOptions {
  summary: string;
  description?: string;
  auth: AuthMode;
  scopes?: Scope[];
  lifecycle?: Lifecycle;
  environment?: EnvironmentRule;
  routeLimitPerMinute?: number;
  /** See {@link RouteMeta.routeLimitGroup}. */
  routeLimitGroup?: string;
  /** See {@link RouteMeta.routeLimitPer}. */
  routeLimitPer?: 'credential' | 'user';
  ipCharge?: 'request' | 'legs';
  /** See {@link RouteMeta.apiKeyOnly}. */
  apiKeyOnly?: boolean;
  /** The success response. */
  status?: number;
  type?: Type | [Type];
  schema?: Record<string, unknown>;
  responseDescription?: string;
  /** Error statuses this operation can answer beyond the ones every operation shares. */
  errors?: number[];
  /** The operation's own `error.code` values per status, named in the response descriptions. */
  codes?: Partial<Record<number, string[]>>;
  /** Extra non-error responses, e.g. 304 or 308. */
  otherResponses?: { status: number; description: string }[];
}

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid request (VALIDATION_FAILED, MALFORMED_JSON), or malformed HTTP (BAD_REQUEST: e.g. a missing or invalid Host header, a bad Transfer-Encoding); the connection closes after a BAD_REQUEST',
  401: 'Missing, unknown, revoked or expired credential; bad, missing, stale or replayed signature',
  403: 'Credential not allowed here (INSUFFICIENT_SCOPE, TEST_KEY_LIVE_ENDPOINT, SANDBOX_DISABLED, CORS_ORIGIN_REJECTED, LIVE_KEY_EXPLORER: a live key on a request marked Svc-Client: api-explorer, ...)',
  404: 'No such resource (NOT_FOUND)',
  409: 'Conflict with the current state',
  410: 'Operation past its sunset date (SUNSET)',
  413: 'Request body too large (PAYLOAD_TOO_LARGE)',
  415: 'Unsupported Content-Type (UNSUPPORTED_MEDIA_TYPE)',
  416: 'Range not satisfiable (RANGE_NOT_SATISFIABLE); Content-Range names the size',
  417: 'An Expect header other than 100-continue (EXPECTATION_FAILED); the connection closes',
  422: 'Request understood but refused by a business rule',
  429: 'Rate limit or quota exceeded (RATE_LIMITED, QUOTA_EXCEEDED); see Retry-After',
  431: 'Request headers (the request line included) larger than allowed (HEADERS_TOO_LARGE); the connection closes',
  500: 'Unexpected error (INTERNAL)',
  503: 'Shutting down or not ready (SERVICE_UNAVAILABLE); see Retry-After',
};

/** The 403 of a public operation: it takes no credential, but refuses one from a foreign origin. */
export const CORS_REFUSAL =
  'CORS_ORIGIN_REJECTED: a request carrying X-API-Key, Authorization or a cookie from an Origin that is not first-party; LIVE_KEY_EXPLORER: a live key on a request marked Svc-Client: api-explorer';

/**
 * What every sandbox-only operation's description opens with, written from the rule the pipeline
 * applies to `environment: 'sandbox-only'` (so the text cannot drift from it).
 */
const SANDBOX_ONLY_NOTE =
  'Sandbox control: test keys only (a live key gets 403 LIVE_KEY_SANDBOX_ENDPOINT; with the sandbox off, 403 SANDBOX_DISABLED).';

/** The description as documented: a sandbox-only operation's opens with {@link SANDBOX_ONLY_NOTE}. */
function describedAs(opts: EndpointOptions): string | undefined {
  if (opts.environment !== 'sandbox-only') return opts.description;
  return opts.description === undefined
    ? SANDBOX_ONLY_NOTE
    : `${SANDBOX_ONLY_NOTE} ${opts.description}`;
}

/**
 * The one decorator every route carries: it states the operation's summary, who may call it, its
 * scopes, lifecycle, engine rule and per-route limit. The same facts drive the request pipeline
 * (through Fastify's route config) and the OpenAPI document (x-auth, x-required-scopes,
 * x-lifecycle, x-rate-limit, deprecated, error responses).
 */
export function Endpoint(opts: EndpointOptions): MethodDecorator {
  const lifecycle = opts.lifecycle ?? STABLE;
  const meta: RouteMeta = {
    auth: opts.auth,
    scopes: opts.scopes ?? [],
    lifecycle,
    environment: opts.environment ?? 'any',
    routeLimitPerMinute: opts.routeLimitPerMinute,
    routeLimitGroup: opts.routeLimitGroup,
    ...(opts.routeLimitPer === 'user' ? { routeLimitPer: 'user' as const } : {}),
    ipCharge: opts.ipCharge,
    ...(opts.apiKeyOnly === true ? { apiKeyOnly: true } : {}),
  };
  const status = opts.status ?? 200;
  // Every operation may answer 503 while the service shuts down (Retry-After: 1).
  // Every operation refuses a credentialed request from a foreign origin (403), public ones too.
  // Malformed HTTP (400), an unmet Expect (417) and oversized headers (431) are answered before
  // routing, so every operation may answer them too.
  const errorStatuses = new Set<number>([
    400,
    403,
    417,
    429,
    431,
    500,
    503,
    ...(opts.errors ?? []),
  ]);
  if (opts.auth !== 'public') errorStatuses.add(401);
  if (lifecycle.state === 'DEPRECATED' && lifecycle.sunsetOn !== undefined) errorStatuses.add(410);

  const decorators: (MethodDecorator | ClassDecorator)[] = [
    RouteConfig({ [ROUTE_META_KEY]: meta }),
    (target: object, method: string | symbol) =>
      recordEndpointSite(meta, { controller: target.constructor as never, method }),
    HttpCode(status),
    ApiOperation({
      summary: opts.summary,
      description: describedAs(opts),
      deprecated: lifecycle.state === 'DEPRECATED' ? true : undefined,
    }),
    ApiExtension('x-auth', opts.auth),
    ApiExtension('x-required-scopes', meta.scopes),
    ApiExtension('x-lifecycle', lifecycle.state),
    ApiExtension('x-environment', meta.environment),
    ...(opts.apiKeyOnly === true ? [ApiExtension('x-api-key-only', true)] : []),
    ApiResponse({
      status,
      description: opts.responseDescription ?? 'Success',
      ...(opts.type !== undefined ? { type: opts.type } : {}),
      ...(opts.schema !== undefined ? { schema: opts.schema } : {}),
    }),
  ];
  if (lifecycle.state === 'DEPRECATED') {
    decorators.push(
      ApiExtension('x-deprecation', {
        deprecated_on: lifecycle.deprecatedOn ?? null,
        sunset_on: lifecycle.sunsetOn ?? null,
        successor: lifecycle.successor ?? null,
      }),
    );
  }
  if (opts.routeLimitPerMinute !== undefined) {
    decorators.push(
      ApiExtension('x-rate-limit', {
        requests: opts.routeLimitPerMinute,
        window_seconds: 60,
        ...(opts.routeLimitGroup !== undefined ? { shared_with: opts.routeLimitGroup } : {}),
        ...(opts.routeLimitPer === 'user' ? { per: 'user' } : {}),
      }),
    );
  }
  for (const r of opts.otherResponses ?? []) {
    decorators.push(ApiResponse({ status: r.status, description: r.description }));
  }
  const sessionWrites =
    opts.apiKeyOnly !== true &&
    meta.environment !== 'sandbox-only' &&
    meta.scopes.some(isWriteScope);
  const descriptions = new Map<number, string>();
  for (const s of [...errorStatuses].sort()) {
    const base =
      s === 403 && opts.auth === 'public'
        ? CORS_REFUSAL
        : s === 403 && sessionWrites
          ? 'Credential not allowed here (INSUFFICIENT_SCOPE, EMAIL_NOT_VERIFIED: a session of a user whose email is not verified, TEST_KEY_LIVE_ENDPOINT, SANDBOX_DISABLED, CORS_ORIGIN_REJECTED, LIVE_KEY_EXPLORER: a live key on a request marked Svc-Client: api-explorer, ...)'
          : (ERROR_TEXT[s] ?? 'Error');
    const own = [
      ...(opts.codes?.[s] ?? []),
      ...(s === 403 && opts.auth === 'session' ? ['SESSION_REQUIRED (an API key was sent)'] : []),
      ...(s === 403 && opts.apiKeyOnly === true ? ['API_KEY_REQUIRED (a session was sent)'] : []),
    ];
    const description = own.length > 0 ? `${base}; also ${own.join(', ')}` : base;
    decorators.push(ApiResponse({ status: s, description, type: ErrorResponseDto }));
    descriptions.set(s, description);
  }
  // The same texts, as the machine-readable list of codes the operation may answer.
  decorators.push(ApiExtension('x-error-codes', documentedCodes(descriptions)));
  return applyDecorators(...decorators);
}
