import { HttpException } from '@nestjs/common';
import { DomainError, validationDetails } from './domain-error.js';
import { statusOf, type ErrorCode } from './error-codes.js';

/** The contract's error body. */
export interface ErrorBody {
  error: {
    code: string;
    message: string;
    status: number;
    request_id: string;
    details: Record<string, unknown>;
  };
}

export interface MappedError {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
  /** True when the error is unexpected and must be logged with its stack. */
  unexpected: boolean;
}

const GENERIC_BY_STATUS: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  410: 'SUNSET',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  503: 'SERVICE_UNAVAILABLE',
};

/**
 * Fastify's own errors (URL, body parsing, content type, size) and Node's HTTP parser errors, by
 * their `code`.
 */
const FASTIFY_CODES: Record<string, [ErrorCode, string]> = {
  FST_ERR_BAD_URL: ['BAD_REQUEST', 'The URL is not valid (malformed percent-encoding)'],
  // An over-long path parameter cannot be the id of anything.
  FST_ERR_MAX_PARAM_LENGTH: ['NOT_FOUND', 'No such resource'],
  HPE_HEADER_OVERFLOW: ['HEADERS_TOO_LARGE', 'Request headers are larger than allowed'],
  ERR_HTTP_REQUEST_TIMEOUT: ['REQUEST_TIMEOUT', 'The request was not received in time'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['PAYLOAD_TOO_LARGE', 'Request body is larger than allowed'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [
    'UNSUPPORTED_MEDIA_TYPE',
    'Unsupported Content-Type: send the body as JSON with Content-Type: application/json',
  ],
  FST_ERR_CTP_EMPTY_JSON_BODY: [
    'MALFORMED_JSON',
    'Body is empty but Content-Type is application/json',
  ],
  FST_ERR_CTP_INVALID_JSON_BODY: ['MALFORMED_JSON', 'Request body is not valid JSON'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [
    'BAD_REQUEST',
    'Content-Length does not match the body sent',
  ],
  FST_ERR_CTP_INVALID_TYPE: [
    'UNSUPPORTED_MEDIA_TYPE',
    'Content-Type header is not valid: send Content-Type: application/json',
  ],
};

/**
 * What a 415 for the body's media type tells the client: the one type taken, in the body and in
 * Accept (RFC 9110 15.5.16: Accept in a 415 names the media types that would have been taken).
 */
export const JSON_ONLY = {
  details: { accepted_media_types: ['application/json'] },
  headers: { Accept: 'application/json' },
} as const;

function body(
  code: string,
  message: string,
  status: number,
  requestId: string,
  details: Record<string, unknown>,
): ErrorBody {
  return { error: { code, message, status, request_id: requestId, details } };
}

interface FastifyLikeError {
  code?: unknown;
  statusCode?: unknown;
  message?: unknown;
}

/** The credentials the API takes: an API key in X-API-Key, or a first-party session token. */
export const CHALLENGES = 'ApiKey realm="api", Bearer realm="api"';

/**
 * Maps anything thrown while serving a request to the contract's error body. This is the one
 * place where errors become HTTP; an unexpected error becomes 500 INTERNAL with nothing of its
 * message or stack in the body.
 */
export function mapError(err: unknown, requestId: string): MappedError {
  if (err instanceof DomainError) {
    return {
      status: err.status,
      body: body(err.code, err.message, err.status, requestId, err.details),
      // RFC 9110 15.5.2: a 401 names the ways to authenticate.
      headers:
        err.status === 401 ? { 'WWW-Authenticate': CHALLENGES, ...err.headers } : err.headers,
      unexpected: false,
    };
  }
  if (err instanceof HttpException) {
    const status = err.getStatus();
    const code = GENERIC_BY_STATUS[status];
    // Fastify's refusal of a body media type reaches here as an HttpException (415).
    if (status === 415) {
      return {
        status,
        body: body(code!, FASTIFY_CODES.FST_ERR_CTP_INVALID_MEDIA_TYPE[1], status, requestId, {
          ...JSON_ONLY.details,
        }),
        headers: { ...JSON_ONLY.headers },
        unexpected: false,
      };
    }
    if (code !== undefined) {
      const message = status === 404 ? 'No such route' : safeMessage(err.message, status);
      return {
        status,
        body: body(code, message, status, requestId, {}),
        headers: {},
        unexpected: false,
      };
    }
  }
  const fe = (err ?? {}) as FastifyLikeError;
  if (
    fe.code === 'FST_ERR_VALIDATION' &&
    Array.isArray((err as { validation?: unknown }).validation)
  ) {
    const v = validationDetails(schemaFields((err as { validation: AjvError[] }).validation));
    return {
      status: 400,
      body: body('VALIDATION_FAILED', v.message, 400, requestId, v.details),
      headers: {},
      unexpected: false,
    };
  }
  if (typeof fe.code === 'string' && Object.hasOwn(FASTIFY_CODES, fe.code)) {
    const [code, message] = FASTIFY_CODES[fe.code];
    const status = statusOf(code);
    const mediaType = code === 'UNSUPPORTED_MEDIA_TYPE';
    return {
      status,
      body: body(code, message, status, requestId, mediaType ? { ...JSON_ONLY.details } : {}),
      headers: mediaType ? { ...JSON_ONLY.headers } : {},
      unexpected: false,
    };
  }
  // Fastify reports JSON syntax errors as a SyntaxError carrying statusCode 400.
  if (err instanceof SyntaxError && fe.statusCode === 400) {
    return {
      status: 400,
      body: body('MALFORMED_JSON', 'Request body is not valid JSON', 400, requestId, {}),
      headers: {},
      unexpected: false,
    };
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    // A client error without a code of its own is BAD_REQUEST, with that code's status (400), so
    // a code always comes with the status the registry gives it.
    const code = GENERIC_BY_STATUS[fe.statusCode] ?? 'BAD_REQUEST';
    const status = statusOf(code);
    return {
      status,
      body: body(code, safeMessage(String(fe.message ?? ''), status), status, requestId, {}),
      headers: {},
      unexpected: false,
    };
  }
  return {
    status: 500,
    body: body(
      'INTERNAL',
      'Internal error; quote the request_id when reporting it',
      500,
      requestId,
      {},
    ),
    headers: {},
    unexpected: true,
  };
}

export interface AjvError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** Fastify's schema errors (ajv) as the contract's `details.fields`: `orders[0].price`. */
export function schemaFields(errors: AjvError[]): { field: string; message: string }[] {
  return errors.map((e) => {
    let path = (e.instancePath ?? '')
      .split('/')
      .filter((p) => p !== '')
      .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
      .join('')
      .replace(/^\./, '');
    const params = e.params ?? {};
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required' && typeof params.missingProperty === 'string') {
      path = path === '' ? params.missingProperty : `${path}.${params.missingProperty}`;
      message = 'is required';
    } else if (
      e.keyword === 'additionalProperties' &&
      typeof params.additionalProperty === 'string'
    ) {
      path = path === '' ? params.additionalProperty : `${path}.${params.additionalProperty}`;
      message = 'is not a known field';
    } else if (e.keyword === 'enum' && Array.isArray(params.allowedValues)) {
      message = `must be one of ${params.allowedValues.join(', ')}`;
    }
    return { field: path === '' ? 'body' : path, message };
  });
}

/** Client-error messages from libraries are short and safe; anything odd gets a generic text. */
function safeMessage(message: string, status: number): string {
  if (message.length > 0 && message.length <= 200 && !message.includes('\n')) return message;
  return `Request failed with status ${status}`;
}
